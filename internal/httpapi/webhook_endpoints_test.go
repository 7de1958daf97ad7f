package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
)

// verifiesWith reports whether d's signature verifies with secret under the
// Standard Webhooks library.
func verifiesWith(t *testing.T, secret string, d delivery) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(d.body, d.header) == nil
}

// TestWebhookEndpoints: an account's endpoints are made (secret shown
// once, by key or by session with its CSRF token), listed without their
// secrets, and get the events they asked for, signed with their own
// secret; the attempts are listed; a rotation answers a new secret and,
// during the overlap, deliveries carry both signatures (each verified
// with the library); a replay sends the same webhook-id again; a deleted
// endpoint gets nothing more. Another account sees none of it (404).
func TestWebhookEndpoints(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		s.svc.Webhooks.Guard = fetch.TargetGuard(true)
		s.startWebhooks(nil)
		h, other := s.holder(100, false), s.holder(100, false)
		rcv, rcv2 := newReceiver(t), newReceiver(t)

		// Made by session: the CSRF token is needed.
		create := call{Method: "POST", Path: "/api/v1/webhooks", Body: map[string]any{"url": rcv.URL + "/a",
			"eventTypes": []string{gengate.EventSucceeded, gengate.EventCanceled}}}
		wantProblem(t, s.bySession(h, false, create), http.StatusForbidden, "CSRF_TOKEN_INVALID")
		r := s.bySession(h, true, create)
		wantStatus(t, r, http.StatusCreated)
		ep, secret := r.str("id"), r.str("secret")
		if !strings.HasPrefix(ep, gengate.WebhookEndpointPrefix) || !strings.HasPrefix(secret, gengate.WebhookSecretPrefix) ||
			r.Header.Get("Location") != "/api/v1/webhooks/"+ep {
			t.Fatalf("created %s (Location %q)", r.Body, r.Header.Get("Location"))
		}
		// A second endpoint wanting only failures, by API key.
		r = s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: map[string]any{"url": rcv2.URL,
			"eventTypes": []string{gengate.EventFailed}}})
		wantStatus(t, r, http.StatusCreated)
		ep2 := r.str("id")

		list := s.do(call{Method: "GET", Path: "/api/v1/webhooks", Key: h.key})
		wantStatus(t, list, http.StatusOK)
		if data, _ := list.JSON["data"].([]any); len(data) != 2 || data[0].(map[string]any)["id"] != ep || strings.Contains(string(list.Body), "whsec_") {
			t.Fatalf("list %s", list.Body)
		}
		if l := s.do(call{Method: "GET", Path: "/api/v1/webhooks", Key: other.key}); len(l.JSON["data"].([]any)) != 0 {
			t.Fatalf("another account lists %s", l.Body)
		}

		// A success: one event, to the endpoint wanting it.
		id := s.generate(h.key, flux("a cat"), nil).str("jobId")
		waitFor(t, "the endpoint's event delivered", func() bool {
			ev := s.webhookEvents(h.key, id)
			return len(ev) == 1 && ev[0]["status"] == "delivered"
		})
		if len(rcv2.deliveries()) != 0 {
			t.Errorf("the failures-only endpoint got %d deliveries", len(rcv2.deliveries()))
		}
		got := rcv.deliveries()
		if len(got) != 1 {
			t.Fatalf("receiver got %d deliveries, want 1", len(got))
		}
		p := verified(t, secret, got[0])
		if data, _ := p["data"].(map[string]any); p["type"] != gengate.EventSucceeded || data["jobId"] != id {
			t.Errorf("payload %s", got[0].body)
		}
		msgID := got[0].header.Get("webhook-id")

		// Its attempts, to the holder only.
		at := s.do(call{Method: "GET", Path: "/api/v1/webhooks/" + ep + "/attempts", Key: h.key})
		wantStatus(t, at, http.StatusOK)
		if data, _ := at.JSON["data"].([]any); len(data) != 1 || data[0].(map[string]any)["eventId"] != msgID ||
			data[0].(map[string]any)["status"] != float64(200) || data[0].(map[string]any)["jobId"] != id {
			t.Fatalf("attempts %s", at.Body)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/webhooks/" + ep + "/attempts", Key: other.key}), http.StatusNotFound, gengate.ENotFound)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/webhooks/" + ep + "/attempts?limit=0", Key: h.key}), http.StatusBadRequest, gengate.EInvalid)

		// Rotation: a new secret; the old one still signs for the overlap.
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks/" + ep + "/rotate", Key: other.key}), http.StatusNotFound, gengate.ENotFound)
		rot := s.do(call{Method: "POST", Path: "/api/v1/webhooks/" + ep + "/rotate", Key: h.key})
		wantStatus(t, rot, http.StatusOK)
		secret2 := rot.str("secret")
		until, err := time.Parse(time.RFC3339Nano, rot.str("previousSecretExpiresAt"))
		if secret2 == secret || !strings.HasPrefix(secret2, gengate.WebhookSecretPrefix) || err != nil ||
			until.Before(time.Now().Add(gengate.DefaultWebhookOverlap-time.Hour)) {
			t.Fatalf("rotation %s", rot.Body)
		}

		// Replay: the same webhook-id, now signed twice.
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks/events/" + msgID + "/replay", Key: other.key}), http.StatusNotFound, gengate.ENotFound)
		rp := s.do(call{Method: "POST", Path: "/api/v1/webhooks/events/" + msgID + "/replay", Key: h.key})
		wantStatus(t, rp, http.StatusAccepted)
		waitFor(t, "the replay delivered", func() bool { return len(rcv.deliveries()) == 2 })
		d := rcv.deliveries()[1]
		if d.header.Get("webhook-id") != msgID {
			t.Errorf("replay webhook-id %q, want %q", d.header.Get("webhook-id"), msgID)
		}
		if sigs := strings.Fields(d.header.Get("webhook-signature")); len(sigs) != 2 {
			t.Errorf("webhook-signature %q, want two signatures during the overlap", d.header.Get("webhook-signature"))
		}
		if !verifiesWith(t, secret, d) || !verifiesWith(t, secret2, d) {
			t.Errorf("the replay does not verify with both the old and the new secret")
		}
		if verifiesWith(t, gengate.NewWebhookSecret(), d) {
			t.Errorf("the replay verifies with an unrelated secret")
		}
		if p2 := verified(t, secret2, d); p2["type"] != p["type"] || p2["data"].(map[string]any)["jobId"] != id {
			t.Errorf("replayed payload %s", d.body)
		}

		// Deleted: 404 for another account, then gone with its events.
		wantProblem(t, s.do(call{Method: "DELETE", Path: "/api/v1/webhooks/" + ep, Key: other.key}), http.StatusNotFound, gengate.ENotFound)
		wantStatus(t, s.bySession(h, true, call{Method: "DELETE", Path: "/api/v1/webhooks/" + ep}), http.StatusNoContent)
		wantProblem(t, s.do(call{Method: "DELETE", Path: "/api/v1/webhooks/" + ep, Key: h.key}), http.StatusNotFound, gengate.ENotFound)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/webhooks/" + ep + "/attempts", Key: h.key}), http.StatusNotFound, gengate.ENotFound)
		id2 := s.generate(h.key, flux("a dog"), nil).str("jobId")
		if ev := s.webhookEvents(h.key, id2); len(ev) != 0 {
			t.Errorf("events after the endpoint was deleted: %v", ev)
		}
		wantStatus(t, s.do(call{Method: "DELETE", Path: "/api/v1/webhooks/" + ep2, Key: h.key}), http.StatusNoContent)
	})
}

// TestWebhookEndpointRefusals: a bad url or event type, a missing url, an
// unknown member, a private target without --allow-private-inputs and one
// endpoint over --max-webhook-endpoints are refused with their codes,
// nothing made.
func TestWebhookEndpointRefusals(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		s.svc.Webhooks.Guard = fetch.TargetGuard(false)
		s.svc.Webhooks.MaxEndpoints = 1
		h := s.holder(100, false)
		for _, c := range []struct {
			body        map[string]any
			field, code string
		}{
			{map[string]any{"url": "ftp://example.com/x"}, "url", gengate.FieldValue},
			{map[string]any{"url": "https://u:p@example.com/x"}, "url", gengate.FieldValue},
			{map[string]any{"url": "https://example.com/" + strings.Repeat("a", gengate.MaxWebhookURLLength)}, "url", gengate.FieldTooLong},
			{map[string]any{"eventTypes": []string{gengate.EventSucceeded}}, "url", gengate.FieldRequired},
			{map[string]any{"url": "https://example.com/x", "eventTypes": []string{"generation.started"}}, "eventTypes", gengate.FieldValue},
			{map[string]any{"url": "http://127.0.0.1:9/hook"}, "url", gengate.InputNotAllowed},
			{map[string]any{"url": "http://169.254.169.254/latest"}, "url", gengate.InputNotAllowed},
			{map[string]any{"url": "http://10.0.0.1/x"}, "url", gengate.InputNotAllowed},
		} {
			r := s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: c.body})
			wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
			if fe, _ := r.JSON["errors"].([]any); len(fe) == 0 || fe[0].(map[string]any)["field"] != c.field || fe[0].(map[string]any)["code"] != c.code {
				t.Errorf("%v: %s, want %s %s", c.body, r.Body, c.field, c.code)
			}
		}
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: map[string]any{"url": "https://example.com/x", "secret": "mine"}}),
			http.StatusBadRequest, gengate.EInvalid)
		if l := s.do(call{Method: "GET", Path: "/api/v1/webhooks", Key: h.key}); len(l.JSON["data"].([]any)) != 0 {
			t.Fatalf("refusals made endpoints: %s", l.Body)
		}
		// The limit (an example.com target needs DNS: allow it through a
		// guard that passes everything for this part).
		s.svc.Webhooks.Guard = nil
		wantStatus(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: map[string]any{"url": "https://example.com/a"}}), http.StatusCreated)
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: map[string]any{"url": "https://example.com/b"}}),
			http.StatusConflict, gengate.EConflict)
		wantProblem(t, s.do(call{Method: "PUT", Path: "/api/v1/webhooks", Key: h.key}), http.StatusMethodNotAllowed, gengate.EMethodNotAllowed)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/webhooks/events/msg_x/replay", Key: h.key}), http.StatusMethodNotAllowed, gengate.EMethodNotAllowed)
	})
}

// TestWebhookAccountSecretRotation: rotating the account's own secret
// (for tasks' webhookUrl) answers the new one, GET secret answers it
// afterwards, and deliveries during the overlap verify with both.
func TestWebhookAccountSecretRotation(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		s.startWebhooks(nil)
		h := s.holder(100, false)
		rcv := newReceiver(t)
		old := s.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h.key}).str("secret")
		rot := s.do(call{Method: "POST", Path: "/api/v1/webhooks/secret/rotate", Key: h.key})
		wantStatus(t, rot, http.StatusOK)
		fresh := rot.str("secret")
		if fresh == old || s.do(call{Method: "GET", Path: "/api/v1/webhooks/secret", Key: h.key}).str("secret") != fresh {
			t.Fatalf("rotation %s, old %s", rot.Body, old)
		}
		body := flux("a cat")
		body["webhookUrl"] = rcv.URL
		s.generate(h.key, body, nil)
		waitFor(t, "the event", func() bool { return len(rcv.deliveries()) == 1 })
		d := rcv.deliveries()[0]
		if !verifiesWith(t, old, d) || !verifiesWith(t, fresh, d) {
			t.Errorf("delivery %q does not verify with both secrets", d.header.Get("webhook-signature"))
		}
	})
}

// TestWebhookNeedsReview: a task held for review at creation sends
// generation.needs_review to an endpoint that wants it.
func TestWebhookNeedsReview(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, reviewTerms: []string{"hold me"}})
		s.startWebhooks(nil)
		h := s.holder(100, false)
		rcv := newReceiver(t)
		r := s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: map[string]any{"url": rcv.URL,
			"eventTypes": []string{gengate.EventNeedsReview}}})
		wantStatus(t, r, http.StatusCreated)
		secret := r.str("secret")
		g := s.generate(h.key, flux("please hold me"), nil)
		wantProblem(t, g, http.StatusConflict, gengate.ENeedsReview)
		waitFor(t, "the needs_review event", func() bool { return len(rcv.deliveries()) == 1 })
		p := verified(t, secret, rcv.deliveries()[0])
		if data, _ := p["data"].(map[string]any); p["type"] != gengate.EventNeedsReview || data["status"] != "needs_review" {
			t.Errorf("payload %s", rcv.deliveries()[0].body)
		}
	})
}
