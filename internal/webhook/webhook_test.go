package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
	"github.com/gengate/gengate/internal/webhook"
)

// hit is one request a receiver got.
type hit struct {
	method string
	header http.Header
	body   []byte
}

// receiver is a real HTTP server on loopback answering status to every
// request, and recording them.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{r.Method, r.Header.Clone(), body})
		rc.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// fixture is a real store holding one account's finished task whose own
// webhookUrl is the URL given, and the loop's configuration around it.
type fixture struct {
	store   *sqlstore.DB
	account string
	task    string
	secret  string
	cfg     webhook.Config
}

var t0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func newFixture(t *testing.T, dialect, url string, allowPrivate bool) *fixture {
	t.Helper()
	ctx := context.Background()
	s := sqltest.Open(t, dialect)
	a := &gengate.Account{ID: gengate.NewID(), Name: "acct", CreatedAt: t0}
	if err := s.CreateAccount(ctx, a, 10); err != nil {
		t.Fatal(err)
	}
	// The task is stored as the service would after the request's own
	// check (fetch.TargetGuard): the delivery's check is the one tested.
	task := &gengate.Task{ID: gengate.NewTaskID(t0), AccountID: a.ID, ModelID: "flux-schnell", Type: "image",
		Status: gengate.StatusQueued, Prompt: "a red fox", Options: map[string]any{}, Inputs: map[string]string{}, Cost: 1,
		Fingerprint: "fp", Engine: "sandbox", RunAt: t0, CreatedAt: t0, UpdatedAt: t0, WebhookURL: url}
	if _, err := s.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	c, err := s.ClaimTask(ctx, task.ID, "w", t0, time.Minute)
	if err != nil || c == nil {
		t.Fatalf("ClaimTask = %v, %v", c, err)
	}
	c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, t0, t0
	if err := s.FinishTask(ctx, c, 0); err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: s, account: a.ID, task: task.ID, secret: gengate.NewWebhookSecret()}
	f.cfg = webhook.Config{
		Client: fetch.TargetClient(allowPrivate, 10*time.Second),
		Data: func(_ context.Context, accountID, taskID string) (map[string]any, error) {
			return map[string]any{"jobId": taskID, "status": "succeeded"}, nil
		},
		Secrets:  func(context.Context, *gengate.WebhookEvent) ([]string, error) { return []string{f.secret}, nil },
		Schedule: []time.Duration{time.Minute},
		Now:      func() time.Time { return t0.Add(time.Second) },
	}
	return f
}

// deliverOne makes the loop's one attempt and returns the event after it.
func (f *fixture) deliverOne(t *testing.T) (*gengate.WebhookEvent, []gengate.WebhookAttempt) {
	t.Helper()
	ctx := context.Background()
	did, err := webhook.DeliverOne(ctx, f.store, f.cfg)
	if err != nil || !did {
		t.Fatalf("DeliverOne = %v, %v; want an attempt", did, err)
	}
	events, attempts, err := f.store.WebhookEvents(ctx, f.account, f.task)
	if err != nil || len(events) != 1 {
		t.Fatalf("events %v, %v; want one", events, err)
	}
	return events[0], attempts[events[0].ID]
}

// TestDeliverySigned: an attempt is a POST of the event, signed so that
// the Standard Webhooks library verifies it with the secret, and a 2xx
// records it delivered.
func TestDeliverySigned(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			rc := newReceiver(t, ok)
			f := newFixture(t, d, rc.URL+"/hook", true)
			f.cfg.Now = time.Now // the library checks the signature's time against its clock
			e, attempts := f.deliverOne(t)
			if e.Status != "delivered" || len(attempts) != 1 || attempts[0].Status != http.StatusNoContent {
				t.Fatalf("event %+v attempts %+v; want delivered with one 204", e, attempts)
			}
			got := rc.got()
			if len(got) != 1 || got[0].method != http.MethodPost || got[0].header.Get("webhook-id") != e.ID {
				t.Fatalf("receiver got %+v", got)
			}
			wh, err := standardwebhooks.NewWebhook(f.secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(got[0].body, got[0].header); err != nil {
				t.Errorf("signature does not verify: %v", err)
			}
			var p struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(got[0].body, &p); err != nil || p.Type != gengate.EventSucceeded || p.Data["jobId"] != f.task {
				t.Errorf("payload %s (%v)", got[0].body, err)
			}
		})
	}
}

// TestDeliveryAddressGuard: a target whose name resolves to loopback
// (localhost, as a name that resolved to a public address when the
// webhook was accepted and to loopback later would) is refused at the
// connection: the receiver on loopback gets nothing, and the attempt is
// recorded failed with no status and the refusal. So is a loopback
// address written out. With private addresses allowed the same target
// is reached.
func TestDeliveryAddressGuard(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			rc := newReceiver(t, ok)
			_, port, err := net.SplitHostPort(rc.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range []string{"http://localhost:" + port + "/hook", "http://127.0.0.1:" + port + "/hook",
				"http://[::ffff:127.0.0.1]:" + port + "/hook"} {
				f := newFixture(t, d, u, false)
				e, attempts := f.deliverOne(t)
				if n := len(rc.got()); n != 0 {
					t.Fatalf("%s: the loopback receiver got %d requests; want the connection refused", u, n)
				}
				if e.Status != "pending" || len(attempts) != 1 || attempts[0].Status != 0 ||
					!strings.Contains(attempts[0].Error, "not allowed") {
					t.Errorf("%s: event %+v attempts %+v; want pending again after a refused connection", u, e, attempts)
				}
			}
			f := newFixture(t, d, "http://localhost:"+port+"/hook", true)
			if e, _ := f.deliverOne(t); e.Status != "delivered" || len(rc.got()) != 1 {
				t.Errorf("with private targets allowed: event %s, receiver got %d; want delivered", e.Status, len(rc.got()))
			}
		})
	}
}

// TestDeliveryNoRedirects: a receiver answering 302 is a failed attempt
// (no 2xx) and the redirect is not followed: the server it points to gets
// nothing.
func TestDeliveryNoRedirects(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			elsewhere := newReceiver(t, ok)
			redirector := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+"/stolen", http.StatusFound)
			})
			f := newFixture(t, d, redirector.URL+"/hook", true)
			e, attempts := f.deliverOne(t)
			if n := len(elsewhere.got()); n != 0 {
				t.Fatalf("the redirect's target got %d requests; want none", n)
			}
			if len(redirector.got()) != 1 || e.Status != "pending" || len(attempts) != 1 || attempts[0].Status != http.StatusFound {
				t.Errorf("event %+v attempts %+v; want one failed attempt answered 302", e, attempts)
			}
		})
	}
}

// TestDeliveryFailurePausesTarget: a failed attempt schedules the event's
// next one on the retry schedule and pauses its target: the next attempt
// is not due before both have passed.
func TestDeliveryFailurePausesTarget(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
			f := newFixture(t, d, rc.URL+"/hook", true)
			e, attempts := f.deliverOne(t)
			at := f.cfg.Now()
			if e.Status != "pending" || len(attempts) != 1 || attempts[0].Status != 503 || e.NextAt.Before(at.Add(time.Minute)) {
				t.Fatalf("event %+v attempts %+v; want pending again a minute on", e, attempts)
			}
			f.cfg.Now = func() time.Time { return at.Add(59 * time.Second) }
			if did, err := webhook.DeliverOne(context.Background(), f.store, f.cfg); did || err != nil {
				t.Fatalf("DeliverOne within the pause = %v, %v; want nothing due", did, err)
			}
			f.cfg.Now = func() time.Time { return at.Add(2 * time.Minute) }
			f.deliverOne(t)
			if n := len(rc.got()); n != 2 {
				t.Errorf("receiver got %d attempts; want 2", n)
			}
		})
	}
}

// TestRunSharesWorkers: the loop runs deliveries of several accounts at
// once, one account's no more than its share, whatever its backlog: with
// account A's receiver holding every request, B's events all arrive.
func TestRunSharesWorkers(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			var mu sync.Mutex
			held, maxHeld := 0, 0
			release := make(chan struct{})
			slow := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				held++
				maxHeld = max(maxHeld, held)
				mu.Unlock()
				select {
				case <-r.Context().Done():
				case <-release:
				}
				mu.Lock()
				held--
				mu.Unlock()
			})
			t.Cleanup(func() { close(release) })
			fast := newReceiver(t, ok)
			a := newFixture(t, d, slow.URL+"/a", true)
			ctx := context.Background()
			for i := range 5 { // more of A's tasks, to more targets, due first
				addFinished(t, a.store, a.account, fmt.Sprintf("%s/a%d", slow.URL, i), t0)
			}
			b := &gengate.Account{ID: gengate.NewID(), Name: "b", CreatedAt: t0}
			if err := a.store.CreateAccount(ctx, b, 10); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				addFinished(t, a.store, b.ID, fmt.Sprintf("%s/b%d", fast.URL, i), t0.Add(time.Second)) // due after all of A's
			}
			cfg := a.cfg
			cfg.Now, cfg.Workers, cfg.AccountWorkers, cfg.PollInterval = time.Now, 3, 2, 5*time.Millisecond
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); webhook.Run(runCtx, a.store, cfg) }()
			t.Cleanup(func() { cancel(); <-done })
			deadline := time.Now().Add(30 * time.Second)
			for len(fast.got()) < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("B's receiver got %d of 3 events while A's were held", len(fast.got()))
				}
				time.Sleep(5 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if maxHeld != 2 {
				t.Errorf("A's receiver held %d requests at most; want its share, 2", maxHeld)
			}
		})
	}
}

// addFinished stores a task of the account with the webhookUrl, finished
// at at.
func addFinished(t *testing.T, s *sqlstore.DB, accountID, url string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	task := &gengate.Task{ID: gengate.NewTaskID(now), AccountID: accountID, ModelID: "flux-schnell", Type: "image",
		Status: gengate.StatusQueued, Prompt: "a cat", Options: map[string]any{}, Inputs: map[string]string{}, Cost: 1,
		Fingerprint: "fp", Engine: "sandbox", RunAt: t0, CreatedAt: t0, UpdatedAt: t0, WebhookURL: url}
	if _, err := s.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	c, err := s.ClaimTask(ctx, task.ID, "w", now, time.Minute)
	if err != nil || c == nil {
		t.Fatalf("ClaimTask = %v, %v", c, err)
	}
	c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, at, at
	if err := s.FinishTask(ctx, c, 0); err != nil {
		t.Fatal(err)
	}
}
