package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestClaimHoldsUnreadableRows: a claimed task whose stored JSON cannot be
// decoded goes to review (its credits held) and the claim returns the
// others, instead of failing as a whole at every claim that reaches it.
func TestClaimHoldsUnreadableRows(t *testing.T) {
	for _, d := range sqltest.Dialects {
		for _, steps := range []bool{false, true} {
			name := d + "/ClaimTasks"
			if steps {
				name = d + "/ClaimSteps"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				s := sqltest.Open(t, d)
				a := newAccount(t, s, 100)
				good, bad := newTask(a.ID, 1), newTask(a.ID, 1)
				bad.RunAt = t0.Add(-time.Second) // the first the claim reaches
				mustCreate(t, s, good)
				mustCreate(t, s, bad)
				if _, err := s.SQL().ExecContext(ctx, `UPDATE tasks SET options = '{"aspectRatio":' WHERE id = $1`, bad.ID); err != nil {
					t.Fatal(err)
				}
				claim := s.ClaimTasks
				if steps {
					claim = s.ClaimSteps
				}
				got, err := claim(ctx, "w", t0.Add(time.Second), time.Minute, 10)
				if err != nil || len(got) != 1 || got[0].ID != good.ID {
					t.Fatalf("claim = %d tasks, %v; want the readable task only", len(got), err)
				}
				if got[0].Status != gengate.StatusQueued || got[0].Checkpointed != steps || got[0].LeaseToken == "" ||
					got[0].Options["aspectRatio"] != "1:1" {
					t.Errorf("claimed task: status %s, checkpointed %v, token %q, options %v", got[0].Status, got[0].Checkpointed,
						got[0].LeaseToken, got[0].Options)
				}
				var status, reason, token string
				if err := s.SQL().QueryRowContext(ctx, `SELECT status, review_reason, lease_token FROM tasks WHERE id = $1`, bad.ID).
					Scan(&status, &reason, &token); err != nil {
					t.Fatal(err)
				}
				if status != string(gengate.StatusNeedsReview) || reason != gengate.ReviewUnreadable || token != "" {
					t.Errorf("unreadable task: status %s, reason %q, token %q; want needs_review, %s, unleased", status, reason, token,
						gengate.ReviewUnreadable)
				}
				acct, err := s.FindAccount(ctx, a.ID)
				if err != nil || acct.Balance != 98 {
					t.Errorf("balance %v, %v; want 98 (both charged, nothing refunded)", acct, err)
				}
				if again, err := claim(ctx, "w", t0.Add(2*time.Second), time.Minute, 10); err != nil || len(again) != 0 {
					t.Errorf("next claim = %d tasks, %v; want none", len(again), err)
				}
			})
		}
	}
}

// TestClaimHandsBackWhatItCannotRead: on SQLite the claimed tasks are read
// after the claim's commit; when that read fails, the claim is undone in
// one write (leases cleared, the attempt not counted, the checkpointed
// tasks queued again) and the claim answers the error.
func TestClaimHandsBackWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "sqlite")
	a := newAccount(t, s, 100)
	queued, running := newTask(a.ID, 1), newTask(a.ID, 1)
	mustCreate(t, s, queued)
	mustCreate(t, s, running)
	c, err := s.ClaimTask(ctx, running.ID, "setup", t0, time.Millisecond)
	if err != nil || c == nil {
		t.Fatalf("claim for setup: %v, %v", c, err)
	}
	c.Status, c.UpstreamID, c.Attempts = gengate.StatusRunning, "up-1", 0
	if err := s.SaveStep(ctx, c, true); err != nil {
		t.Fatal(err)
	}
	s.CloseReaders()
	got, err := s.ClaimSteps(ctx, "w", t0.Add(time.Second), time.Minute, 10)
	if err == nil || len(got) != 0 {
		t.Fatalf("ClaimSteps = %d tasks, %v; want the read's error", len(got), err)
	}
	for id, want := range map[string]gengate.Status{queued.ID: gengate.StatusQueued, running.ID: gengate.StatusRunning} {
		var status, token string
		var attempts int
		var until int64
		if err := s.SQL().QueryRowContext(ctx, `SELECT status, lease_token, lease_until, attempts FROM tasks WHERE id = $1`, id).
			Scan(&status, &token, &until, &attempts); err != nil {
			t.Fatal(err)
		}
		if status != string(want) || token != "" || until != 0 || attempts != 0 {
			t.Errorf("task after the failed claim: status %s, token %q, lease until %d, attempts %d; want %s, unleased, 0 attempts",
				status, token, until, attempts, want)
		}
	}
}
