package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

func TestClaimTaskDueInOrder(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			var ids []string
			for _, delay := range []time.Duration{2 * time.Second, 0, time.Second, time.Hour} {
				task := newTask(a.ID, 1)
				task.RunAt = t0.Add(delay)
				mustCreate(t, s, task)
				ids = append(ids, task.ID)
			}
			// Nothing is due before the first run time.
			if c, err := s.ClaimTask(ctx, "", "w1", t0.Add(-time.Millisecond), time.Minute); c != nil || err != nil {
				t.Fatalf("ClaimTask before any run time = %v, %v; want nil", c, err)
			}
			now := t0.Add(10 * time.Second)
			for _, want := range []string{ids[1], ids[2], ids[0]} {
				c, err := s.ClaimTask(ctx, "", "w1", now, time.Minute)
				if err != nil || c == nil {
					t.Fatalf("ClaimTask = %v, %v; want %s", c, err, want)
				}
				if c.ID != want {
					t.Errorf("claimed %s; want %s (run_at order)", c.ID, want)
				}
				if !strings.HasPrefix(c.LeaseToken, "w1") || c.Attempts != 1 || c.Status != gengate.StatusQueued {
					t.Errorf("claim = token %q, attempts %d, status %s; want a w1 token, 1 attempt, queued",
						c.LeaseToken, c.Attempts, c.Status)
				}
			}
			// The fourth is not due for an hour.
			if c, err := s.ClaimTask(ctx, "", "w1", now, time.Minute); c != nil || err != nil {
				t.Fatalf("ClaimTask with only future tasks = %v, %v; want nil", c, err)
			}
			// Asked for by id, it is claimed although not due.
			c, err := s.ClaimTask(ctx, ids[3], "w2", now, time.Minute)
			if err != nil || c == nil || c.ID != ids[3] || !strings.HasPrefix(c.LeaseToken, "w2") || c.Attempts != 1 {
				t.Fatalf("ClaimTask(id of a future task) = %+v, %v; want it claimed by w2", c, err)
			}
			if c, err := s.ClaimTask(ctx, gengate.NewID(), "w2", now, time.Minute); c != nil || err != nil {
				t.Errorf("ClaimTask(unknown id) = %v, %v; want nil", c, err)
			}
		})
	}
}

func TestClaimTaskLeaseAndFencing(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 10)
			task := newTask(a.ID, 4)
			mustCreate(t, s, task)
			const lease = 30 * time.Second

			first, err := s.ClaimTask(ctx, "", "w1", t0, lease)
			if err != nil || first == nil {
				t.Fatalf("ClaimTask = %v, %v", first, err)
			}
			// While the lease lives nobody else gets the task, by queue or by id.
			for _, id := range []string{"", task.ID} {
				if c, err := s.ClaimTask(ctx, id, "w2", t0.Add(lease-time.Millisecond), lease); c != nil || err != nil {
					t.Fatalf("ClaimTask(%q) under a live lease = %v, %v; want nil", id, c, err)
				}
			}
			// The holder may checkpoint without giving the lease up.
			first.Status = gengate.StatusSubmitting
			if err := s.SaveStep(ctx, first, false); err != nil {
				t.Fatalf("SaveStep by the holder: %v", err)
			}
			if c, _ := s.ClaimTask(ctx, task.ID, "w2", t0.Add(time.Second), lease); c != nil {
				t.Fatal("SaveStep without release let the lease go")
			}

			// The lease runs out: another worker takes over with a new token.
			second, err := s.ClaimTask(ctx, "", "w2", t0.Add(lease+time.Millisecond), lease)
			if err != nil || second == nil {
				t.Fatalf("ClaimTask after the lease = %v, %v; want the task", second, err)
			}
			if second.ID != task.ID || second.LeaseToken == first.LeaseToken || !strings.HasPrefix(second.LeaseToken, "w2") ||
				second.Attempts != 2 || second.Status != gengate.StatusSubmitting {
				t.Fatalf("second claim = %+v; want a new w2 token, attempt 2, status submitting", second)
			}

			// The first worker is fenced off: nothing it writes lands, and
			// it cannot renew the lease it lost (its step would run on as
			// if it still held the task).
			wantCode(t, "ExtendLease(old token)", s.ExtendLease(ctx, task.ID, first.LeaseToken, t0.Add(lease+time.Hour)), gengate.EConflict)
			first.Status, first.UpstreamID = gengate.StatusRunning, "up-1"
			wantCode(t, "SaveStep(old token)", s.SaveStep(ctx, first, true), gengate.EConflict)
			first.Status, first.ErrorCode = gengate.StatusFailed, gengate.EFailed
			wantCode(t, "FinishTask(old token)", s.FinishTask(ctx, first, 4), gengate.EConflict)
			if first.LeaseToken == "" {
				t.Error("a refused FinishTask cleared the caller's token")
			}
			if b := balance(t, s, a.ID); b != 6 {
				t.Errorf("balance = %d after a fenced FinishTask; want 6 (no refund)", b)
			}
			got, err := s.FindTask(ctx, task.ID)
			if err != nil || got.Status != gengate.StatusSubmitting || got.UpstreamID != "" || got.LeaseToken != second.LeaseToken {
				t.Fatalf("FindTask = %+v, %v; want it as the second claim left it", got, err)
			}

			// The new holder's writes land; release ends the lease and the
			// task is due again at its new run time.
			second.Status, second.UpstreamID = gengate.StatusRunning, "up-2"
			second.RunAt = t0.Add(time.Hour)
			if err := s.SaveStep(ctx, second, true); err != nil {
				t.Fatalf("SaveStep(new token): %v", err)
			}
			wantCode(t, "SaveStep(released token)", s.SaveStep(ctx, second, true), gengate.EConflict)
			if c, _ := s.ClaimTask(ctx, "", "w3", t0.Add(time.Hour-time.Millisecond), lease); c != nil {
				t.Fatal("claimed a released task before its run time")
			}
			third, err := s.ClaimTask(ctx, "", "w3", t0.Add(time.Hour), lease)
			if err != nil || third == nil || third.UpstreamID != "up-2" || third.Status != gengate.StatusRunning || third.Attempts != 3 {
				t.Fatalf("ClaimTask at the new run time = %+v, %v; want running with up-2, attempt 3", third, err)
			}
			third.Status, third.CompletedAt = gengate.StatusSucceeded, t0.Add(time.Hour)
			if err := s.FinishTask(ctx, third, 0); err != nil {
				t.Fatal(err)
			}
			if c, _ := s.ClaimTask(ctx, task.ID, "w4", t0.Add(2*time.Hour), lease); c != nil {
				t.Error("claimed a succeeded task")
			}
		})
	}
}

// TestClaimTaskConcurrent lets 8 workers drain 50 tasks at one instant:
// within one lease period no task may be claimed twice.
func TestClaimTaskConcurrent(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 50)
			for range 50 {
				mustCreate(t, s, newTask(a.ID, 1))
			}
			now := t0.Add(time.Second)
			var mu sync.Mutex
			claims := map[string]int{}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for w := range 8 {
				wg.Go(func() {
					<-start
					for {
						c, err := s.ClaimTask(context.Background(), "", "w"+string(rune('a'+w)), now, time.Minute)
						if err != nil {
							t.Errorf("ClaimTask: %v", err)
							return
						}
						if c == nil {
							return
						}
						mu.Lock()
						claims[c.ID]++
						mu.Unlock()
					}
				})
			}
			close(start)
			wg.Wait()
			if len(claims) != 50 {
				t.Errorf("%d tasks claimed; want 50", len(claims))
			}
			for id, n := range claims {
				if n != 1 {
					t.Errorf("task %s claimed %d times", id, n)
				}
			}
			if n := count(t, s, `SELECT COUNT(*) FROM tasks WHERE attempts <> 1`); n != 0 {
				t.Errorf("%d tasks with attempts other than 1", n)
			}
		})
	}
}

// TestClaimTasksBatch: one claim takes up to its limit of due tasks,
// earliest first, never a task not due or still leased; concurrent batch
// claims never take one task twice.
func TestClaimTasksBatch(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 1000)
			var due []string
			for i := range 5 {
				task := newTask(a.ID, 1)
				task.RunAt = t0.Add(time.Duration(5-i) * time.Second) // created last, due first
				mustCreate(t, s, task)
				due = append([]string{task.ID}, due...)
			}
			later := newTask(a.ID, 1)
			later.RunAt = t0.Add(time.Hour)
			mustCreate(t, s, later)
			now := t0.Add(time.Minute)
			got, err := s.ClaimTasks(ctx, "w1", now, time.Minute, 3)
			if err != nil || len(got) != 3 {
				t.Fatalf("ClaimTasks(3) = %d tasks, %v; want 3", len(got), err)
			}
			for i, c := range got {
				if c.ID != due[i] || !strings.HasPrefix(c.LeaseToken, "w1") || c.Attempts != 1 {
					t.Errorf("claim %d = %s (token %q, attempts %d); want %s, a w1 token, 1 attempt", i, c.ID, c.LeaseToken, c.Attempts, due[i])
				}
			}
			got, err = s.ClaimTasks(ctx, "w2", now, time.Minute, 10)
			if err != nil || len(got) != 2 || got[0].ID != due[3] || got[1].ID != due[4] {
				t.Fatalf("ClaimTasks(10) after 3 were leased = %v, %v; want the 2 other due tasks", got, err)
			}
			if got, err := s.ClaimTasks(ctx, "w3", now, time.Minute, 10); err != nil || len(got) != 0 {
				t.Fatalf("ClaimTasks with every due task leased = %v, %v; want none", got, err)
			}
			// Many concurrent batch claims over many due tasks.
			for range 60 {
				mustCreate(t, s, newTask(a.ID, 1))
			}
			var mu sync.Mutex
			seen := map[string]int{}
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Go(func() {
					for {
						got, err := s.ClaimTasks(ctx, "c", now, time.Minute, 4)
						if err != nil {
							t.Errorf("claimer %d: %v", w, err)
							return
						}
						if len(got) == 0 {
							return
						}
						mu.Lock()
						for _, c := range got {
							seen[c.ID]++
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(seen) != 60 {
				t.Errorf("concurrent claims took %d distinct tasks; want 60", len(seen))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("task %s claimed %d times", id, n)
				}
			}
		})
	}
}
