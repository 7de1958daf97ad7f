package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestClaimStepsCheckpoints: a claim of the workers' steps also writes each
// claimed queued task as submitting, in the claim's own transaction, and
// hands the tasks back with the status they had before it (Checkpointed
// on the queued ones); tasks already submitting (a crash) or running are
// only leased. What is not claimed is not touched.
func TestClaimStepsCheckpoints(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			byStatus := map[gengate.Status]string{}
			for i, st := range []gengate.Status{gengate.StatusQueued, gengate.StatusSubmitting, gengate.StatusRunning} {
				task := newTask(a.ID, 1)
				task.RunAt = t0.Add(time.Duration(i) * time.Millisecond)
				mustCreate(t, s, task)
				if st != gengate.StatusQueued {
					c, err := s.ClaimTask(ctx, task.ID, "setup", t0, time.Millisecond)
					if err != nil || c == nil {
						t.Fatalf("claim for setup: %v, %v", c, err)
					}
					c.Status, c.Attempts, c.RunAt = st, 0, task.RunAt
					if err := s.SaveStep(ctx, c, true); err != nil {
						t.Fatal(err)
					}
				}
				byStatus[st] = task.ID
			}
			later := newTask(a.ID, 1) // not due
			later.RunAt = t0.Add(time.Hour)
			mustCreate(t, s, later)

			got, err := s.ClaimSteps(ctx, "w1", t0.Add(time.Second), time.Minute, 10)
			if err != nil || len(got) != 3 {
				t.Fatalf("ClaimSteps = %d tasks, %v; want 3", len(got), err)
			}
			for _, c := range got {
				var was gengate.Status
				for st, id := range byStatus {
					if id == c.ID {
						was = st
					}
				}
				if c.Status != was || c.Checkpointed != (was == gengate.StatusQueued) || c.LeaseToken == "" || c.Attempts != 1 {
					t.Errorf("claimed task was %s: status %s, checkpointed %v, token %q, attempts %d; want status %s, checkpointed only if queued",
						was, c.Status, c.Checkpointed, c.LeaseToken, c.Attempts, was)
				}
				row, err := s.FindTask(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				want := was
				if was == gengate.StatusQueued {
					want = gengate.StatusSubmitting
				}
				if row.Status != want || row.LeaseToken != c.LeaseToken {
					t.Errorf("stored task that was %s: status %s, token %q; want %s under the claim's token", was, row.Status, row.LeaseToken, want)
				}
			}
			if row, err := s.FindTask(ctx, later.ID); err != nil || row.Status != gengate.StatusQueued || row.LeaseToken != "" {
				t.Errorf("task not due: %+v, %v; want queued, unleased", row, err)
			}
			// A step of the checkpointed task writes its result under the
			// claim as usual.
			for _, c := range got {
				if c.Checkpointed {
					c.Status, c.UpstreamID, c.RunAt = gengate.StatusRunning, "up-1", t0.Add(time.Minute)
					if err := s.SaveStep(ctx, c, true); err != nil {
						t.Fatalf("SaveStep after ClaimSteps: %v", err)
					}
				}
			}
		})
	}
}

// TestClaimStepsTakesOverExpiredLeases: the workers' claim (ClaimSteps,
// PostgreSQL's gengate_claim_steps_start) takes a task whose lease ran out
// (its worker was killed mid-step) and names the lease it took over; a
// live lease is left alone, and the worker that lost the lease is fenced
// off. This is crash recovery at the store; cmd/gengate's
// TestLeaseTakeoverLogged and TestCrashRecovery do it with SIGKILL.
func TestClaimStepsTakesOverExpiredLeases(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			task := newTask(a.ID, 1)
			mustCreate(t, s, task)
			const lease = time.Minute
			got, err := s.ClaimSteps(ctx, "w1", t0, lease, 10)
			if err != nil || len(got) != 1 {
				t.Fatalf("first ClaimSteps = %d tasks, %v; want the task", len(got), err)
			}
			killed := got[0]
			if got, err := s.ClaimSteps(ctx, "w2", t0.Add(lease-time.Millisecond), lease, 10); err != nil || len(got) != 0 {
				t.Fatalf("ClaimSteps under a live lease = %d tasks, %v; want none", len(got), err)
			}
			got, err = s.ClaimSteps(ctx, "w2", t0.Add(lease+time.Millisecond), lease, 10)
			if err != nil || len(got) != 1 {
				t.Fatalf("ClaimSteps after the lease ran out = %d tasks, %v; want the task taken over", len(got), err)
			}
			c := got[0]
			if c.ID != task.ID || c.TakenOver != killed.LeaseToken || c.LeaseToken == killed.LeaseToken ||
				c.Status != gengate.StatusSubmitting || c.Checkpointed || c.Attempts != 2 {
				t.Fatalf("taken over: %+v; want submitting (not checkpointed again), attempt 2, taken over from %s", c, killed.LeaseToken)
			}
			killed.Status = gengate.StatusRunning
			wantCode(t, "SaveStep(the lease taken over)", s.SaveStep(ctx, killed, true), gengate.EConflict)
			c.Status, c.UpstreamID = gengate.StatusRunning, "up-1"
			if err := s.SaveStep(ctx, c, true); err != nil {
				t.Fatalf("SaveStep by the new holder: %v", err)
			}
		})
	}
}

// TestClaimUpdatePlans: the claim's UPDATEs on SQLite (the lease, and
// ClaimSteps' move of the queued tasks to submitting) find the rows the
// claim selected by their rowids, however many tasks are queued: no walk
// of tasks_status or tasks_due, no scan of the table. (On PostgreSQL the
// claim's own statement moves them, gengate_claim_steps: TestClaimPlan
// checks its plan.)
func TestClaimUpdatePlans(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "sqlite")
	a := newAccount(t, s, 100)
	now := t0.UnixMilli()
	addTasks(t, s, a.ID, "q", "queued", now, 5000)
	addTasks(t, s, a.ID, "done", "succeeded", now, 5000)
	plans, err := s.ClaimUpdatePlans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, plan := range plans {
		t.Logf("plan %d:\n%s", i, plan)
		if !strings.Contains(plan, "INTEGER PRIMARY KEY") {
			t.Errorf("update %d does not find its rows by rowid:\n%s", i, plan)
		}
		for _, bad := range []string{"tasks_status", "tasks_due", "SCAN tasks"} {
			if strings.Contains(plan, bad) {
				t.Errorf("update %d's plan has %q:\n%s", i, bad, plan)
			}
		}
	}
}
