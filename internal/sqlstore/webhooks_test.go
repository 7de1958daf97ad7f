package sqlstore_test

import (
	"context"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// finishWithEvents creates n tasks of the account with a webhookUrl,
// finishes them (succeeded at t0) and returns their ids: each writes one
// event per target (its webhookUrl, and each endpoint that wants it).
func finishWithEvents(t *testing.T, s *sqlstore.DB, accountID string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		task := newTask(accountID, 1)
		task.WebhookURL = "https://example.com/hook"
		mustCreate(t, s, task)
		c := mustClaim(t, s, task.ID, t0)
		c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, t0, t0
		if err := s.FinishTask(context.Background(), c, 0); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	return ids
}

// TestWebhookClaimConcurrent: claimers racing over the outbox never get
// the same event; every event is claimed exactly once (an endpoint's
// events included).
func TestWebhookClaimConcurrent(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			ep := &gengate.WebhookEndpoint{ID: "ep_" + gengate.NewID(), AccountID: a.ID, URL: "https://example.com/ep",
				EventTypes: []string{gengate.EventSucceeded}, CreatedAt: t0, Keys: gengate.WebhookKeys{Secret: "sealed"}}
			if err := s.CreateWebhookEndpoint(ctx, ep, 10); err != nil {
				t.Fatal(err)
			}
			const tasks = 15
			finishWithEvents(t, s, a.ID, tasks)
			now := t0.Add(time.Second)
			var mu sync.Mutex
			claimed := map[string]int{}
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						e, err := s.ClaimWebhookEvent(ctx, now, time.Minute, 0)
						if err != nil {
							t.Error(err)
							return
						}
						if e == nil {
							return
						}
						mu.Lock()
						claimed[e.ID]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			for { // what a lost race left: claimed now, one at a time
				e, err := s.ClaimWebhookEvent(ctx, now, time.Minute, 0)
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				claimed[e.ID]++
			}
			if len(claimed) != 2*tasks {
				t.Errorf("%d events claimed, want %d (a webhookUrl and an endpoint per task)", len(claimed), 2*tasks)
			}
			for id, n := range claimed {
				if n != 1 {
					t.Errorf("event %s claimed %d times while its lease held", id, n)
				}
			}
		})
	}
}

// TestWebhookLeaseReclaimed: a claimed event is not claimed again while its
// lease holds; once it has run out (a killed process) it is, as the next
// attempt with the same id; the superseded claim's late record is
// ignored; a replay makes a delivered event due again with a fresh
// schedule.
func TestWebhookLeaseReclaimed(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			id := finishWithEvents(t, s, a.ID, 1)[0]
			first, err := s.ClaimWebhookEvent(ctx, t0, time.Minute, 0)
			if err != nil || first == nil || first.Attempts != 1 {
				t.Fatalf("first claim %+v, %v", first, err)
			}
			if e, err := s.ClaimWebhookEvent(ctx, t0.Add(59*time.Second), time.Minute, 0); e != nil || err != nil {
				t.Fatalf("claimed again within the lease: %+v, %v", e, err)
			}
			second, err := s.ClaimWebhookEvent(ctx, t0.Add(61*time.Second), time.Minute, 0)
			if err != nil || second == nil || second.ID != first.ID || second.Attempts != 2 {
				t.Fatalf("claim after the lease ran out %+v, %v; want %s, attempt 2", second, err, first.ID)
			}
			// The first (killed) claim's late record changes nothing.
			if err := s.RecordWebhookAttempt(ctx, first, gengate.WebhookAttempt{N: 1, At: t0, Status: 500, Error: "x"}, gengate.WebhookOutcome{Status: "pending", Next: t0}); err != nil {
				t.Fatal(err)
			}
			at := t0.Add(62 * time.Second)
			if err := s.RecordWebhookAttempt(ctx, second, gengate.WebhookAttempt{N: 2, At: at, Status: 200}, gengate.WebhookOutcome{Status: "delivered"}); err != nil {
				t.Fatal(err)
			}
			events, attempts, err := s.WebhookEvents(ctx, a.ID, id)
			if err != nil || len(events) != 1 || events[0].Status != "delivered" || len(attempts[first.ID]) != 1 || attempts[first.ID][0].N != 2 {
				t.Fatalf("events %+v attempts %+v, %v; want delivered with attempt 2 only", events, attempts, err)
			}
			if others, _, _ := s.WebhookEvents(ctx, newAccount(t, s, 0).ID, id); len(others) != 0 {
				t.Errorf("another account reads the task's events: %+v", others)
			}
			// Replay: due again, same id, the schedule restarting.
			if _, err := s.ReplayWebhookEvent(ctx, "other-account", first.ID, at); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Errorf("replay by another account: %v", err)
			}
			r, err := s.ReplayWebhookEvent(ctx, a.ID, first.ID, at)
			if err != nil || r.Status != "pending" || r.ScheduleFrom != 2 {
				t.Fatalf("replay %+v, %v", r, err)
			}
			third, err := s.ClaimWebhookEvent(ctx, at, time.Minute, 0)
			if err != nil || third == nil || third.ID != first.ID || third.Attempts-third.ScheduleFrom != 1 {
				t.Fatalf("claim after replay %+v, %v", third, err)
			}
		})
	}
}

// TestWebhookEventRows: a finish writes one outbox row for the task's
// webhookUrl and one for each of its account's endpoints that wants the
// event type (not for one that does not, nor for another account's), the
// task's first, then the endpoints in the order they were made, each with
// an id of its own of the form "msg_" and a version 4 UUID.
func TestWebhookEventRows(t *testing.T) {
	uuid := regexp.MustCompile(`^msg_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a, other := newAccount(t, s, 100), newAccount(t, s, 100)
			for i, e := range []struct {
				account, id string
				types       []string
			}{
				{a.ID, "ep_b", []string{gengate.EventFailed, gengate.EventSucceeded}},
				{a.ID, "ep_a", []string{gengate.EventSucceeded}},
				{a.ID, "ep_c", []string{gengate.EventFailed}},
				{other.ID, "ep_d", []string{gengate.EventSucceeded}},
			} {
				ep := &gengate.WebhookEndpoint{ID: e.id, AccountID: e.account, URL: "https://example.com/" + e.id,
					EventTypes: e.types, CreatedAt: t0.Add(time.Duration(i) * time.Second), Keys: gengate.WebhookKeys{Secret: "sealed"}}
				if err := s.CreateWebhookEndpoint(ctx, ep, 10); err != nil {
					t.Fatal(err)
				}
			}
			for _, hook := range []bool{true, false} {
				task := newTask(a.ID, 1)
				if hook {
					task.WebhookURL = "https://example.com/hook"
				}
				mustCreate(t, s, task)
				c := mustClaim(t, s, task.ID, t0)
				c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, t0, t0
				if err := s.FinishTask(ctx, c, 0); err != nil {
					t.Fatal(err)
				}
				rows, err := s.SQL().QueryContext(ctx, `SELECT id, url, endpoint_id, type, account_id FROM webhook_events
					WHERE task_id = $1 ORDER BY created_at, `+map[bool]string{true: "ctid", false: "rowid"}[s.Postgres()], task.ID)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				ids := map[string]bool{}
				for rows.Next() {
					var id, url, ep, typ, acct string
					if err := rows.Scan(&id, &url, &ep, &typ, &acct); err != nil {
						t.Fatal(err)
					}
					if !uuid.MatchString(id) || ids[id] || typ != gengate.EventSucceeded || acct != a.ID {
						t.Errorf("event %s (%s, %s): want a fresh msg_<uuid v4> id, type %s, account %s", id, typ, acct, gengate.EventSucceeded, a.ID)
					}
					ids[id] = true
					got = append(got, ep+" "+url)
				}
				rows.Close()
				want := []string{"ep_b https://example.com/ep_b", "ep_a https://example.com/ep_a"}
				if hook {
					want = append([]string{" https://example.com/hook"}, want...)
				}
				if !slices.Equal(got, want) {
					t.Errorf("webhookUrl %v: events %q; want %q", hook, got, want)
				}
			}
		})
	}
}
