package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// finishAt creates n tasks of the account with the webhookUrl (none when
// url is "") and finishes them (succeeded at at); it returns their ids.
func finishAt(t *testing.T, s *sqlstore.DB, accountID, url string, n int, at time.Time) []string {
	t.Helper()
	var ids []string
	for range n {
		task := newTask(accountID, 1)
		task.WebhookURL = url
		mustCreate(t, s, task)
		c := mustClaim(t, s, task.ID, t0)
		c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, at, at
		if err := s.FinishTask(context.Background(), c, 0); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	return ids
}

// newEndpoint adds an endpoint that wants every event type to the account.
func newEndpoint(t *testing.T, s *sqlstore.DB, accountID, url string) *gengate.WebhookEndpoint {
	t.Helper()
	ep := &gengate.WebhookEndpoint{ID: "ep_" + gengate.NewID(), AccountID: accountID, URL: url,
		EventTypes: gengate.EventTypes, CreatedAt: t0, Keys: gengate.WebhookKeys{Secret: "sealed"}}
	if err := s.CreateWebhookEndpoint(context.Background(), ep, 10); err != nil {
		t.Fatal(err)
	}
	return ep
}

// claim claims at now with the account cap, failing the test on an error.
func claim(t *testing.T, s *sqlstore.DB, now time.Time, perAccount int) *gengate.WebhookEvent {
	t.Helper()
	e, err := s.ClaimWebhookEvent(context.Background(), now, time.Minute, perAccount)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestWebhookClaimAccountShare: with an account's share of deliveries in
// flight, the claim passes over its earlier due events to another
// account's; once one of its deliveries is recorded, it gets the next
// turn again. A lease run out (a killed process) no longer counts.
func TestWebhookClaimAccountShare(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a, b := newAccount(t, s, 100), newAccount(t, s, 100)
			finishAt(t, s, a.ID, "https://a.example/hook", 5, t0)                  // due first
			finishAt(t, s, b.ID, "https://b.example/hook", 1, t0.Add(time.Second)) // due later
			now := t0.Add(2 * time.Second)
			first, second := claim(t, s, now, 2), claim(t, s, now, 2)
			if first == nil || second == nil || first.AccountID != a.ID || second.AccountID != a.ID {
				t.Fatalf("first claims %+v, %+v; want account A's earlier events", first, second)
			}
			third := claim(t, s, now, 2)
			if third == nil || third.AccountID != b.ID {
				t.Fatalf("claim with A's share in flight = %+v; want B's event", third)
			}
			if e := claim(t, s, now, 2); e != nil {
				t.Fatalf("claim with A at its share and B done = %+v; want none", e)
			}
			if err := s.RecordWebhookAttempt(ctx, third, gengate.WebhookAttempt{N: 1, At: now, Status: 200},
				gengate.WebhookOutcome{Status: "delivered"}); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordWebhookAttempt(ctx, first, gengate.WebhookAttempt{N: 1, At: now, Status: 200},
				gengate.WebhookOutcome{Status: "delivered"}); err != nil {
				t.Fatal(err)
			}
			if e := claim(t, s, now, 2); e == nil || e.AccountID != a.ID {
				t.Fatalf("claim after one of A's was recorded = %+v; want A's next", e)
			}
			// A's two leases run out (their process was killed): A's
			// events are claimable again, up to its share.
			later := now.Add(2 * time.Minute)
			if e1, e2, e3 := claim(t, s, later, 2), claim(t, s, later, 2), claim(t, s, later, 2); e1 == nil || e2 == nil || e3 != nil {
				t.Fatalf("claims after the leases ran out = %v, %v, %v; want two of A's, then none", e1 != nil, e2 != nil, e3 != nil)
			}
		})
	}
}

// TestWebhookTargetBackoff: a failed attempt pauses its endpoint: its
// other events (and one made during the pause) are not claimed until the
// pause has passed; then one probes the endpoint alone; its success ends
// the pause. Another endpoint of the same account is not paused.
func TestWebhookTargetBackoff(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			dead := newEndpoint(t, s, a.ID, "https://dead.example/hook")
			finishAt(t, s, a.ID, "", 3, t0)
			backoff := func(failures int) time.Duration { return time.Duration(failures) * 10 * time.Second }
			now := t0.Add(time.Second)
			e := claim(t, s, now, 0)
			if e == nil || e.EndpointID != dead.ID {
				t.Fatalf("claim = %+v", e)
			}
			if err := s.RecordWebhookAttempt(ctx, e, gengate.WebhookAttempt{N: 1, At: now, Error: "timeout"},
				gengate.WebhookOutcome{Status: "pending", Next: now.Add(time.Second), Backoff: backoff}); err != nil {
				t.Fatal(err)
			}
			live := newEndpoint(t, s, a.ID, "https://live.example/hook")
			finishAt(t, s, a.ID, "", 1, now) // one event for each endpoint
			for _, at := range []time.Duration{2 * time.Second, 9 * time.Second} {
				got := claim(t, s, now.Add(at), 0)
				if got == nil || got.EndpointID != live.ID {
					t.Fatalf("claim %s into the pause = %+v; want only the live endpoint's event", at, got)
				}
				if err := s.RecordWebhookAttempt(ctx, got, gengate.WebhookAttempt{N: got.Attempts, At: now.Add(at), Status: 200},
					gengate.WebhookOutcome{Status: "delivered"}); err != nil {
					t.Fatal(err)
				}
				if at == 2*time.Second {
					finishAt(t, s, a.ID, "", 1, now.Add(at)) // another for each, made during the pause
				}
			}
			end := now.Add(11 * time.Second)
			probe := claim(t, s, end, 0)
			if probe == nil || probe.EndpointID != dead.ID {
				t.Fatalf("claim after the pause = %+v; want one of the dead endpoint's events", probe)
			}
			if e := claim(t, s, end, 0); e != nil {
				t.Fatalf("claim while the probe is in flight = %+v; want none", e)
			}
			if err := s.RecordWebhookAttempt(ctx, probe, gengate.WebhookAttempt{N: probe.Attempts, At: end, Status: 200},
				gengate.WebhookOutcome{Status: "delivered", Backoff: backoff}); err != nil {
				t.Fatal(err)
			}
			n := 0
			for claim(t, s, end.Add(time.Minute), 0) != nil {
				n++
			}
			if n != 4 { // 3 + 2 - the probe
				t.Errorf("after the probe's success %d of the endpoint's events were due; want 4", n)
			}
		})
	}
}

// countRows counts the rows of a table matching the condition.
func countRows(t *testing.T, s *sqlstore.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWebhookEventsBounded: an endpoint keeps its newest events up to the
// bound (the older go with their attempts), and an event its newest
// attempts up to KeepAttempts.
func TestWebhookEventsBounded(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.OpenWith(t, d, sqlstore.WithMaxWebhookEventsPerEndpoint(3))
			a := newAccount(t, s, 100)
			ep := newEndpoint(t, s, a.ID, "https://ep.example/hook")
			old := finishAt(t, s, a.ID, "", 1, t0)
			e := claim(t, s, t0, 0)
			for n := 1; n <= 5; n++ { // five failed attempts, two kept
				if err := s.RecordWebhookAttempt(ctx, e, gengate.WebhookAttempt{N: n, At: t0, Error: "down"},
					gengate.WebhookOutcome{Status: "pending", Next: t0, KeepAttempts: 2}); err != nil {
					t.Fatal(err)
				}
				if n < 5 {
					e = claim(t, s, t0, 0)
				}
			}
			if n := countRows(t, s, `webhook_attempts WHERE event_id = $1 AND n IN (4, 5)`, e.ID); n != 2 ||
				countRows(t, s, `webhook_attempts WHERE event_id = $1`, e.ID) != 2 {
				t.Errorf("the event keeps %d attempts; want its newest two", countRows(t, s, `webhook_attempts WHERE event_id = $1`, e.ID))
			}
			for i := range 4 {
				finishAt(t, s, a.ID, "https://own.example/hook", 1, t0.Add(time.Duration(i+1)*time.Second))
			}
			if n := countRows(t, s, `webhook_events WHERE endpoint_id = $1`, ep.ID); n != 3 {
				t.Errorf("the endpoint keeps %d events; want 3", n)
			}
			if n := countRows(t, s, `webhook_events WHERE task_id = $1`, old[0]); n != 0 {
				t.Errorf("the oldest event is kept beyond the bound")
			}
			if n := countRows(t, s, `webhook_attempts WHERE event_id = $1`, e.ID); n != 0 {
				t.Errorf("the deleted event's %d attempts are kept", n)
			}
			if n := countRows(t, s, `webhook_events WHERE endpoint_id = ''`); n != 4 {
				t.Errorf("%d events of the tasks' own webhookUrl; want all 4 (the bound is per endpoint)", n)
			}
		})
	}
}

// TestPurgeDeletesWebhookEvents: purging task records deletes their
// webhook events and the events' attempts, and leaves those of the tasks
// kept.
func TestPurgeDeletesWebhookEvents(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			newEndpoint(t, s, a.ID, "https://ep.example/hook")
			gone := finishAt(t, s, a.ID, "https://own.example/hook", 2, t0)
			kept := finishAt(t, s, a.ID, "https://own.example/hook", 1, t0.Add(time.Hour))
			for e := claim(t, s, t0.Add(2*time.Hour), 0); e != nil; e = claim(t, s, t0.Add(2*time.Hour), 0) {
				if err := s.RecordWebhookAttempt(ctx, e, gengate.WebhookAttempt{N: 1, At: t0, Error: "down"},
					gengate.WebhookOutcome{Status: "failed"}); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := s.PurgeTasks(ctx, t0.Add(time.Minute)); err != nil || n != 2 {
				t.Fatalf("PurgeTasks = %d, %v; want 2", n, err)
			}
			for _, id := range gone {
				if n := countRows(t, s, `webhook_events WHERE task_id = $1`, id); n != 0 {
					t.Errorf("purged task %s keeps %d events", id, n)
				}
			}
			if n := countRows(t, s, `webhook_attempts`); n != 2 {
				t.Errorf("%d attempts left; want the kept task's 2", n)
			}
			if n := countRows(t, s, `webhook_events WHERE task_id = $1`, kept[0]); n != 2 {
				t.Errorf("the kept task has %d events; want 2", n)
			}
		})
	}
}
