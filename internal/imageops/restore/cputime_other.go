//go:build !unix

package restore

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
