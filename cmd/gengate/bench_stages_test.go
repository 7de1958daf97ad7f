//go:build bench

package main

import (
	"strings"
	"testing"
)

// TestPrintStages: the writer's stage quantiles of a round come from the
// difference of two /metrics readings, as the bucket bound they fall under.
func TestPrintStages(t *testing.T) {
	metrics := func(queue [3]int, batches int, sum ...string) string {
		if len(sum) == 0 {
			sum = []string{"1.5"}
		}
		return `# HELP gengate_sqlite_write_seconds ...
gengate_sqlite_write_seconds_bucket{stage="queue",le="5e-05"} ` + itoa(queue[0]) + `
gengate_sqlite_write_seconds_bucket{stage="queue",le="0.0001"} ` + itoa(queue[1]) + `
gengate_sqlite_write_seconds_bucket{stage="queue",le="+Inf"} ` + itoa(queue[2]) + `
gengate_sqlite_write_seconds_sum{stage="queue"} ` + sum[0] + `
gengate_sqlite_batches_total ` + itoa(batches) + "\n"
	}
	for _, tc := range []struct {
		name          string
		before, after string
		want          string
	}{
		{"all fast", metrics([3]int{10, 10, 10}, 1), metrics([3]int{110, 110, 110}, 11),
			"queue ≤50µs/≤50µs"},
		{"a slow tail", metrics([3]int{0, 0, 0}, 0), metrics([3]int{90, 98, 100}, 10),
			"queue ≤50µs/>100µs"},
		{"the mean of the round's writes", metrics([3]int{10, 10, 10}, 1, "1.5"), metrics([3]int{10, 110, 110}, 11, "1.51"),
			"queue ≤100µs/≤100µs (mean 100µs)"},
		{"the earlier round does not count", metrics([3]int{0, 0, 1000}, 0), metrics([3]int{100, 100, 1100}, 1),
			"queue ≤50µs/≤50µs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			printStages(&out, parseStages(strings.NewReader(tc.before)), parseStages(strings.NewReader(tc.after)))
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("printed %q, want it to contain %q", out.String(), tc.want)
			}
		})
	}
	var out strings.Builder
	printStages(&out, parseStages(strings.NewReader("go_goroutines 10\n")), nil)
	if out.Len() != 0 {
		t.Errorf("printed %q without the writer's metrics (PostgreSQL)", out.String())
	}
}

// TestSteadyRound: a round counts toward the ratio only when the queue did
// not grow beyond a snapshot's noise.
func TestSteadyRound(t *testing.T) {
	for _, c := range []struct {
		name                              string
		submitted, before, after, clients int
		want                              bool
	}{
		{"every task stepped", 40000, 3, 5, 16, true},
		{"queue shrank", 40000, 900, 10, 16, true},
		{"in flight at the end, four per client", 100, 0, 64, 16, true},
		{"within 2% of a large round", 40000, 0, 800, 16, true},
		{"two clients, four left", 138, 0, 4, 2, true},
		{"a quarter left queued", 40000, 0, 30000, 16, false},
		{"just over 2%", 40000, 0, 801, 16, false},
		{"small round, more than four per client", 100, 0, 65, 16, false},
	} {
		if got := steadyRound(c.submitted, c.before, c.after, c.clients); got != c.want {
			t.Errorf("%s: steadyRound(%d, %d, %d, %d) = %v, want %v", c.name, c.submitted, c.before, c.after, c.clients, got, c.want)
		}
	}
}
