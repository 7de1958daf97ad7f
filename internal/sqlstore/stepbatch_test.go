package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestSaveStepsTogether: step records that arrive together are written
// together (one SQLite savepoint, one PostgreSQL statement), and each
// caller gets what its own UPDATE would have given: a record under the
// lease it holds is written whole and gives the lease up, whichever
// active state its task is in; one under a
// lease taken over by another claim, or of a task no longer active, is
// refused with EConflict and changes nothing.
func TestSaveStepsTogether(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 1000)
			const n = 24
			var claims []*gengate.Task
			for range n {
				task := newTask(a.ID, 1)
				mustCreate(t, s, task)
				claims = append(claims, mustClaim(t, s, task.ID, t0))
			}
			// Every third task's lease was taken over by another claim
			// (its own ran out); every fifth task is no longer active.
			stale := map[string]bool{}
			for i, c := range claims {
				switch {
				case i%3 == 0:
					if _, err := s.ClaimTask(ctx, c.ID, "other", t0.Add(2*time.Minute), time.Minute); err != nil {
						t.Fatal(err)
					}
					stale[c.ID] = true
				case i%5 == 0:
					done := *c
					done.Status, done.CompletedAt, done.UpdatedAt = gengate.StatusSucceeded, t0, t0
					if err := s.FinishTask(ctx, &done, 0); err != nil {
						t.Fatal(err)
					}
					stale[c.ID] = true
				}
			}
			// The live ones are in each active state a step record meets:
			// queued (a submit's), submitting (checkpointed before its
			// submit) and running (a poll's).
			states := []gengate.Status{gengate.StatusQueued, gengate.StatusSubmitting, gengate.StatusRunning, gengate.StatusQueued}
			for i, c := range claims {
				if st := states[i%len(states)]; !stale[c.ID] && st != gengate.StatusQueued {
					c.Status = st
					if err := s.SaveStep(ctx, c, false); err != nil {
						t.Fatalf("checkpoint task %d as %s: %v", i, st, err)
					}
				}
			}
			before, _ := s.StepBatches()
			// The records queue up behind a held batch.
			var release func()
			var queued func() int
			if s.Postgres() {
				release, queued = s.HoldSteps(), s.StepsQueued
			} else {
				release, queued = s.HoldWriter(t), s.QueuedWrites
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, c := range claims {
				c.Status, c.UpstreamID, c.Attempts = gengate.StatusRunning, "up-"+c.ID, 0
				c.RunAt, c.UpdatedAt = t0.Add(time.Duration(i+1)*time.Second), t0.Add(time.Second)
				c.Route = gengate.Route{Engine: "sandbox", Upstream: "u" + c.ID}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.SaveStep(ctx, c, true)
				}()
			}
			for queued() < n { // a condition, not a duration
				time.Sleep(time.Millisecond)
			}
			release()
			wg.Wait()
			if after, _ := s.StepBatches(); after == before {
				t.Errorf("no step records were written together (%d groups before and after)", before)
			}
			for i, c := range claims {
				row, err := s.FindTask(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if stale[c.ID] {
					if gengate.ErrorCode(errs[i]) != gengate.EConflict {
						t.Errorf("record of task %d under a lost lease: %v; want EConflict", i, errs[i])
					}
					if row.UpstreamID != "" || row.Status == gengate.StatusRunning {
						t.Errorf("record of task %d under a lost lease was written: %+v", i, row)
					}
					continue
				}
				if errs[i] != nil {
					t.Errorf("record of task %d under its lease: %v", i, errs[i])
					continue
				}
				if row.Status != gengate.StatusRunning || row.UpstreamID != c.UpstreamID || !row.RunAt.Equal(c.RunAt) ||
					row.LeaseToken != "" || row.Attempts != 0 || row.Route.Upstream != c.Route.Upstream || !row.UpdatedAt.Equal(c.UpdatedAt) {
					t.Errorf("task %d stored as %+v; want the record written and the lease given up", i, row)
				}
			}
		})
	}
}

// TestSaveStepsPlan: the UPDATE of many step records finds each task by
// its id; it never reads the table through, nor every active task. On
// PostgreSQL it is checked twice: before the statistics count the tasks
// (a table that grew faster than autovacuum analyzed it: the plain
// statement then joined the records to a bitmap scan of every active
// task, half of PostgreSQL's CPU in bench submit) and after.
func TestSaveStepsPlan(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			now := t0.UnixMilli()
			addTasks(t, s, a.ID, "done", "succeeded", now, 3000)
			addTasks(t, s, a.ID, "wait", "running", now, 3000)
			for _, analyzed := range []bool{false, true} {
				if analyzed && !s.Postgres() {
					continue // SQLite has no statistics unless someone runs ANALYZE, and gengate does not
				}
				if analyzed {
					if _, err := s.SQL().Exec(`ANALYZE tasks`); err != nil {
						t.Fatal(err)
					}
				}
				plan, err := s.SaveStepsPlan(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range []string{"SCAN tasks", "Seq Scan on tasks", "Bitmap Heap Scan on tasks", "tasks_due", "Hash Join"} {
					if strings.Contains(plan, b) {
						t.Errorf("analyzed %v: the plan reads more than the records' tasks (%q):\n%s", analyzed, b, plan)
					}
				}
				if !strings.Contains(plan, "INDEX") && !strings.Contains(plan, "Index Scan") {
					t.Errorf("analyzed %v: the plan finds the tasks without an index:\n%s", analyzed, plan)
				}
				t.Logf("plan (analyzed %v):\n%s", analyzed, plan)
			}
		})
	}
}

// TestCreateKeysPlan: a batch of creations looks its Idempotency-Keys up
// in the index of keys, one lookup per key, never by reading every task
// or every key, also before the statistics count the tasks (it joined
// them to a sequential scan of the table in a bench's new database, and
// to a walk of the whole index of keys here). PostgreSQL only: SQLite checks each creation's key by
// its own lookup.
func TestCreateKeysPlan(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a := newAccount(t, s, 100)
	now := t0.UnixMilli()
	// Statistics taken while the table held a few tasks, then many more.
	addTasks(t, s, a.ID, "few", "succeeded", now, 20)
	if _, err := s.SQL().Exec(`ANALYZE tasks`); err != nil {
		t.Fatal(err)
	}
	addTasks(t, s, a.ID, "done", "succeeded", now, 5000)
	if _, err := s.SQL().Exec(`UPDATE tasks SET idempotency_key = id`); err != nil {
		t.Fatal(err)
	}
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := s.SQL().Exec(`ANALYZE tasks`); err != nil {
				t.Fatal(err)
			}
		}
		plan, err := s.CreateKeysPlan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("plan (analyzed %v):\n%s", analyzed, plan)
		for _, b := range []string{"Seq Scan on tasks", "Bitmap Heap Scan on tasks", "Merge Join", "Hash Join"} {
			if strings.Contains(plan, b) {
				t.Errorf("analyzed %v: the lookup reads more than the batch's keys (%q):\n%s", analyzed, b, plan)
			}
		}
		if !strings.Contains(plan, "Index Only Scan using tasks_idempotency") {
			t.Errorf("analyzed %v: the lookup does not go by the index of keys:\n%s", analyzed, plan)
		}
	}
}

// TestSaveStepCallerGone: a step record or a finish whose caller's context
// has ended before its batch is written is answered with the context's
// error and writes nothing, and the batcher goes on. On PostgreSQL a batch
// made only of such records once took the batcher's goroutine down, and
// the process with it (an empty batch's arrays).
func TestSaveStepCallerGone(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 10)
			var claims []*gengate.Task
			for range 2 {
				task := newTask(a.ID, 1)
				mustCreate(t, s, task)
				claims = append(claims, mustClaim(t, s, task.ID, t0))
			}
			gone, cancel := context.WithCancel(ctx)
			cancel()
			step, done := *claims[0], *claims[1]
			step.Status, step.UpstreamID = gengate.StatusRunning, "up"
			if err := s.SaveStep(gone, &step, true); !errors.Is(err, context.Canceled) {
				t.Errorf("SaveStep with its caller gone = %v; want context.Canceled", err)
			}
			done.Status, done.UpdatedAt, done.CompletedAt = gengate.StatusSucceeded, t0, t0
			if err := s.FinishTask(gone, &done, 0); !errors.Is(err, context.Canceled) {
				t.Errorf("FinishTask with its caller gone = %v; want context.Canceled", err)
			}
			for _, c := range claims {
				row, err := s.FindTask(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if row.UpstreamID != "" || row.Status == gengate.StatusSucceeded || row.LeaseToken == "" {
					t.Errorf("task %s written by a caller gone: %+v", c.ID, row)
				}
			}
			// The batchers still write.
			step.UpstreamID = "up"
			if err := s.SaveStep(ctx, &step, true); err != nil {
				t.Errorf("SaveStep after: %v", err)
			}
			if err := s.FinishTask(ctx, &done, 0); err != nil {
				t.Errorf("FinishTask after: %v", err)
			}
		})
	}
}
