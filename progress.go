package gengate

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Report is what an engine learned of unfinished work: its place in the
// upstream's queue, the upstream's own status word, a percentage where the
// upstream gives one, and its latest log lines. The task record shows the
// latest report (GET /api/generation/jobs/{id}, "progress").
type Report struct {
	// QueuePosition is the number of requests ahead in the upstream's
	// queue (0: next); nil when unknown or no longer queued.
	QueuePosition *int `json:"queuePosition,omitempty"`
	// Status is the upstream's status ("IN_QUEUE", "processing").
	Status string `json:"upstreamStatus,omitempty"`
	// Percent is 0–100 where the upstream gives one (a progress bar in
	// its logs); nil otherwise.
	Percent *float64 `json:"percent,omitempty"`
	// Logs are the latest log lines, oldest first, at most MaxReportLogs,
	// each at most MaxReportLogLine bytes.
	Logs []string `json:"logs,omitempty"`
	// At is when the step learned it.
	At time.Time `json:"updatedAt"`
}

// Limits of a stored report.
const (
	MaxReportLogs    = 20
	MaxReportLogLine = 500
)

// TailLogs returns the last MaxReportLogs non-empty lines of lines, each
// cut to MaxReportLogLine bytes (on a rune boundary).
func TailLogs(lines []string) []string {
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < MaxReportLogs; i-- {
		l := strings.TrimRight(lines[i], " \r\t")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > MaxReportLogLine {
			cut := MaxReportLogLine
			for cut > 0 && !utf8Start(l[cut]) {
				cut--
			}
			l = l[:cut]
		}
		out = append(out, l)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// percentRE matches a progress bar's percentage ("45%|████", " 7%").
var percentRE = regexp.MustCompile(`(\d{1,3}(?:\.\d+)?)\s*%`)

// LogPercent reads the percentage of the last progress bar in log lines
// (the tqdm bars Replicate's models print), nil when none.
func LogPercent(lines []string) *float64 {
	for i := len(lines) - 1; i >= 0; i-- {
		m := percentRE.FindAllStringSubmatch(lines[i], -1)
		if len(m) == 0 {
			continue
		}
		f, err := strconv.ParseFloat(m[len(m)-1][1], 64)
		if err != nil || f > 100 {
			continue
		}
		return &f
	}
	return nil
}

// saveReport keeps what a step learned of unfinished work; a failure to
// keep it is logged, never the step's failure.
func (s *Service) saveReport(ctx context.Context, t *Task, r *Report) {
	ps, ok := s.Store.(ProgressStore)
	if !ok || r == nil {
		return
	}
	r.At = s.now()
	if err := ps.SaveProgress(ctx, t.ID, r); err != nil {
		s.log().WarnContext(ctx, "save progress", "jobId", t.ID, "err", err)
	}
}

// Progress returns the latest report of the task, nil when there is none
// (or the store keeps none).
func (s *Service) Progress(ctx context.Context, t *Task) (*Report, error) {
	ps, ok := s.Store.(ProgressStore)
	if !ok {
		return nil, nil
	}
	return ps.FindProgress(ctx, t.ID)
}
