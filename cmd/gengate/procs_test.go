package main

import (
	"runtime"
	"testing"
)

// TestSetProcs: serve's GOMAXPROCS is --procs when given, the environment's
// GOMAXPROCS when set, else twice the processors on SQLite and the
// processors on PostgreSQL; serving twice in one process does not double
// it twice.
func TestSetProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	pg := "postgres://postgres@127.0.0.1:5432/x"
	for _, tc := range []struct {
		name     string
		procs    int
		database string
		env      string
		want     int
	}{
		{"sqlite", 0, "", "", 2 * startProcs},
		{"sqlite again", 0, "", "", 2 * startProcs},
		{"postgres", 0, pg, "", startProcs},
		{"flag", 3, "", "", 3},
		{"flag over the environment", 5, pg, "7", 5},
		{"environment", 0, "", "7", startProcs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := func(k string) string {
				if k == "GOMAXPROCS" {
					return tc.env
				}
				return ""
			}
			cpus, got := setProcs(&Config{Procs: tc.procs, Database: tc.database}, env)
			if cpus != startProcs || got != tc.want || runtime.GOMAXPROCS(0) != tc.want {
				t.Errorf("setProcs = %d, %d (GOMAXPROCS %d); want %d, %d", cpus, got, runtime.GOMAXPROCS(0), startProcs, tc.want)
			}
		})
	}
}
