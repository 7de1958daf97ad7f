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

// benchStages reads the SQLite writer's stage histograms from the
// server's /metrics (gengate_sqlite_write_seconds, cumulative counts by
// bucket bound, per stage) and its batches; nil when it has none (on
// PostgreSQL) or cannot be read.
func benchStages(c *benchChild) *stageCounts {
	if c.admin == "" {
		return nil
	}
	resp, err := http.Get(c.admin + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	return parseStages(resp.Body)
}

// stageCounts are cumulative bucket counts by stage and bound (seconds).
type stageCounts struct {
	buckets map[string]map[float64]float64
	batches float64
}

func parseStages(r io.Reader) *stageCounts {
	sc := &stageCounts{buckets: map[string]map[float64]float64{}}
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		line := lines.Text()
		if v, ok := strings.CutPrefix(line, "gengate_sqlite_batches_total "); ok {
			sc.batches, _ = strconv.ParseFloat(v, 64)
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
		parts = append(parts, fmt.Sprintf("%s %s/%s", stage, q(0.5), q(0.99)))
	}
	if n := after.batches - before.batches; n > 0 && writes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f writes/batch", writes/n))
	}
	fmt.Fprintf(w, "  writer p50/p99: %s\n", strings.Join(parts, ", "))
}

func fmtBound(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Microsecond).String()
}
