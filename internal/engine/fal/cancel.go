package fal

import (
	"context"
	"net/http"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.ConfirmingCanceler = (*Engine)(nil)

// CancelWork stops a request a client canceled and says what fal confirms
// (gengate.ConfirmingCanceler). fal bills a request when a runner works on
// it; its cancel says which happened (https://fal.ai/docs/inference-api/queue/cancel:
// "If the request is in the queue, fal removes it. If the request is in
// progress, fal sends a cancellation signal to the runner"):
//   - OK: fal removed the request from its queue; it is never processed,
//     nothing is charged (CancelBeforeCharge);
//   - CANCELLATION_REQUESTED after a status read that said IN_QUEUE: taken
//     as before charge too (a request that left the queue between the two
//     calls is the one window in which a refund may follow work fal
//     billed; fal offers no atomic "cancel if queued"); after IN_PROGRESS:
//     the runner is signalled but may have been billed (CancelRequested);
//   - COMPLETED, or the cancel answered 400 ALREADY_COMPLETED: too late
//     (CancelTooLate), the result is delivered.
//
// The status is read first so that a completed request is not cancelled.
func (e *Engine) CancelWork(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Cancellation, error) {
	prefix, err := parseID(upstreamID)
	if err != nil {
		return 0, err
	}
	var st status
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: prefix + "/status"}, &st); err != nil {
		return 0, err
	}
	if st.Status == "COMPLETED" {
		return gengate.CancelTooLate, nil
	}
	c := *e.client
	var failStatus int
	c.Explain = func(s int, body []byte) (string, string) {
		failStatus = s
		return explain(s, body)
	}
	var ans struct {
		Status string `json:"status"`
	}
	err = c.Poll(ctx, upstream.Request{Method: http.MethodPut, Path: prefix + "/cancel"}, &ans)
	switch {
	case err != nil && failStatus == http.StatusBadRequest:
		return gengate.CancelTooLate, nil // ALREADY_COMPLETED
	case err != nil:
		return 0, err
	case ans.Status == "OK":
		return gengate.CancelBeforeCharge, nil // removed from the queue, never processed
	case st.Status == "IN_QUEUE" && ans.Status == "CANCELLATION_REQUESTED":
		return gengate.CancelBeforeCharge, nil
	}
	return gengate.CancelRequested, nil
}

// report is what a status read says of an unfinished request: its place
// in the queue while IN_QUEUE, the status word, and the latest log lines
// (cleaned of secrets). fal gives no percentage.
func (st status) report(c *upstream.Client) *gengate.Report {
	r := &gengate.Report{Status: st.Status}
	if st.Status == "IN_QUEUE" {
		pos := st.QueuePosition
		r.QueuePosition = &pos
	}
	lines := make([]string, 0, len(st.Logs))
	for _, l := range st.Logs {
		lines = append(lines, c.Clean(l.Message))
	}
	r.Logs = gengate.TailLogs(lines)
	return r
}
