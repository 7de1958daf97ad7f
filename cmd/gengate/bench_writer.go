package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
)

// benchWriter is the SQLite writer's work as the server's /metrics counts
// it: its batches (gengate_sqlite_batches_total), the writes in them (the
// count of gengate_sqlite_write_seconds{stage="total"}), and the seconds
// it spent running them (gengate_sqlite_writer_busy_seconds_total).
type benchWriter struct{ batches, writes, busy float64 }

// benchWriterWork reads the writer's counters from the child's
// --admin-addr listener; ok is false without one, or when the counters
// cannot be read.
func benchWriterWork(c *benchChild) (w benchWriter, ok bool) {
	if c.admin == "" {
		return w, false
	}
	resp, err := http.Get(c.admin + "/metrics")
	if err != nil {
		return w, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return w, false
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		var p *float64
		switch name {
		case "gengate_sqlite_batches_total":
			p = &w.batches
		case `gengate_sqlite_write_seconds_count{stage="total"}`:
			p = &w.writes
		case "gengate_sqlite_writer_busy_seconds_total":
			p = &w.busy
		}
		if !ok || p == nil {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			*p = v
			found++
		}
	}
	return w, found == 3 && sc.Err() == nil
}
