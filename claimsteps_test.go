package gengate_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// savesCounted is the real store with its SaveStep calls counted.
type savesCounted struct {
	*sqlstore.DB
	saves atomic.Int64
}

func (s *savesCounted) SaveStep(ctx context.Context, t *gengate.Task, release bool) error {
	s.saves.Add(1)
	return s.DB.SaveStep(ctx, t, release)
}

// TestClaimDueCheckpointsSubmit: the workers' claim writes the submitting
// checkpoint with the lease (gengate.StepClaimer), so a submit step makes
// no write of its own before it calls a non-repeatable engine, and the
// engine is called with the checkpoint already stored. A worker that dies
// after such a claim leaves the task in submitting: it is never submitted
// again and goes to review, as after a death mid-submit.
func TestClaimDueCheckpointsSubmit(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		up := &upstream{}
		d := newDomain(t, dialect, up)
		store := &savesCounted{DB: d.store}
		d.svc.Store = store
		up.submit = func(job gengate.Job) (gengate.Progress, error) {
			if got := d.task(job.TaskID); got.Status != gengate.StatusSubmitting {
				t.Errorf("engine called with the task stored as %s; want submitting", got.Status)
			}
			if n := store.saves.Load(); n != 0 {
				t.Errorf("%d writes between the claim and the engine's submit; want none", n)
			}
			return gengate.Progress{UpstreamID: "up-" + job.TaskID, RetryAfter: time.Second}, nil
		}
		task := d.generate("a cat", "")
		claimed, err := d.svc.ClaimDue(ctx, 4)
		if err != nil || len(claimed) != 1 || claimed[0].ID != task.ID {
			t.Fatalf("ClaimDue = %v, %v; want the task", claimed, err)
		}
		if err := d.svc.Step(ctx, claimed[0]); err != nil {
			t.Fatal(err)
		}
		if s, _ := up.calls(); s != 1 {
			t.Fatalf("%d submits, want 1", s)
		}
		if got := d.task(task.ID); got.Status != gengate.StatusRunning || got.UpstreamID != "up-"+task.ID {
			t.Errorf("after the submit step: %s, upstream %q; want running with the upstream id", got.Status, got.UpstreamID)
		}

		// A worker claims the next task and dies before its step.
		dead := d.generate("a dog", "")
		claimed, err = d.svc.ClaimDue(ctx, 4)
		if err != nil || len(claimed) != 1 || claimed[0].ID != dead.ID {
			t.Fatalf("ClaimDue = %v, %v; want the second task", claimed, err)
		}
		d.clock.Add(testLease + time.Second)
		for d.runNext() {
		}
		if s, _ := up.calls(); s != 1 {
			t.Errorf("%d submits; the dead worker's task must not be submitted again", s)
		}
		d.wantState(dead.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 92, 0)
	})
}
