package gengate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/replicate"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestProgressReports: the step that checks upstream work stores what the
// provider said of it, and the task's latest report is what the service
// returns: fal's queue position while queued, then its status and log
// lines; Replicate's status, log lines and the percentage of its progress
// bar.
func TestProgressReports(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect+"/fal", func(t *testing.T) {
			f := faltest.New(t)
			d := newEngineDomain(t, dialect, map[string]gengate.Engine{"fal": fal.New(fal.Config{APIKey: f.Key(), BaseURL: f.URL()})})
			d.svc.ProvidersConfigured = true
			task := d.generate("a cat", "")
			d.runNext()
			if r := d.report(task); r != nil {
				t.Fatalf("a report before any check: %+v", r)
			}
			f.Hold()
			d.step(task.ID)
			r := d.report(task)
			if r == nil || r.Status != "IN_QUEUE" || r.QueuePosition == nil || *r.QueuePosition != 0 || r.Percent != nil || !r.At.Equal(d.clock.Now()) {
				t.Fatalf("queued report: %+v", r)
			}
			// A request a runner works on (the fake completes a released
			// one at once, so another request).
			f.Release()
			f.SetPolls(100)
			task = d.generate("a dog", "")
			d.runNext()
			d.step(task.ID)
			r = d.report(task)
			if r == nil || r.Status != "IN_PROGRESS" || r.QueuePosition != nil || len(r.Logs) != 2 || !strings.Contains(r.Logs[1], "step 14/28") {
				t.Fatalf("running report: %+v", r)
			}
		})
		t.Run(dialect+"/replicate", func(t *testing.T) {
			rs := replicatetest.New(t)
			d := newEngineDomain(t, dialect, map[string]gengate.Engine{"replicate": replicate.New(replicate.Config{APIKey: rs.Key(), BaseURL: rs.URL()})})
			d.svc.ProvidersConfigured = true
			rs.SetPolls(100)
			task := d.generate("a cat", "")
			d.runNext()
			for i, want := range []float64{25, 50} {
				d.step(task.ID)
				r := d.report(task)
				if r == nil || r.Status != "processing" || r.Percent == nil || *r.Percent != want || len(r.Logs) != 3 || r.QueuePosition != nil {
					t.Fatalf("report after check %d: %+v", i+1, r)
				}
			}
		})
	}
}

func (d *domain) report(task *gengate.Task) *gengate.Report {
	d.t.Helper()
	r, err := d.svc.Progress(context.Background(), task)
	if err != nil {
		d.t.Fatal(err)
	}
	return r
}

// TestTailLogsAndPercent: log tails keep the latest lines within the
// limits; the percentage is the last progress bar's.
func TestTailLogsAndPercent(t *testing.T) {
	var many []string
	for i := range 50 {
		many = append(many, strings.Repeat("x", i))
	}
	long := strings.Repeat("é", gengate.MaxReportLogLine)
	for _, c := range []struct {
		name    string
		lines   []string
		tail    []string
		percent float64 // -1: none
	}{
		{"empty", nil, nil, -1},
		{"blank lines dropped", []string{"a", "  ", "", "b "}, []string{"a", "b"}, -1},
		{"last 20", many, many[30:], -1},
		{"bar", []string{" 10%|#", "step", " 45%|####  | 13/28"}, []string{" 10%|#", "step", " 45%|####  | 13/28"}, 45},
		{"over 100 ignored", []string{"50%", "300%"}, []string{"50%", "300%"}, 50},
		{"long line cut on a rune", []string{long}, []string{long[:gengate.MaxReportLogLine]}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := gengate.TailLogs(c.lines)
			if strings.Join(got, "\n") != strings.Join(c.tail, "\n") {
				t.Errorf("TailLogs = %q, want %q", got, c.tail)
			}
			p := gengate.LogPercent(c.lines)
			if (p == nil) != (c.percent < 0) || p != nil && *p != c.percent {
				t.Errorf("LogPercent = %v, want %v", p, c.percent)
			}
		})
	}
}
