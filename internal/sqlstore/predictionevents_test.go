package sqlstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestPredictionWebhookEvents: a prediction's webhookUrl gets the events
// its filter names, written by the store with the state changes: start by
// the step claim that moves it out of queued, once (not again when it is
// queued again and claimed); logs with a progress report whose lines
// changed, at most one per PredictionLogsInterval and none for a report
// without lines, each keeping its lines; output and completed with
// success (completed alone with failure). The outbox gives them out in
// that order, each only once the one before it is no longer pending. A
// task with a plain webhookUrl gets its final-state event, one without
// any nothing; the account's endpoint gets its final-state event
// whatever the filter. On both databases.
func TestPredictionWebhookEvents(t *testing.T) {
	logsA, logsAB := []string{"Using seed: 42"}, []string{"Using seed: 42", " 50%|#####     | 14/28"}
	logsABC := append(slices.Clone(logsAB), "100%|##########| 28/28")
	cases := []struct {
		name    string
		url     string
		events  []string
		fail    bool
		want    []string // the task's own events, in delivery order: type, and logs for logs events
		wantEnd int      // the endpoint's events
	}{
		{name: "all", url: "https://example.com/all", events: gengate.PredictionEvents, wantEnd: 1, want: []string{
			"prediction.start", "prediction.logs:Using seed: 42", "prediction.logs:Using seed: 42\n 50%|#####     | 14/28\n100%|##########| 28/28",
			"prediction.output", "prediction.completed"}},
		{name: "all failed", url: "https://example.com/failed", events: gengate.PredictionEvents, fail: true, wantEnd: 0, want: []string{
			"prediction.start", "prediction.logs:Using seed: 42", "prediction.logs:Using seed: 42\n 50%|#####     | 14/28\n100%|##########| 28/28",
			"prediction.completed"}},
		{name: "completed", url: "https://example.com/completed", events: []string{"completed"}, wantEnd: 1,
			want: []string{"prediction.completed"}},
		{name: "start", url: "https://example.com/start", events: []string{"start"}, wantEnd: 1, want: []string{"prediction.start"}},
		{name: "output logs", url: "https://example.com/ol", events: []string{"output", "logs"}, wantEnd: 1, want: []string{
			"prediction.logs:Using seed: 42", "prediction.logs:Using seed: 42\n 50%|#####     | 14/28\n100%|##########| 28/28", "prediction.output"}},
		{name: "plain webhookUrl", url: "https://example.com/plain", wantEnd: 1, want: []string{gengate.EventSucceeded}},
		{name: "no webhook", wantEnd: 1},
	}
	for _, d := range sqltest.Dialects {
		for _, c := range cases {
			t.Run(d+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				s := sqltest.Open(t, d)
				a := newAccount(t, s, 100)
				ep := &gengate.WebhookEndpoint{ID: "ep_" + gengate.NewID(), AccountID: a.ID, URL: "https://example.com/ep",
					EventTypes: []string{gengate.EventSucceeded}, CreatedAt: t0, Keys: gengate.WebhookKeys{Secret: "sealed"}}
				if err := s.CreateWebhookEndpoint(ctx, ep, 10); err != nil {
					t.Fatal(err)
				}
				task := newTask(a.ID, 1)
				task.WebhookURL, task.WebhookEvents = c.url, c.events
				mustCreate(t, s, task)

				// The step claim, then the task queued again (a refused
				// submit moves it to its next route) and claimed again.
				claimed := claimSteps(t, s, t0)
				claimed.Status, claimed.RunAt = gengate.StatusQueued, t0
				if err := s.SaveStep(ctx, claimed, true); err != nil {
					t.Fatal(err)
				}
				claimed = claimSteps(t, s, t0.Add(time.Second))
				claimed.Status = gengate.StatusRunning
				if err := s.SaveStep(ctx, claimed, false); err != nil {
					t.Fatal(err)
				}
				at := t0.Add(2 * time.Second)
				for _, r := range []struct {
					after time.Duration
					logs  []string
				}{
					{0, logsA},
					{100 * time.Millisecond, logsAB},   // within the interval
					{700 * time.Millisecond, logsABC},  // the interval passed
					{1300 * time.Millisecond, nil},     // no lines
					{1400 * time.Millisecond, logsABC}, // the lines of the last logs event
				} {
					if err := s.SaveProgress(ctx, task.ID, &gengate.Report{Status: "processing", Logs: r.logs, At: at.Add(r.after)}); err != nil {
						t.Fatal(err)
					}
				}
				end := at.Add(2 * time.Second)
				claimed.Status, claimed.UpdatedAt, claimed.CompletedAt = gengate.StatusSucceeded, end, end
				if c.fail {
					claimed.Status, claimed.ErrorCode, claimed.ErrorMessage = gengate.StatusFailed, gengate.EFailed, "no"
				}
				if err := s.FinishTask(ctx, claimed, 0); err != nil {
					t.Fatal(err)
				}

				got, endpoint := deliverInOrder(t, s, end)
				if !slices.Equal(got, c.want) {
					t.Errorf("the task's own events, in delivery order:\n%q\nwant\n%q", got, c.want)
				}
				if endpoint != c.wantEnd {
					t.Errorf("the endpoint got %d events, want %d", endpoint, c.wantEnd)
				}
				if c.url == "" {
					if n := count(t, s, `SELECT COUNT(*) FROM webhook_events WHERE endpoint_id = ''`); n != 0 {
						t.Errorf("a task without a webhook has %d events of its own", n)
					}
				}
			})
		}
	}
}

// claimSteps claims the one due task with ClaimSteps at now.
func claimSteps(t *testing.T, s *sqlstore.DB, now time.Time) *gengate.Task {
	t.Helper()
	tasks, err := s.ClaimSteps(context.Background(), "w", now, time.Minute, 4)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("ClaimSteps = %v, %v; want one task", tasks, err)
	}
	return tasks[0]
}

// deliverInOrder claims every due event at now, one at a time, and
// records each delivered: the task's own events (type, and ":logs" for a
// logs event) in the order the claims gave them, and how many events
// the endpoints got. While a task's own event is claimed, the claim gives
// none of its later ones.
func deliverInOrder(t *testing.T, s *sqlstore.DB, now time.Time) (own []string, endpoint int) {
	t.Helper()
	ctx := context.Background()
	for {
		e, err := s.ClaimWebhookEvent(ctx, now, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return own, endpoint
		}
		if e.EndpointID != "" {
			endpoint++
		} else {
			if other, err := s.ClaimWebhookEvent(ctx, now, time.Minute, 0); err != nil || (other != nil && other.EndpointID == "") {
				t.Fatalf("while %s is in flight the claim gave %+v, %v", e.Type, other, err)
			} else if other != nil { // an endpoint's: deliver it too
				endpoint++
				record(t, s, other, now)
			}
			name := e.Type
			if ev, _ := gengate.PredictionEvent(e.Type); ev == gengate.PredictionLogs {
				name += ":" + e.Logs
			}
			own = append(own, name)
		}
		record(t, s, e, now)
	}
}

func record(t *testing.T, s *sqlstore.DB, e *gengate.WebhookEvent, now time.Time) {
	t.Helper()
	err := s.RecordWebhookAttempt(context.Background(), e, gengate.WebhookAttempt{N: e.Attempts, At: now, Status: 200},
		gengate.WebhookOutcome{Status: "delivered"})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPredictionWebhooksMigrateDown: undoing migration 00036 (a rollback)
// leaves the previous release's form: a prediction with completed in its
// filter keeps its webhookUrl with the fragment mark and its completed
// event as a final-state event to that URL; one without loses its
// webhook; the other prediction events go. Migrating up again works. On
// both databases.
func TestPredictionWebhooksMigrateDown(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			s, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			a := newAccount(t, s, 100)
			done := newTask(a.ID, 1)
			done.WebhookURL, done.WebhookEvents = "https://example.com/done", []string{"start", "completed"}
			mustCreate(t, s, done)
			c := claimSteps(t, s, t0)
			c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusFailed, t0, t0
			if err := s.FinishTask(ctx, c, 0); err != nil {
				t.Fatal(err)
			}
			startOnly := newTask(a.ID, 1)
			startOnly.WebhookURL, startOnly.WebhookEvents = "https://example.com/start", []string{"start"}
			mustCreate(t, s, startOnly)
			claimSteps(t, s, t0)
			if n := count(t, s, `SELECT COUNT(*) FROM webhook_events`); n != 3 {
				t.Fatalf("%d events before the rollback, want 3 (two starts, a completed)", n)
			}

			if err := s.MigrateDownTo(ctx, 35); err != nil {
				t.Fatal(err)
			}
			var hook, typ, evURL string
			if err := s.SQL().QueryRow(`SELECT url FROM task_webhooks WHERE task_id = $1`, done.ID).Scan(&hook); err != nil {
				t.Fatal(err)
			}
			if err := s.SQL().QueryRow(`SELECT type, url FROM webhook_events`).Scan(&typ, &evURL); err != nil {
				t.Fatal(err) // one row, or an error
			}
			const marked = "https://example.com/done#gengate-replicate-prediction"
			if hook != marked || typ != gengate.EventFailed || evURL != marked {
				t.Errorf("after the rollback: webhookUrl %q, event %s to %q; want %s and the marked URL", hook, typ, evURL, gengate.EventFailed)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM task_webhooks WHERE task_id = $1`, startOnly.ID); n != 0 {
				t.Errorf("a prediction without completed kept its webhook after the rollback")
			}
			s.Close()

			s, err = sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatalf("migrate up again: %v", err)
			}
			defer s.Close()
			if n := count(t, s, `SELECT COUNT(*) FROM task_webhooks WHERE events = '' AND url = $1`, marked); n != 1 {
				t.Errorf("after migrating up again, %d marked webhooks", n)
			}
		})
	}
}
