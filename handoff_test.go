package gengate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// slotsHandoff is a gengate.Handoff of free slots that records what the
// service hands it, and runs nothing itself.
type slotsHandoff struct {
	mu       sync.Mutex
	free     int
	released int
	started  []*gengate.Task
}

func (h *slotsHandoff) Reserve() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.free == 0 {
		return false
	}
	h.free--
	return true
}

func (h *slotsHandoff) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.free++
	h.released++
}

func (h *slotsHandoff) Start(t *gengate.Task) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = append(h.started, t)
}

// TestCreationHandsOverToAFreeSlot: with a free step slot, a task is
// created already claimed (handoff.go), on both databases: stored in
// submitting under this process's
// lease, answered as queued, handed to the slot as a claim would return
// it, and no claim takes it; its step writes nothing before the engine's
// submit. Without a free slot the task is created queued and claimed as
// before. A refused creation gives its slot back. A process that dies
// after the creation, before the step, leaves a task that is never
// submitted again: it goes to review once the lease has run out, as
// after a death mid-submit.
func TestCreationHandsOverToAFreeSlot(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		up := &upstream{}
		d := newDomain(t, dialect, up)
		store := &savesCounted{DB: d.store}
		d.svc.Store = store
		h := &slotsHandoff{free: 2}
		d.svc.Handoff = h
		var stepBegan atomic.Int64 // the writes counted when the step began
		up.submit = func(job gengate.Job) (gengate.Progress, error) {
			if n := store.saves.Load() - stepBegan.Load(); n != 0 {
				t.Errorf("%d writes between the step's start and the engine's submit; want none", n)
			}
			return gengate.Progress{UpstreamID: "up-" + job.TaskID, RetryAfter: time.Second}, nil
		}

		task := d.generate("a cat", "")
		if task.Status != gengate.StatusQueued {
			t.Errorf("answered as %s; want queued", task.Status)
		}
		if len(h.started) != 1 {
			t.Fatalf("%d tasks handed over; want 1", len(h.started))
		}
		w := h.started[0]
		if w.ID != task.ID || w.Status != gengate.StatusQueued || !w.Checkpointed || w.LeaseToken == "" || w.Attempts != 1 {
			t.Errorf("handed over %s: status %s, checkpointed %v, lease %q, attempts %d; want the task as a claim returns it",
				w.ID, w.Status, w.Checkpointed, w.LeaseToken, w.Attempts)
		}
		if got := d.task(task.ID); got.Status != gengate.StatusSubmitting || got.LeaseToken != w.LeaseToken {
			t.Errorf("stored as %s, lease %q; want submitting under the handed-over lease %q", got.Status, got.LeaseToken, w.LeaseToken)
		}
		if claimed, err := d.svc.ClaimDue(ctx, 4); err != nil || len(claimed) != 0 {
			t.Errorf("ClaimDue = %d tasks, %v; want none: the task's lease is held", len(claimed), err)
		}
		stepBegan.Store(store.saves.Load())
		if err := d.svc.Step(ctx, w); err != nil {
			t.Fatal(err)
		}
		if s, _ := up.calls(); s != 1 {
			t.Fatalf("%d submits, want 1", s)
		}
		if got := d.task(task.ID); got.Status != gengate.StatusRunning || got.UpstreamID != "up-"+task.ID {
			t.Errorf("after the submit step: %s, upstream %q; want running with the upstream id", got.Status, got.UpstreamID)
		}
		h.Release() // the step has returned: its slot is free again

		// No free slot: created queued, claimed as before.
		h.free = 0
		queued := d.generate("a bird", "")
		if got := d.task(queued.ID); got.Status != gengate.StatusQueued || got.LeaseToken != "" {
			t.Errorf("without a free slot: stored as %s, lease %q; want queued", got.Status, got.LeaseToken)
		}
		claimed, err := d.svc.ClaimDue(ctx, 4)
		if err != nil || len(claimed) != 1 || claimed[0].ID != queued.ID {
			t.Fatalf("ClaimDue = %v, %v; want the queued task", claimed, err)
		}
		stepBegan.Store(store.saves.Load())
		if err := d.svc.Step(ctx, claimed[0]); err != nil {
			t.Fatal(err)
		}

		// A refused creation gives its slot back.
		h.free, h.released = 1, 0
		poor, poorKey := d.account(1)
		if _, err := d.svc.Generate(ctx, poorKey, []byte(`{"type":"image","modelId":"flux","prompt":"a fox"}`), ""); gengate.ErrorCode(err) != gengate.EInsufficient {
			t.Fatalf("Generate for account %s with 1 credit: %v; want %s", poor, err, gengate.EInsufficient)
		}
		if h.released != 1 || h.free != 1 || len(h.started) != 1 {
			t.Errorf("after a refused creation: %d released, %d free, %d handed over; want the slot given back", h.released, h.free, len(h.started))
		}

		// The process dies after the creation, before the step.
		dead := d.generate("a dog", "")
		if len(h.started) != 2 || h.started[1].ID != dead.ID {
			t.Fatalf("the task was not handed over")
		}
		d.clock.Add(testLease + time.Second)
		for d.runNext() {
		}
		if s, _ := up.calls(); s != 2 {
			t.Errorf("%d submits; want 2: the dead process's task must never be submitted", s)
		}
		d.wantState(dead.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 88, 0)
	})
}
