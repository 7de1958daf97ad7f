package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/webhook"
)

// tarpit is a real HTTP server on loopback that reads each request and
// never answers it: its handler holds the request until the client gives
// up (or the test ends). It counts the requests it holds.
type tarpit struct {
	*httptest.Server
	mu            sync.Mutex
	held, maxHeld int
	total         int
}

func newTarpit(t *testing.T) *tarpit {
	tp := &tarpit{}
	release := make(chan struct{})
	tp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.mu.Lock()
		tp.held++
		tp.total++
		tp.maxHeld = max(tp.maxHeld, tp.held)
		tp.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-release:
		}
		tp.mu.Lock()
		tp.held--
		tp.mu.Unlock()
	}))
	t.Cleanup(func() { close(release); tp.Close() })
	return tp
}

func (tp *tarpit) counts() (held, maxHeld, total int) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.held, tp.maxHeld, tp.total
}

// startWebhooksWith runs the delivery loop with cfg (Client, Data,
// Secrets and Log filled in) until the test ends.
func (s *stack) startWebhooksWith(cfg webhook.Config, timeout time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log := slog.New(slog.DiscardHandler)
	cfg.Client = fetch.TargetClient(true, timeout)
	cfg.Data = httpapi.WebhookData(s.svc, httpapi.Config{}, s.URL, log)
	cfg.Secrets = s.svc.WebhookSigningSecrets
	cfg.Log = log
	go func() {
		defer close(done)
		webhook.Run(ctx, s.store, cfg)
	}()
	s.t.Cleanup(func() { cancel(); <-done })
}

// TestWebhookFairness: account A's ten endpoints sit at a tarpit (a
// receiver that takes every request and never answers, each attempt held
// for the whole 60 s timeout), and A's two tasks give them 20 events;
// account B's task then gets its event to B's receiver within a few
// seconds, although the process runs only 4 delivery workers: A holds
// at most its share (2) of them at once.
func TestWebhookFairness(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		s.svc.Webhooks.Guard = fetch.TargetGuard(true)
		pit := newTarpit(t) // before the loop: its cleanup runs after the loop's
		const workers, share = 4, 2
		s.startWebhooksWith(webhook.Config{Workers: workers, AccountWorkers: share}, time.Minute)
		a, b := s.holder(100, false), s.holder(100, false)
		for i := range 10 {
			wantStatus(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: a.key,
				Body: map[string]any{"url": pit.URL + "/ep" + strconv.Itoa(i)}}), http.StatusCreated)
		}
		rcv := newReceiver(t)
		wantStatus(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: b.key, Body: map[string]any{"url": rcv.URL}}),
			http.StatusCreated)
		for _, p := range []string{"a cat", "a dog"} {
			wantStatus(t, s.generate(a.key, flux(p), nil), http.StatusOK)
		}
		waitFor(t, "A's deliveries held by the tarpit", func() bool { held, _, _ := pit.counts(); return held >= share })

		r := s.generate(b.key, flux("a bird"), nil)
		wantStatus(t, r, http.StatusOK) // B's task has succeeded: its event is due now
		done := time.Now()
		for len(rcv.deliveries()) == 0 && time.Since(done) < 10*time.Second { // the claim is seconds: fail fast without it
			time.Sleep(5 * time.Millisecond)
		}
		took := time.Since(done)
		held, maxHeld, total := pit.counts()
		t.Logf("%d of B's events received %s after its task finished; the tarpit holds %d of A's attempts (at most %d at once, %d in all)",
			len(rcv.deliveries()), took.Round(time.Millisecond), held, maxHeld, total)
		if len(rcv.deliveries()) == 0 || took > 5*time.Second {
			t.Errorf("B's delivery came %s after its task finished (%d received); want a few seconds at most", took, len(rcv.deliveries()))
		}
		if maxHeld > share {
			t.Errorf("A held %d deliveries at once; its share is %d", maxHeld, share)
		}
	})
}
