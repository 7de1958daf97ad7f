package gengate_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// lastWrites is the real store noting, at each write that ends a step
// (a step record releasing its lease, a task's final state), whether the
// step's slot had been released by then.
type lastWrites struct {
	*sqlstore.DB
	released *atomic.Bool
	seen     []bool
}

func (s *lastWrites) SaveStep(ctx context.Context, t *gengate.Task, release bool) error {
	if release {
		s.seen = append(s.seen, s.released.Load())
	}
	return s.DB.SaveStep(ctx, t, release)
}

func (s *lastWrites) FinishTask(ctx context.Context, t *gengate.Task, refund int) error {
	s.seen = append(s.seen, s.released.Load())
	return s.DB.FinishTask(ctx, t, refund)
}

// TestStepReleasesSlotBeforeLastWrite: a step calls its worker's slot
// release (gengate.WithSlotRelease) after its upstream work, outputs
// stored included, and before its last write, so the worker's next claim
// need not wait for that write's commit: a submit step before its record,
// a check that brings outputs before the task's final state. Never before
// the engine is called.
func TestStepReleasesSlotBeforeLastWrite(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		up := &upstream{}
		d := newDomain(t, dialect, up)
		var released atomic.Bool
		store := &lastWrites{DB: d.store, released: &released}
		d.svc.Store = store
		up.submit = func(job gengate.Job) (gengate.Progress, error) {
			if released.Load() {
				t.Error("slot released before the engine's submit")
			}
			return gengate.Progress{UpstreamID: "up-" + job.TaskID}, nil
		}
		up.check = func(job gengate.Job, id string) (gengate.Progress, error) {
			if released.Load() {
				t.Error("slot released before the engine's check")
			}
			return gengate.Progress{Outputs: pngOutputs(job.NumOutputs)}, nil
		}
		task := d.generate("a cat", "")
		for i, want := range []gengate.Status{gengate.StatusRunning, gengate.StatusSucceeded} {
			if i > 0 {
				d.clock.Add(time.Second) // the poll is due
			}
			claimed, err := d.svc.ClaimDue(ctx, 4)
			if err != nil || len(claimed) != 1 {
				t.Fatalf("ClaimDue = %v, %v; want the task", claimed, err)
			}
			released.Store(false)
			var calls atomic.Int64
			stepCtx := gengate.WithSlotRelease(ctx, func() { calls.Add(1); released.Store(true) })
			if err := d.svc.Step(stepCtx, claimed[0]); err != nil {
				t.Fatal(err)
			}
			if got := d.task(task.ID); got.Status != want {
				t.Fatalf("after step %d: %s; want %s", i, got.Status, want)
			}
			if calls.Load() != 1 {
				t.Errorf("step %d released its slot %d times; want once", i, calls.Load())
			}
		}
		if len(store.seen) != 2 || !store.seen[0] || !store.seen[1] {
			t.Errorf("slot released before each step's last write: %v; want [true true]", store.seen)
		}
	})
}
