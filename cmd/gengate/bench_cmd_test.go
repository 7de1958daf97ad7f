package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestBenchSubmit runs "gengate bench submit" briefly on both databases:
// both servers answer, every answer is a 202, and a ratio is reported.
func TestBenchSubmit(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			_, dbURL, _ := crashSetup(t, dialect, "0", "20s")
			out, err := exec.Command(binary(t), "bench", "submit", "--clients", "2", "--duration", "300ms",
				"--database", dbURL, "--data", t.TempDir()).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, target := range []string{"gengate #1", "bare"} {
				m := regexp.MustCompile(`(?m)^` + target + `\s+(\d+)\s+\S+\s+\S+\s+(\d+)\s+(\d+)`).FindSubmatch(out)
				if m == nil {
					t.Fatalf("no %q row in\n%s", target, out)
				}
				ok, _ := strconv.Atoi(string(m[2]))
				failed, _ := strconv.Atoi(string(m[3]))
				if ok == 0 || failed != 0 {
					t.Errorf("%s: %d accepted, %d errors\n%s", target, ok, failed, out)
				}
			}
			if !regexp.MustCompile(`ratio gengate/bare: \d+\.\d+`).Match(out) {
				t.Errorf("no ratio in\n%s", out)
			}
		})
	}
}
