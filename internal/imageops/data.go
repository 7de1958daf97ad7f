package imageops

import (
	"os"
	"path/filepath"
)

// DataDir finds the public evaluation sets: $GENGATE_EVAL_DATA if set, else
// a "shared/data" directory beside the checkout (../shared/data from the
// repository root), found by walking up from the working directory. The
// sets are research-licensed: tests and benchmarks read them in place and
// nothing from them is ever copied into the project. ok is false when they
// are absent (a user's clone); callers then skip with a message saying so.
func DataDir() (dir string, ok bool) {
	if d := os.Getenv("GENGATE_EVAL_DATA"); d != "" {
		return d, isDir(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if c := filepath.Join(d, "shared", "data"); isDir(c) {
			return c, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
