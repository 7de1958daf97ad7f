package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// The tests of this file run a binary built with -tags bench
// (benchBinary), so that the default "go test ./..." runs the harness
// while the default build leaves it out (TestDefaultBuildHasNoBench).

// TestBenchSubmit runs "gengate bench submit" briefly on both databases,
// with a small --preload: both servers answer, every answer is a 202, and
// a ratio and the flat cost are reported.
func TestBenchSubmit(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			_, dbURL, _ := crashSetup(t, dialect, "0", "20s")
			out, err := exec.Command(benchBinary(t), "bench", "submit", "--clients", "2", "--duration", "300ms",
				"--preload", "40", "--database", dbURL, "--data", t.TempDir()).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !regexp.MustCompile(`flat cost: \d+\.\d+ of the best round's rate with 40 more tasks`).Match(out) {
				t.Errorf("no flat cost in\n%s", out)
			}
			for _, target := range []string{"gengate #1", `\+40 tasks`, "bare"} {
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
			// Whether a round is steady depends on the machine's load, which
			// the test does not control; either way the ratio line says.
			if !regexp.MustCompile(`ratio gengate/bare: (\d+\.\d+|none claimed, no round was steady \(best unsteady round: \d+\.\d+)`).Match(out) {
				t.Errorf("no ratio in\n%s", out)
			}
			// The server under test runs serve's defaults but for what the
			// bench must set, and says so; each round says how many tasks
			// the workers stepped, and whether it was steady.
			if !regexp.MustCompile(`(?m)^gengate under test: serve --sandbox-delay \S+ --admin-addr 127\.0\.0\.1:0 \(every other setting at serve's default\)$`).Match(out) {
				t.Errorf("the heading does not give the server's command line, or it sets more than the bench needs:\n%s", out)
			}
			if !regexp.MustCompile(`(?m)^  tasks: [1-9]\d* submitted, -?\d+ stepped; waiting for a worker \d+ before, \d+ after: (steady|NOT STEADY)`).Match(out) {
				t.Errorf("no tasks stepped line in\n%s", out)
			}
			// On SQLite each round reports where the writes' time went.
			stages := regexp.MustCompile(`(?m)^  writer p50/p99: queue [≤>]\S+/[≤>]\S+ \(mean \S+\), .*total [≤>]\S+/[≤>]\S+ \(mean \S+\)`).Match(out)
			if stages != (dialect == "sqlite") {
				t.Errorf("writer stages printed: %v, want %v on %s\n%s", stages, dialect == "sqlite", dialect, out)
			}
			load := regexp.MustCompile(`(?m)^  SQLite writer: busy \d+% of the run, [1-9]\d*\.\d+ writes and \d+\.\d+ batches per submit`).Match(out)
			if load != (dialect == "sqlite") {
				t.Errorf("writer load printed: %v, want %v on %s\n%s", load, dialect == "sqlite", dialect, out)
			}
		})
	}
}

// TestBenchWaiters runs "gengate bench waiters" with a few calls: it
// reports the server's memory while they wait, and every call answered 200.
func TestBenchWaiters(t *testing.T) {
	out, err := exec.Command(benchBinary(t), "bench", "waiters", "--count", "20", "--sandbox-delay", "1s",
		"--data", t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !regexp.MustCompile(`server RSS [1-9]\d* MB \(idle \d+ MB\), [\d.]+ KB per waiter`).Match(out) {
		t.Errorf("no memory figures in\n%s", out)
	}
	if !regexp.MustCompile(`answered: 20 with 200, 0 otherwise`).Match(out) {
		t.Errorf("not every call answered 200:\n%s", out)
	}
}

// TestBenchE2E runs "gengate bench e2e" with a few tasks on both
// databases: every task went through the fake fal queue and succeeded,
// the direct run too, and the ratio is reported.
func TestBenchE2E(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			_, dbURL, _ := crashSetup(t, dialect, "0", "20s")
			out, err := exec.Command(benchBinary(t), "bench", "e2e", "--clients", "2", "--tasks", "12",
				"--database", dbURL, "--data", t.TempDir()).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for target, row := range map[string]string{ // tasks/s, [submitted,] finished, ok, errors
				"gengate": `(?m)^gengate\s+\d+\s+\S+\s+\S+\s+(\d+)\s+(\d+)`,
				"direct":  `(?m)^direct\s+\d+\s+\S+\s+(\d+)\s+(\d+)`,
			} {
				m := regexp.MustCompile(row).FindSubmatch(out)
				if m == nil {
					t.Fatalf("no %q row in\n%s", target, out)
				}
				if string(m[1]) != "12" || string(m[2]) != "0" {
					t.Errorf("%s: %s succeeded, %s errors, want 12 and 0\n%s", target, m[1], m[2], out)
				}
			}
			if !regexp.MustCompile(`ratio gengate/direct: \d+\.\d+`).Match(out) {
				t.Errorf("no ratio in\n%s", out)
			}
			// The SQLite writer's work, read from the server's /metrics.
			writer := regexp.MustCompile(`SQLite writer: busy \d+% of the run, \d+\.\d+ writes and \d+\.\d+ batches per task`).Match(out)
			if writer != (dialect == "sqlite") {
				t.Errorf("SQLite writer's line shown: %v, want %v\n%s", writer, dialect == "sqlite", out)
			}
		})
	}
}
