package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/webhook"
)

// delivery is one request a receiver got.
type delivery struct {
	header http.Header
	body   []byte
}

// receiver is a real HTTP webhook receiver on loopback that answers the
// statuses in fail first (one per request), then 200.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []delivery
	fail []int
}

func newReceiver(t *testing.T, fail ...int) *receiver {
	r := newReceiverUnstarted(t, fail...)
	r.Start()
	return r
}

// newReceiverUnstarted is newReceiver not yet listening (Start it).
func newReceiverUnstarted(t *testing.T, fail ...int) *receiver {
	r := &receiver{fail: fail}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body})
		status := http.StatusOK
		if len(r.fail) > 0 {
			status, r.fail = r.fail[0], r.fail[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// testWebhookBox seals the stacks' webhook secrets: one key for every
// stack, as the processes of one install share theirs.
var testWebhookBox = func() *gengate.SecretBox {
	b, err := gengate.NewSecretBox([]byte("the test server key, 32 bytes or more"))
	if err != nil {
		panic(err)
	}
	return b
}()

// startWebhooks runs the delivery loop for the stack until the test ends,
// private targets allowed (the receiver is on loopback).
func (s *stack) startWebhooks(schedule []time.Duration) {
	s.startWebhooksTimeout(schedule, 10*time.Second)
}

// startWebhooksTimeout is startWebhooks with the attempt timeout given.
func (s *stack) startWebhooksTimeout(schedule []time.Duration, timeout time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log := slog.New(slog.DiscardHandler)
	go func() {
		defer close(done)
		webhook.Run(ctx, s.store, webhook.Config{
			Client:       fetch.TargetClient(true, timeout),
			Data:         httpapi.WebhookData(s.svc, httpapi.Config{}, s.URL, log),
			Body:         httpapi.WebhookBody(s.svc, httpapi.Config{Facades: testFacades}, s.URL, log),
			Secrets:      s.svc.WebhookSigningSecrets,
			Sign:         httpapi.WebhookSigner(s.svc),
			Schedule:     schedule,
			PollInterval: 10 * time.Millisecond,
			Log:          log,
		})
	}()
	s.t.Cleanup(func() { cancel(); <-done })
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 2*time.Minute, what, cond)
}

// waitWithin polls cond until it holds, failing the test after d: for a
// condition that holds at once unless the rule under test is broken.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// webhookEvents returns the "webhook" member's events of the task record.
func (s *stack) webhookEvents(key, id string) []map[string]any {
	s.t.Helper()
	r := s.do(call{Method: "GET", Path: jobPath(id), Key: key})
	wantStatus(s.t.(*testing.T), r, http.StatusOK)
	wh, _ := r.JSON["webhook"].(map[string]any)
	raw, _ := wh["events"].([]any)
	var out []map[string]any
	for _, e := range raw {
		out = append(out, e.(map[string]any))
	}
	return out
}

// verified checks d's signature with the Standard Webhooks library and
// returns its decoded payload.
func verified(t *testing.T, secret string, d delivery) map[string]any {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(d.body, d.header); err != nil {
		t.Fatalf("signature does not verify: %v (headers %v)", err, d.header)
	}
	var p map[string]any
	if err := json.Unmarshal(d.body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWebhookDelivered: a task created with a webhookUrl sends one signed
// generation.succeeded event whose data is the task record; a canceled
// task sends generation.canceled; the record lists the delivery.
func TestWebhookDelivered(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, allowPrivate: true})
		s.svc.Webhooks.Guard = fetch.TargetGuard(true)
		s.startWebhooks(nil)
		h := s.holder(100, false)
		rcv := newReceiver(t)
		sec := s.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h.key})
		wantStatus(t, sec, http.StatusOK)
		secret := sec.str("secret")
		if again := s.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h.key}); again.str("secret") != secret {
			t.Fatalf("secret changed: %s then %s", secret, again.str("secret"))
		}

		body := flux("a cat")
		body["webhookUrl"] = rcv.URL + "/hook"
		r := s.generate(h.key, body, nil)
		wantStatus(t, r, http.StatusOK)
		id := r.str("jobId")
		waitFor(t, "the event delivered", func() bool {
			ev := s.webhookEvents(h.key, id)
			return len(ev) == 1 && ev[0]["status"] == "delivered"
		})
		got := rcv.deliveries()
		if len(got) != 1 {
			t.Fatalf("receiver got %d deliveries, want 1", len(got))
		}
		p := verified(t, secret, got[0])
		data, _ := p["data"].(map[string]any)
		if p["type"] != gengate.EventSucceeded || data["jobId"] != id || data["status"] != "succeeded" {
			t.Errorf("payload %s", got[0].body)
		}
		if imgs, _ := data["images"].([]any); len(imgs) != 1 || imgs[0] != r.JSON["images"].([]any)[0] {
			t.Errorf("payload images %v, want %v", data["images"], r.JSON["images"])
		}
		ev := s.webhookEvents(h.key, id)[0]
		if ev["id"] != got[0].header.Get("webhook-id") || ev["attempts"] != float64(1) || len(ev["deliveries"].([]any)) != 1 {
			t.Errorf("record's webhook event %v", ev)
		}

		// Canceled: the cancel's transaction writes the event (a stack
		// of its own without workers, so the task waits to be canceled).
		s2 := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		s2.startWebhooks(nil)
		h2 := s2.holder(100, false)
		secret2 := s2.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h2.key}).str("secret")
		id2 := wantAccepted(t, s2.generate(h2.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a dog",
			"webhookUrl": rcv.URL + "/hook2"}, async))
		wantStatus(t, s2.do(call{Method: "POST", Path: jobPath(id2) + "/cancel", Key: h2.key}), http.StatusOK)
		waitFor(t, "the cancel event", func() bool { return len(rcv.deliveries()) == 2 })
		p = verified(t, secret2, rcv.deliveries()[1])
		if data, _ := p["data"].(map[string]any); p["type"] != gengate.EventCanceled || data["jobId"] != id2 || data["status"] != "canceled" {
			t.Errorf("cancel payload %v", p)
		}
	})
}

// TestWebhookRetried: a receiver that fails (500, then a refused answer)
// gets the event again on the schedule, with the same webhook-id and a
// valid signature each time, until it answers 2xx; the attempts are on the
// task record.
func TestWebhookRetried(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		s.startWebhooks([]time.Duration{time.Millisecond, time.Millisecond, time.Millisecond})
		h := s.holder(100, false)
		rcv := newReceiver(t, 500, 503)
		secret := s.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h.key}).str("secret")
		body := flux("a cat")
		body["webhookUrl"] = rcv.URL
		id := s.generate(h.key, body, nil).str("jobId")
		waitFor(t, "the event delivered", func() bool {
			ev := s.webhookEvents(h.key, id)
			return len(ev) == 1 && ev[0]["status"] == "delivered"
		})
		got := rcv.deliveries()
		if len(got) != 3 {
			t.Fatalf("receiver got %d requests, want 3", len(got))
		}
		for i, d := range got {
			verified(t, secret, d)
			if d.header.Get("webhook-id") != got[0].header.Get("webhook-id") {
				t.Errorf("attempt %d webhook-id %q, want %q", i+1, d.header.Get("webhook-id"), got[0].header.Get("webhook-id"))
			}
		}
		ev := s.webhookEvents(h.key, id)[0]
		var statuses []float64
		for _, d := range ev["deliveries"].([]any) {
			statuses = append(statuses, d.(map[string]any)["status"].(float64))
		}
		if len(statuses) != 3 || statuses[0] != 500 || statuses[1] != 503 || statuses[2] != 200 {
			t.Errorf("deliveries %v", ev["deliveries"])
		}
	})
}

// TestWebhookTargetRefused: a webhookUrl on loopback is refused without
// --allow-private-inputs (400, nothing charged or stored), as is a URL
// that is not http(s). The requests ask for an asynchronous answer, so
// that a wrongly accepted one fails the test at once (a 202) instead of
// waiting for a task no worker runs.
func TestWebhookTargetRefused(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		s.svc.Webhooks.Guard = fetch.TargetGuard(false)
		h := s.holder(100, false)
		for u, code := range map[string]string{
			"http://127.0.0.1:9/hook": gengate.InputNotAllowed, "http://[::1]/x": gengate.InputNotAllowed,
			"http://169.254.169.254/latest": gengate.InputNotAllowed, "http://10.1.2.3/x": gengate.InputNotAllowed,
			"ftp://example.com/x": gengate.FieldValue, "not a url": gengate.FieldValue,
		} {
			body := flux("a cat")
			body["webhookUrl"] = u
			r := s.generate(h.key, body, async)
			wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
			if fe, _ := r.JSON["errors"].([]any); len(fe) == 0 || fe[0].(map[string]any)["field"] != "webhookUrl" || fe[0].(map[string]any)["code"] != code {
				t.Errorf("%s: %s, want field code %s", u, r.Body, code)
			}
		}
		if s.balance(h.account) != 100 || s.taskCount() != 0 {
			t.Errorf("balance %d, tasks %d after refusals", s.balance(h.account), s.taskCount())
		}
	})
}

// TestWebhookReceiverTimesOutOrDown: a receiver that does not answer
// within the attempt's timeout, and one that is down (nothing listens on
// its port), get retries on the schedule and then the event, with the same
// webhook-id; the record shows the failed attempts with status 0.
func TestWebhookReceiverTimesOutOrDown(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		// Retries every 200ms, 30 of them: room to bring the receiver up.
		schedule := []time.Duration{time.Millisecond}
		for range 30 {
			schedule = append(schedule, 200*time.Millisecond)
		}
		s.startWebhooksTimeout(schedule, 300*time.Millisecond)
		h := s.holder(100, false)
		secret := s.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h.key}).str("secret")

		// Times out: the first request is held until the sender gives up.
		var mu sync.Mutex
		var got []delivery
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			mu.Lock()
			got = append(got, delivery{req.Header.Clone(), body})
			n := len(got)
			mu.Unlock()
			if n == 1 {
				<-req.Context().Done() // the sender's timeout ends it
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(slow.Close)
		body := flux("a slow cat")
		body["webhookUrl"] = slow.URL
		id := s.generate(h.key, body, nil).str("jobId")
		waitFor(t, "the event delivered after a timeout", func() bool {
			ev := s.webhookEvents(h.key, id)
			return len(ev) == 1 && ev[0]["status"] == "delivered"
		})
		mu.Lock()
		if len(got) != 2 || got[0].header.Get("webhook-id") != got[1].header.Get("webhook-id") {
			t.Errorf("slow receiver got %d requests (ids %q)", len(got), got[0].header.Get("webhook-id"))
		}
		verified(t, secret, got[1])
		mu.Unlock()
		if d := s.webhookEvents(h.key, id)[0]["deliveries"].([]any); len(d) != 2 || d[0].(map[string]any)["status"] != float64(0) {
			t.Errorf("deliveries %v", d)
		}

		// Down: nothing listens until an attempt has failed.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		body = flux("a cat for a down receiver")
		body["webhookUrl"] = "http://" + addr + "/hook"
		id2 := s.generate(h.key, body, nil).str("jobId")
		waitFor(t, "a failed attempt on the down receiver", func() bool {
			ev := s.webhookEvents(h.key, id2)
			return len(ev) == 1 && len(ev[0]["deliveries"].([]any)) >= 1
		})
		up := newReceiverUnstarted(t)
		up.Listener.Close()
		if up.Listener, err = net.Listen("tcp", addr); err != nil {
			t.Skipf("port %s taken again meanwhile: %v", addr, err)
		}
		up.Start()
		waitFor(t, "the event delivered once the receiver is up", func() bool {
			ev := s.webhookEvents(h.key, id2)
			return len(ev) == 1 && ev[0]["status"] == "delivered"
		})
		if d := up.deliveries(); len(d) != 1 {
			t.Errorf("the receiver, once up, got %d deliveries", len(d))
		} else {
			verified(t, secret, d[0])
		}
	})
}
