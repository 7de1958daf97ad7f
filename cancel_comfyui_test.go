package gengate_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/comfyui"
	"github.com/gengate/gengate/internal/engine/comfyui/comfyuitest"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestCancelComfyUI: the cancel rules of docs/api.md with the strict
// ComfyUI fake, on both databases: a prompt still waiting in ComfyUI's
// queue is deleted from it and confirmed gone (no GPU time spent), so
// the task is canceled and refunded in full; the prompt that runs is
// interrupted, canceled, and not refunded; each upstream call is made
// once.
func TestCancelComfyUI(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			f := comfyuitest.New(t)
			d := newEngineDomain(t, dialect, map[string]gengate.Engine{
				"comfyui": comfyui.New(comfyui.Config{APIKey: f.Key(), BaseURL: f.URL(), AllowPrivateOutputs: true}),
			})
			d.svc.ProvidersConfigured = true
			f.Hold() // the first prompt runs and holds; the next waits behind it
			running := d.generateModel("image", "flux-schnell")
			d.runNext()
			d.step(running.ID) // its first check finds it running, held
			pending := d.generateModel("image", "flux-schnell")
			d.runNext()
			for _, id := range []string{running.ID, pending.ID} {
				if got := d.task(id); got.Status != gengate.StatusRunning || got.Engine != "comfyui" {
					t.Fatalf("task is %s on %s, want running on comfyui", got.Status, got.Engine)
				}
			}
			price := 100 - d.balance()
			if price <= 0 || price%2 != 0 {
				t.Fatalf("two tasks cost %d credits", price)
			}

			if _, err := d.svc.Cancel(ctx, d.acct, pending.ID); err != nil {
				t.Fatalf("cancel of the queued prompt: %v", err)
			}
			d.wantState(pending.ID, gengate.StatusCanceled, "", 100-price/2, 1)
			if _, err := d.svc.Cancel(ctx, d.acct, running.ID); err != nil {
				t.Fatalf("cancel of the running prompt: %v", err)
			}
			d.wantState(running.ID, gengate.StatusCanceled, "", 100-price/2, 0)
			if f.Deletes() != 1 || f.Interrupts() != 1 {
				t.Errorf("ComfyUI saw %d queue deletes and %d interrupts, want 1 and 1", f.Deletes(), f.Interrupts())
			}
			// Canceled is final: a second cancel answers the task as it is
			// and changes nothing.
			if again, err := d.svc.Cancel(ctx, d.acct, pending.ID); err != nil || again.Task.Status != gengate.StatusCanceled {
				t.Errorf("a second cancel answered %+v, %v; want the canceled task", again, err)
			}
			d.wantState(pending.ID, gengate.StatusCanceled, "", 100-price/2, 1)
		})
	}
}
