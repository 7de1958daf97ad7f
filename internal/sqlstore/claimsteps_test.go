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

// TestMarkSubmittingPlan: ClaimSteps on SQLite finds the tasks it moves
// to submitting by their ids, however many tasks are queued: no walk of
// tasks_status, no scan of the table. (On PostgreSQL the claim's own
// statement moves them, gengate_claim_steps: TestClaimPlan checks its
// plan.)
func TestMarkSubmittingPlan(t *testing.T) {
	for _, d := range []string{"sqlite"} {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			now := t0.UnixMilli()
			addTasks(t, s, a.ID, "q", "queued", now, 5000)
			addTasks(t, s, a.ID, "done", "succeeded", now, 5000)
			if s.Postgres() {
				if _, err := s.SQL().Exec(`ANALYZE`); err != nil {
					t.Fatal(err)
				}
			}
			plan, err := s.MarkSubmittingPlan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("plan:\n%s", plan)
			for _, bad := range []string{"tasks_status", "SCAN tasks", "Seq Scan on tasks"} {
				if strings.Contains(plan, bad) {
					t.Errorf("the plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}
