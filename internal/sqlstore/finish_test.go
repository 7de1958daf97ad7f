package sqlstore_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

func TestFinishTaskSucceeded(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 40)
			task := newTask(a.ID, 4)
			task.IdempotencyKey = "k"
			mustCreate(t, s, task)
			c := mustClaim(t, s, "", t0)
			done := t0.Add(time.Minute)
			var outs []gengate.Creation
			for i := range 3 {
				outs = append(outs, gengate.Creation{ID: gengate.NewID(), AccountID: a.ID, TaskID: c.ID, Index: i,
					Key: "outputs/" + c.ID + "/" + string(rune('0'+i)) + ".png", Token: gengate.NewToken(),
					ContentType: "image/png", Ext: "png", Size: int64(100 + i), CreatedAt: done})
			}
			// Inserted out of order, read back by index.
			c.Outputs = []gengate.Creation{outs[2], outs[0], outs[1]}
			c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, done, done
			if err := s.FinishTask(ctx, c, 0); err != nil {
				t.Fatal(err)
			}
			if c.LeaseToken != "" {
				t.Errorf("LeaseToken = %q after FinishTask; want it cleared", c.LeaseToken)
			}
			got, err := s.FindTask(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != gengate.StatusSucceeded || !got.CompletedAt.Equal(done) || !got.UpdatedAt.Equal(done) || got.LeaseToken != "" {
				t.Errorf("FindTask = %+v; want succeeded at %v, lease released", got, done)
			}
			if !reflect.DeepEqual(got.Outputs, outs) {
				t.Errorf("Outputs =\n%+v\nwant\n%+v", got.Outputs, outs)
			}
			byKey, err := s.FindTaskByIdempotencyKey(ctx, a.ID, "k")
			if err != nil || !reflect.DeepEqual(byKey.Outputs, outs) {
				t.Errorf("FindTaskByIdempotencyKey outputs = %+v, %v; want %+v", byKey, err, outs)
			}
			// A replay of the key returns the finished task with its files.
			replay := newTask(a.ID, 4)
			replay.IdempotencyKey = "k"
			r, err := s.CreateTask(ctx, replay)
			if err != nil || !r.Existing || !reflect.DeepEqual(r.Task.Outputs, outs) {
				t.Errorf("CreateTask(replay) = %+v, %v; want the existing task with its outputs", r, err)
			}
			for _, o := range outs {
				f, err := s.FindCreation(ctx, o.Token)
				if err != nil || !reflect.DeepEqual(*f, o) {
					t.Errorf("FindCreation(%s) = %+v, %v; want %+v", o.Token, f, err, o)
				}
			}
			_, err = s.FindCreation(ctx, gengate.NewToken())
			wantCode(t, "FindCreation(unknown)", err, gengate.ENotFound)
			if b := balance(t, s, a.ID); b != 36 {
				t.Errorf("balance = %d; want 36 (a success keeps its charge)", b)
			}
			checkLedger(t, s, a.ID)
		})
	}
}

func TestFinishTaskFailedRefundsOnce(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 40)
			task := newTask(a.ID, 4)
			mustCreate(t, s, task)
			c := mustClaim(t, s, task.ID, t0)
			token := c.LeaseToken
			c.Status, c.ErrorCode, c.ErrorMessage, c.InputFault = gengate.StatusFailed, gengate.EFailed, "no", true
			c.UpdatedAt, c.CompletedAt = t0.Add(time.Second), t0.Add(time.Second)
			if err := s.FinishTask(ctx, c, 4); err != nil {
				t.Fatal(err)
			}
			if b := balance(t, s, a.ID); b != 40 {
				t.Errorf("balance = %d; want 40 after the refund", b)
			}
			entries := checkLedger(t, s, a.ID)
			if e := entries[len(entries)-1]; e.Kind != gengate.LedgerRefund || e.TaskID != task.ID || e.Amount != 4 {
				t.Errorf("last entry = %+v; want a refund of 4 for the task", e)
			}
			got, err := s.FindTask(ctx, task.ID)
			if err != nil || got.Status != gengate.StatusFailed || got.ErrorCode != gengate.EFailed ||
				got.ErrorMessage != "no" || !got.InputFault || got.Outputs != nil {
				t.Errorf("FindTask = %+v, %v; want failed with its error", got, err)
			}

			// Finishing it again refunds nothing: not with the old lease, not
			// as an operator.
			c.LeaseToken = token
			wantCode(t, "FinishTask(again, old token)", s.FinishTask(ctx, c, 4), gengate.EConflict)
			c.LeaseToken = ""
			wantCode(t, "FinishTask(again, operator)", s.FinishTask(ctx, c, 4), gengate.EConflict)

			// Even if its row still named the lease (every finish gives it
			// up), the lease's holder writes nothing to a task no longer
			// active: the guard's status condition holds by itself.
			if _, err := s.SQL().ExecContext(ctx, `UPDATE tasks SET lease_token = $1 WHERE id = $2`, token, task.ID); err != nil {
				t.Fatal(err)
			}
			c.LeaseToken = token
			wantCode(t, "FinishTask(again, the lease left on a failed task)", s.FinishTask(ctx, c, 4), gengate.EConflict)
			reopened := *c
			reopened.Status, reopened.ErrorCode, reopened.UpstreamID = gengate.StatusRunning, "", "up-1"
			wantCode(t, "SaveStep(the lease left on a failed task)", s.SaveStep(ctx, &reopened, true), gengate.EConflict)
			if got, _ := s.FindTask(ctx, task.ID); got.Status != gengate.StatusFailed {
				t.Errorf("status = %s; want failed (no write under the lease)", got.Status)
			}
			c.LeaseToken = ""

			// Even if the task were put back in review by mistake, the
			// second refund is refused by the schema, and the state change
			// goes with it.
			if _, err := s.SQL().ExecContext(ctx, `UPDATE tasks SET status = 'needs_review' WHERE id = $1`, task.ID); err != nil {
				t.Fatal(err)
			}
			wantViolation(t, "FinishTask(second refund)", s.FinishTask(ctx, c, 4), vUnique)
			if got, _ := s.FindTask(ctx, task.ID); got.Status != gengate.StatusNeedsReview {
				t.Errorf("status = %s; want needs_review (the refused finish rolled back)", got.Status)
			}
			if b := balance(t, s, a.ID); b != 40 {
				t.Errorf("balance = %d; want 40 (refunded once)", b)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM ledger WHERE kind = 'refund'`); n != 1 {
				t.Errorf("%d refunds; want 1", n)
			}
			checkLedger(t, s, a.ID)
		})
	}
}

func TestFinishTaskReview(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 40)
			task := newTask(a.ID, 4)
			mustCreate(t, s, task)

			// The operator path only touches tasks in review.
			op := *task
			op.Status = gengate.StatusFailed
			wantCode(t, "FinishTask(operator, queued task)", s.FinishTask(ctx, &op, 4), gengate.EConflict)
			op.Status = gengate.StatusQueued
			wantCode(t, "SaveStep(operator, queued task)", s.SaveStep(ctx, &op, true), gengate.EConflict)

			c := mustClaim(t, s, "", t0)
			c.Status, c.ReviewReason, c.ErrorMessage = gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, "unknown"
			if err := s.FinishTask(ctx, c, 0); err != nil {
				t.Fatal(err)
			}
			if b := balance(t, s, a.ID); b != 36 {
				t.Errorf("balance = %d; want 36 (review holds the credits)", b)
			}
			got, err := s.FindTask(ctx, task.ID)
			if err != nil || got.Status != gengate.StatusNeedsReview || got.ReviewReason != gengate.ReviewOutcomeUnknown || got.LeaseToken != "" {
				t.Fatalf("FindTask = %+v, %v; want needs_review, lease released", got, err)
			}
			if c, err := s.ClaimTask(ctx, "", "w", t0.Add(time.Hour), time.Minute); c != nil || err != nil {
				t.Fatalf("ClaimTask = %v, %v; a task in review is not claimable", c, err)
			}
			if c, err := s.ClaimTask(ctx, task.ID, "w", t0.Add(time.Hour), time.Minute); c != nil || err != nil {
				t.Fatalf("ClaimTask(id) = %v, %v; a task in review is not claimable", c, err)
			}

			// The operator delivers: the task is queued again, charge kept.
			got.Status, got.ReviewReason, got.ErrorMessage = gengate.StatusQueued, "", ""
			got.RunAt = t0.Add(time.Hour)
			if err := s.SaveStep(ctx, got, true); err != nil {
				t.Fatalf("SaveStep(operator reopen): %v", err)
			}
			wantCode(t, "SaveStep(operator, reopened task)", s.SaveStep(ctx, got, true), gengate.EConflict)
			again := mustClaim(t, s, "", t0.Add(time.Hour))
			if again.ID != task.ID || again.Status != gengate.StatusQueued || again.ReviewReason != "" || again.Attempts != 2 {
				t.Errorf("claim after reopening = %+v; want the queued task, attempt 2", again)
			}
			if b := balance(t, s, a.ID); b != 36 {
				t.Errorf("balance = %d; want 36", b)
			}
			checkLedger(t, s, a.ID)
		})
	}
}

// TestFinishTaskOperatorRefundRace has ten operators refund one reviewed
// task at once: one wins, the credits come back once.
func TestFinishTaskOperatorRefundRace(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 40)
			task := newTask(a.ID, 4)
			task.Status = gengate.StatusNeedsReview
			task.ReviewReason = gengate.ReviewTerms
			mustCreate(t, s, task)

			errs := make([]error, 10)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range errs {
				wg.Go(func() {
					op := *task
					op.Status, op.ErrorCode, op.CompletedAt = gengate.StatusFailed, gengate.EFailed, t0
					<-start
					errs[i] = s.FinishTask(ctx, &op, op.Cost)
				})
			}
			close(start)
			wg.Wait()
			won := 0
			for _, err := range errs {
				if err == nil {
					won++
					continue
				}
				wantCode(t, "FinishTask(operator race)", err, gengate.EConflict)
			}
			if won != 1 {
				t.Errorf("%d operators refunded; want 1", won)
			}
			if b := balance(t, s, a.ID); b != 40 {
				t.Errorf("balance = %d; want 40", b)
			}
			checkLedger(t, s, a.ID)
		})
	}
}

func TestOptionsRoundTrip(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 10)
			opts := map[string]any{
				"aspectRatio": "16:9",
				"numOutputs":  int64(2),
				"seed":        int64(1<<53 + 1), // beyond float64's exact integers
				"negative":    int64(-7),
				"guidance":    7.5,
				"strength":    2.0, // a whole float64 stays a float64
				"tiny":        1e-9,
				"huge":        1e300,
				"audio":       true,
				"hdr":         false,
			}
			task := newTask(a.ID, 1)
			task.Options, task.IdempotencyKey = opts, "k"
			task.Inputs = map[string]string{"imageUrl": "inputs/" + task.ID + "/imageUrl"}
			mustCreate(t, s, task)

			check := func(what string, got *gengate.Task) {
				t.Helper()
				for k, want := range opts {
					if v := got.Options[k]; !reflect.DeepEqual(v, want) {
						t.Errorf("%s: option %s = %T(%v); want %T(%v)", what, k, v, v, want, want)
					}
				}
				if len(got.Options) != len(opts) {
					t.Errorf("%s: Options = %v; want %v", what, got.Options, opts)
				}
				if !reflect.DeepEqual(got.Inputs, task.Inputs) {
					t.Errorf("%s: Inputs = %#v; want %#v", what, got.Inputs, task.Inputs)
				}
			}
			found, err := s.FindTask(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			check("FindTask", found)
			byKey, err := s.FindTaskByIdempotencyKey(ctx, a.ID, "k")
			if err != nil {
				t.Fatal(err)
			}
			check("FindTaskByIdempotencyKey", byKey)
			list, err := s.ListTasks(ctx, gengate.StatusQueued, 10)
			if err != nil || len(list) != 1 {
				t.Fatalf("ListTasks = %v, %v", list, err)
			}
			check("ListTasks", list[0])
			check("ClaimTask", mustClaim(t, s, "", t0))
		})
	}
}

func TestListTasks(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			// Created out of order: listed oldest first.
			var queued []string
			for _, age := range []time.Duration{2, 3, 1} {
				task := newTask(a.ID, 1)
				task.CreatedAt = t0.Add(-age * time.Minute)
				mustCreate(t, s, task)
				queued = append(queued, task.ID)
			}
			want := []string{queued[1], queued[0], queued[2]}
			review := newTask(a.ID, 1)
			review.Status, review.ReviewReason = gengate.StatusNeedsReview, gengate.ReviewTerms
			mustCreate(t, s, review)

			ids := func(status gengate.Status, limit int) []string {
				t.Helper()
				tasks, err := s.ListTasks(ctx, status, limit)
				if err != nil {
					t.Fatalf("ListTasks(%s): %v", status, err)
				}
				out := []string{}
				for _, task := range tasks {
					if task.Status != status {
						t.Errorf("ListTasks(%s) returned a %s task", status, task.Status)
					}
					out = append(out, task.ID)
				}
				return out
			}
			if got := ids(gengate.StatusQueued, 10); !reflect.DeepEqual(got, want) {
				t.Errorf("ListTasks(queued) = %v; want %v", got, want)
			}
			if got := ids(gengate.StatusQueued, 2); !reflect.DeepEqual(got, want[:2]) {
				t.Errorf("ListTasks(queued, 2) = %v; want %v", got, want[:2])
			}
			if got := ids(gengate.StatusNeedsReview, 10); !reflect.DeepEqual(got, []string{review.ID}) {
				t.Errorf("ListTasks(needs_review) = %v; want [%s]", got, review.ID)
			}
			if got := ids(gengate.StatusSucceeded, 10); len(got) != 0 {
				t.Errorf("ListTasks(succeeded) = %v; want none", got)
			}
		})
	}
}

func TestPurgeTasks(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			cutoff := t0.Add(90 * 24 * time.Hour)

			// finish claims a new task and finishes it at the time.
			finish := func(status gengate.Status, at time.Time, key string, outputs int) *gengate.Task {
				t.Helper()
				task := newTask(a.ID, 4)
				task.IdempotencyKey = key
				mustCreate(t, s, task)
				c := mustClaim(t, s, task.ID, t0)
				c.Status, c.UpdatedAt, c.CompletedAt = status, at, at
				for i := range outputs {
					c.Outputs = append(c.Outputs, gengate.Creation{ID: gengate.NewID(), AccountID: a.ID, TaskID: c.ID,
						Index: i, Key: "k", Token: gengate.NewToken(), ContentType: "image/png", Ext: "png", CreatedAt: at})
				}
				refund := 0
				if status == gengate.StatusFailed {
					refund = 4
				}
				if err := s.FinishTask(ctx, c, refund); err != nil {
					t.Fatal(err)
				}
				return c
			}
			oldOK := finish(gengate.StatusSucceeded, cutoff.Add(-time.Millisecond), "old-key", 2)
			oldFailed := finish(gengate.StatusFailed, t0, "", 0)
			newOK := finish(gengate.StatusSucceeded, cutoff, "new-key", 1)
			review := finish(gengate.StatusNeedsReview, time.Time{}, "", 0)
			oldReview := finish(gengate.StatusNeedsReview, t0, "", 0) // a review is never purged
			active := newTask(a.ID, 4)
			active.CreatedAt = t0.Add(-365 * 24 * time.Hour)
			mustCreate(t, s, active)
			ledgerBefore := checkLedger(t, s, a.ID)

			n, err := s.PurgeTasks(ctx, cutoff)
			if err != nil || n != 2 {
				t.Fatalf("PurgeTasks = %d, %v; want 2", n, err)
			}
			for _, gone := range []string{oldOK.ID, oldFailed.ID} {
				_, err := s.FindTask(ctx, gone)
				wantCode(t, "FindTask(purged)", err, gengate.ENotFound)
			}
			for _, kept := range []string{newOK.ID, review.ID, oldReview.ID, active.ID} {
				if _, err := s.FindTask(ctx, kept); err != nil {
					t.Errorf("FindTask(%s) after purge: %v", kept, err)
				}
			}
			// Creations and the ledger stay.
			for _, c := range oldOK.Outputs {
				if _, err := s.FindCreation(ctx, c.Token); err != nil {
					t.Errorf("FindCreation of a purged task's output: %v", err)
				}
			}
			if ledgerAfter := checkLedger(t, s, a.ID); !reflect.DeepEqual(ledgerAfter, ledgerBefore) {
				t.Errorf("ledger changed by the purge:\n%+v\nwant\n%+v", ledgerAfter, ledgerBefore)
			}
			if n, err := s.PurgeTasks(ctx, cutoff); err != nil || n != 0 {
				t.Errorf("PurgeTasks again = %d, %v; want 0", n, err)
			}

			// The purged task's key is free for a new task; the kept one's is not.
			_, err = s.FindTaskByIdempotencyKey(ctx, a.ID, "old-key")
			wantCode(t, "FindTaskByIdempotencyKey(purged)", err, gengate.ENotFound)
			fresh := newTask(a.ID, 4)
			fresh.IdempotencyKey = "old-key"
			before := balance(t, s, a.ID)
			if r := mustCreate(t, s, fresh); r.Balance != before-4 {
				t.Errorf("balance = %d; want %d (the new task is charged)", r.Balance, before-4)
			}
			replay := newTask(a.ID, 4)
			replay.IdempotencyKey = "new-key"
			if r, err := s.CreateTask(ctx, replay); err != nil || !r.Existing || r.Task.ID != newOK.ID {
				t.Errorf("CreateTask(kept key) = %+v, %v; want the kept task", r, err)
			}
			checkLedger(t, s, a.ID)
		})
	}
}
