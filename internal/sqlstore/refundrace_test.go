package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestFinishTaskRefundRaceAtStore has two finishes that both refund one
// task reach the store at the same moment, the way they meet in a cluster:
// a worker whose lease ran out and the cancel (or the worker) that claimed
// the task after it, or an operator's refund of a task in review. The
// service tests serialise such races before the store (one process, one
// lease); here nothing does, so only the store's guards (the lease in the
// UPDATE's WHERE, and one refund per task in the ledger) stand between the
// account and a second refund. Exactly one finish wins, the other is a
// CONFLICT that changes nothing, and the ledger holds one refund per task
// and sums to the balance.
func TestFinishTaskRefundRaceAtStore(t *testing.T) {
	const rounds, cost, credits = 12, 4, 1000
	ctx := context.Background()

	// Each case readies a task and returns the two finishes that race.
	type finisher func(s *sqlstore.DB, task *gengate.Task) (a, b *gengate.Task)
	failed := func(c *gengate.Task, at time.Time) *gengate.Task {
		f := *c
		f.Status, f.ErrorCode, f.ErrorMessage = gengate.StatusFailed, gengate.EFailed, "failed upstream"
		f.UpdatedAt, f.CompletedAt = at, at
		return &f
	}
	canceled := func(c *gengate.Task, at time.Time) *gengate.Task {
		f := *c
		f.Status, f.ErrorCode, f.ErrorMessage = gengate.StatusCanceled, gengate.CodeCanceledRefunded, "canceled by the caller"
		f.UpdatedAt, f.CompletedAt = at, at
		return &f
	}
	cases := []struct {
		name  string
		held  bool // the task is created held by the review terms
		ready finisher
	}{
		{"stale worker lease vs cancel's claim", false, func(s *sqlstore.DB, task *gengate.Task) (a, b *gengate.Task) {
			stale := mustClaim(t, s, task.ID, t0) // lease until t0+1m, never renewed
			cancel := mustClaim(t, s, task.ID, t0.Add(2*time.Minute))
			if stale.LeaseToken == cancel.LeaseToken {
				t.Fatal("two claims share one lease token")
			}
			return failed(stale, t0.Add(3*time.Minute)), canceled(cancel, t0.Add(3*time.Minute))
		}},
		{"stale worker lease vs the next worker's", false, func(s *sqlstore.DB, task *gengate.Task) (a, b *gengate.Task) {
			stale := mustClaim(t, s, task.ID, t0)
			next := mustClaim(t, s, task.ID, t0.Add(2*time.Minute))
			return failed(stale, t0.Add(3*time.Minute)), failed(next, t0.Add(3*time.Minute))
		}},
		{"stale worker lease vs operator refund of the review", false, func(s *sqlstore.DB, task *gengate.Task) (a, b *gengate.Task) {
			stale := mustClaim(t, s, task.ID, t0)
			next := mustClaim(t, s, task.ID, t0.Add(2*time.Minute))
			next.Status, next.ReviewReason, next.ErrorMessage = gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, "unknown"
			if err := s.FinishTask(ctx, next, 0); err != nil {
				t.Fatalf("FinishTask(review): %v", err)
			}
			op := failed(next, t0.Add(3*time.Minute))
			op.LeaseToken = "" // an operator holds no lease
			return failed(stale, t0.Add(3*time.Minute)), op
		}},
		{"operator refund vs cancel of a task held by the review terms", true, func(s *sqlstore.DB, task *gengate.Task) (a, b *gengate.Task) {
			// no lease on either side
			return failed(task, t0.Add(time.Minute)), canceled(task, t0.Add(time.Minute))
		}},
	}
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					acct := newAccount(t, s, credits)
					type race struct {
						id   string
						a, b *gengate.Task
					}
					races := make([]race, rounds)
					for i := range races {
						task := newTask(acct.ID, cost)
						if tc.held {
							task.Status, task.ReviewReason = gengate.StatusNeedsReview, gengate.ReviewTerms
						}
						mustCreate(t, s, task)
						a, b := tc.ready(s, task)
						races[i] = race{task.ID, a, b}
					}
					// Every finish of every round starts at once.
					start := make(chan struct{})
					errs := make([][2]error, rounds)
					var wg sync.WaitGroup
					for i, r := range races {
						for j, f := range []*gengate.Task{r.a, r.b} {
							wg.Go(func() {
								<-start
								errs[i][j] = s.FinishTask(ctx, f, cost)
							})
						}
					}
					close(start)
					wg.Wait()
					for i, r := range races {
						won := 0
						for _, err := range errs[i] {
							if err == nil {
								won++
								continue
							}
							wantCode(t, "the losing finish", err, gengate.EConflict)
						}
						if won != 1 {
							t.Errorf("task %s: %d finishes won; want 1", r.id, won)
						}
						if n := count(t, s, `SELECT COUNT(*) FROM ledger WHERE task_id = $1 AND kind = 'refund'`, r.id); n != 1 {
							t.Errorf("task %s: %d refunds; want 1", r.id, n)
						}
						got, err := s.FindTask(ctx, r.id)
						if err != nil || (got.Status != gengate.StatusFailed && got.Status != gengate.StatusCanceled) {
							t.Errorf("task %s = %+v, %v; want failed or canceled", r.id, got, err)
						}
					}
					if b := balance(t, s, acct.ID); b != credits {
						t.Errorf("balance = %d; want %d (every task charged once, refunded once)", b, credits)
					}
					checkLedger(t, s, acct.ID)
				})
			}
		})
	}
}
