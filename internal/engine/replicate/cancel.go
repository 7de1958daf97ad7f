package replicate

import (
	"context"
	"net/http"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.ConfirmingCanceler = (*Engine)(nil)

// CancelWork cancels a prediction a client canceled and says what
// Replicate confirms (gengate.ConfirmingCanceler). Replicate bills the
// time a prediction runs; the cancel answers the prediction:
//   - status "canceled" with no started_at: it never started running,
//     nothing is billed (CancelBeforeCharge);
//   - status "canceled" (or still "starting"/"processing") with a
//     started_at: it ran and the time it ran is billed (CancelRequested);
//   - "succeeded" or "failed": too late (CancelTooLate), the result is
//     delivered as usual.
func (e *Engine) CancelWork(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Cancellation, error) {
	if upstreamID == "" || strings.ContainsAny(upstreamID, "/?#") {
		return 0, gengate.Errorf(gengate.EInvalid, "replicate: malformed upstream id %q", upstreamID)
	}
	var p struct {
		Status    string  `json:"status"`
		StartedAt *string `json:"started_at"`
	}
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/predictions/" + upstreamID + "/cancel"}, &p); err != nil {
		return 0, err
	}
	started := p.StartedAt != nil && *p.StartedAt != ""
	switch {
	case p.Status == "succeeded" || p.Status == "failed":
		return gengate.CancelTooLate, nil
	case p.Status == "canceled" && !started:
		return gengate.CancelBeforeCharge, nil
	}
	return gengate.CancelRequested, nil
}

// report is what a read of an unfinished prediction says: its status, the
// latest log lines (cleaned of secrets) and the percentage of the last
// progress bar in them. Replicate gives no queue position.
func (p prediction) report(c *upstream.Client) *gengate.Report {
	lines := strings.Split(c.Clean(p.Logs), "\n")
	// A progress bar redraws itself with carriage returns: keep its last state.
	for i, l := range lines {
		if j := strings.LastIndex(strings.TrimRight(l, "\r"), "\r"); j >= 0 {
			lines[i] = l[j+1:]
		}
	}
	return &gengate.Report{Status: p.Status, Logs: gengate.TailLogs(lines), Percent: gengate.LogPercent(lines)}
}
