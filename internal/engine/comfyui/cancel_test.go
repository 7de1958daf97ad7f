package comfyui

import (
	"testing"

	"github.com/gengate/gengate"
)

// TestCancelWork: a pending prompt is deleted and confirmed gone (no GPU
// time: refundable), a running one interrupted (not refundable), a
// finished one too late, an unknown one never ran; checks of unfinished
// prompts report their queue place.
func TestCancelWork(t *testing.T) {
	f, e := newEngine(t)
	f.Hold()
	running, pending, lost := imageJob("flux-schnell", "1:1", "png", 1), imageJob("flux-schnell", "1:1", "png", 1), imageJob("flux-schnell", "1:1", "png", 1)
	for _, j := range []gengate.Job{running, pending} {
		if _, err := e.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	p, err := e.Check(ctx, running, running.TaskID) // it runs, held
	if err != nil || p.Report == nil || p.Report.Status != "running" {
		t.Fatalf("running check: %+v %v", p, err)
	}
	st, err := e.queued(ctx, pending.TaskID, false)
	if err != nil || !st.pending {
		t.Fatalf("pending: %+v %v", st, err)
	}
	if r := st.report(); r.Status != "pending" || r.QueuePosition == nil || *r.QueuePosition != 1 {
		t.Fatalf("pending report: %+v", r)
	}
	for _, c := range []struct {
		name string
		job  gengate.Job
		want gengate.Cancellation
	}{
		{"pending", pending, gengate.CancelBeforeCharge},
		{"running", running, gengate.CancelRequested},
		{"never arrived", lost, gengate.CancelBeforeCharge},
	} {
		got, err := e.CancelWork(ctx, c.job, c.job.TaskID)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if f.Deletes() != 1 || f.Interrupts() != 1 {
		t.Errorf("%d deletes, %d interrupts", f.Deletes(), f.Interrupts())
	}
	f.Release()
	done := imageJob("flux-schnell", "1:1", "png", 1)
	if _, err := e.Submit(ctx, done); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if p, err := e.Check(ctx, done, done.TaskID); err == nil && len(p.Outputs) > 0 {
			break
		}
	}
	if got, err := e.CancelWork(ctx, done, done.TaskID); err != nil || got != gengate.CancelTooLate {
		t.Errorf("finished: %v %v", got, err)
	}
}
