package comfyui

import (
	"context"
	"net/http"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.ConfirmingCanceler = (*Engine)(nil)

// CancelWork stops a prompt a client canceled and says what ComfyUI
// confirms (gengate.ConfirmingCanceler). A self-hosted ComfyUI bills
// nothing itself; what counts is whether the GPU worked on the prompt:
//   - still pending in the queue: it is deleted (POST /queue {"delete"}),
//     and confirmed gone when a second read of the queue no longer has it
//     (CancelBeforeCharge);
//   - unknown to the queue and the history: it never arrived (a submit
//     whose answer was lost) and nothing ran (CancelBeforeCharge);
//   - running: it is interrupted (POST /interrupt); the work done so far
//     is spent (CancelRequested);
//   - in the history: it already finished (CancelTooLate).
func (e *Engine) CancelWork(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Cancellation, error) {
	if !validID(upstreamID) {
		return 0, gengate.Errorf(gengate.EInvalid, "comfyui: malformed upstream id %q", upstreamID)
	}
	st, err := e.find(ctx, upstreamID, false)
	if err != nil {
		return 0, err
	}
	switch {
	case st.done != nil:
		return gengate.CancelTooLate, nil
	case st.running:
		if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/interrupt", JSON: map[string]any{"prompt_id": upstreamID}}, nil); err != nil {
			return 0, err
		}
		return gengate.CancelRequested, nil
	case !st.pending:
		return gengate.CancelBeforeCharge, nil
	}
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/queue", JSON: map[string]any{"delete": []string{upstreamID}}}, nil); err != nil {
		return 0, err
	}
	after, err := e.find(ctx, upstreamID, false)
	if err != nil {
		return 0, err
	}
	switch {
	case after.done != nil:
		return gengate.CancelTooLate, nil
	case after.running: // it left the queue for the GPU first
		if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/interrupt", JSON: map[string]any{"prompt_id": upstreamID}}, nil); err != nil {
			return 0, err
		}
		return gengate.CancelRequested, nil
	case after.pending:
		return 0, &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Message: "comfyui kept the prompt in its queue after the delete"}
	}
	return gengate.CancelBeforeCharge, nil
}

// report is what a queue read says of an unfinished prompt: pending with
// the prompts ahead of it, or running. ComfyUI's HTTP API gives no
// percentage (its websocket does) and no logs.
func (st state) report() *gengate.Report {
	if st.pending {
		ahead := st.ahead
		return &gengate.Report{Status: "pending", QueuePosition: &ahead}
	}
	return &gengate.Report{Status: "running"}
}
