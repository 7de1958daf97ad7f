//go:build bench

package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchStages reads the SQLite writer's work from the server's /metrics
// (its --admin-addr listener): the stage histograms
// (gengate_sqlite_write_seconds, cumulative counts by bucket bound, per
// stage), its batches, the writes in them and its busy seconds; nil when
// it has none (on PostgreSQL) or they cannot be read.
func benchStages(c *benchChild) *stageCounts {
	if c.admin == "" {
		return nil
	}
	resp, err := http.Get(c.admin + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	return parseStages(resp.Body)
}

// stageCounts is one reading of the writer's metrics: cumulative bucket
// counts by stage and bound (seconds), and its counters: batches
// (gengate_sqlite_batches_total), writes (the count of the "total"
// stage) and busy seconds (gengate_sqlite_writer_busy_seconds_total).
type stageCounts struct {
	buckets               map[string]map[float64]float64
	sums                  map[string]float64 // seconds, by stage
	batches, writes, busy float64
}

func parseStages(r io.Reader) *stageCounts {
	sc := &stageCounts{buckets: map[string]map[float64]float64{}, sums: map[string]float64{}}
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		line := lines.Text()
		name, value, _ := strings.Cut(line, " ")
		var counter *float64
		switch name {
		case "gengate_sqlite_batches_total":
			counter = &sc.batches
		case `gengate_sqlite_write_seconds_count{stage="total"}`:
			counter = &sc.writes
		case "gengate_sqlite_writer_busy_seconds_total":
			counter = &sc.busy
		}
		if counter != nil {
			*counter, _ = strconv.ParseFloat(value, 64)
			continue
		}
		if rest, ok := strings.CutPrefix(line, `gengate_sqlite_write_seconds_sum{stage="`); ok {
			stage, v, _ := strings.Cut(rest, `"} `)
			sc.sums[stage], _ = strconv.ParseFloat(v, 64)
			continue
		}
		rest, ok := strings.CutPrefix(line, `gengate_sqlite_write_seconds_bucket{stage="`)
		if !ok {
			continue
		}
		stage, rest, _ := strings.Cut(rest, `",le="`)
		le, rest, _ := strings.Cut(rest, `"} `)
		bound, err1 := strconv.ParseFloat(le, 64) // "+Inf" parses as +Inf
		n, err2 := strconv.ParseFloat(rest, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if sc.buckets[stage] == nil {
			sc.buckets[stage] = map[float64]float64{}
		}
		sc.buckets[stage][bound] = n
	}
	if len(sc.buckets) == 0 {
		return nil
	}
	return sc
}

// printStages prints, for the writes between before and after, each
// stage's p50 and p99 as the bucket bound they fall under (the buckets
// grow by √2 from 50µs), and the writes per batch.
func printStages(w io.Writer, before, after *stageCounts) {
	if before == nil || after == nil {
		return
	}
	var parts []string
	var writes float64
	for _, stage := range []string{"queue", "gather", "exec", "commit", "total"} {
		a, b := after.buckets[stage], before.buckets[stage]
		bounds := make([]float64, 0, len(a))
		for le := range a {
			bounds = append(bounds, le)
		}
		slices.Sort(bounds)
		if len(bounds) == 0 {
			continue
		}
		total := a[bounds[len(bounds)-1]] - b[bounds[len(bounds)-1]]
		if stage == "total" {
			writes = total
		}
		q := func(p float64) string {
			for _, le := range bounds {
				if a[le]-b[le] >= p*total {
					if le > 1e9 {
						return ">" + fmtBound(bounds[len(bounds)-2])
					}
					return "≤" + fmtBound(le)
				}
			}
			return "?"
		}
		part := fmt.Sprintf("%s %s/%s", stage, q(0.5), q(0.99))
		if total > 0 {
			part += fmt.Sprintf(" (mean %s)", fmtBound((after.sums[stage]-before.sums[stage])/total))
		}
		parts = append(parts, part)
	}
	if n := after.batches - before.batches; n > 0 && writes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f writes/batch", writes/n))
	}
	fmt.Fprintf(w, "  writer p50/p99: %s\n", strings.Join(parts, ", "))
}

// printWriterLoad prints how busy the SQLite writer was between before
// and after (elapsed apart), and its writes and batches per unit (n of
// them: tasks, submits). The writer commits every write of the server:
// busy near the whole time, it is what the rate waits for.
func printWriterLoad(w io.Writer, before, after *stageCounts, elapsed time.Duration, n int, unit string) {
	if before == nil || after == nil || after.writes <= before.writes || n == 0 {
		return
	}
	writes, batches := after.writes-before.writes, after.batches-before.batches
	fmt.Fprintf(w, "  SQLite writer: busy %.0f%% of the run, %.2f writes and %.2f batches per %s (%.1f writes per batch)\n",
		100*(after.busy-before.busy)/elapsed.Seconds(), writes/float64(n), batches/float64(n), unit, writes/max(batches, 1))
}

func fmtBound(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Microsecond).String()
}
