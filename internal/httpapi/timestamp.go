package httpapi

import (
	"time"

	"github.com/gengate/gengate"
)

// timestamp is t in the one form of a time in every answer
// (gengate.TimeFormat: RFC 3339, UTC, milliseconds).
func timestamp(t time.Time) string { return gengate.FormatTime(t) }
