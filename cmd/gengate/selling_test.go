package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"
)

// TestTestKeyAndCodesCLI is the check from outside, through run:
// "keys create --credits 5 --test" prints a gg_test_ key whose three flux
// generations answer 200 with remainingCredits 5; "codes create --credits
// 100 --count 2" prints two codes, one of which redeems to +100 once; an
// unknown code is refused.
func TestTestKeyAndCodesCLI(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	out := cli(t, "keys", "create", "--data", dir, "--credits", "5", "--test", "--name", "ci")
	key := lastLine(out)
	if !strings.HasPrefix(key, "gg_test_") {
		t.Fatalf("keys create --test printed %q", out)
	}
	for range 3 {
		r := mustAPI(t, srv.base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a fox"}, nil)
		wantCode(t, r, http.StatusOK)
		if r.num("remainingCredits") != 5 {
			t.Fatalf("test generation answered remainingCredits %d, want 5: %v", r.num("remainingCredits"), r.json)
		}
	}

	out = cli(t, "codes", "create", "--data", dir, "--credits", "100", "--count", "2", "--expires", "30d")
	codes := strings.Fields(out)
	if len(codes) != 2 || codes[0] == codes[1] || len(codes[0]) < 12 {
		t.Fatalf("codes create printed %q", out)
	}
	r := mustAPI(t, srv.base, "POST", "/api/v1/account/redeem", srv.key, map[string]any{"code": codes[0]}, nil)
	wantCode(t, r, http.StatusOK)
	if r.num("remainingCredits") != 1100 {
		t.Fatalf("redeemed to %d, want 1100", r.num("remainingCredits"))
	}
	r = mustAPI(t, srv.base, "POST", "/api/v1/account/redeem", key, map[string]any{"code": codes[0]}, nil)
	wantCode(t, r, http.StatusConflict)
	r = mustAPI(t, srv.base, "POST", "/api/v1/account/redeem", key, map[string]any{"code": "GG-ABCD-EFGH-JKMN-PQRS"}, nil)
	wantCode(t, r, http.StatusNotFound)
	if r.str("code") != "CODE_UNKNOWN" {
		t.Errorf("unknown code answered %v", r.json)
	}
}

// TestStripeTopUpServe is the check of card top-ups from outside:
// serve with --stripe-secret-key, --stripe-webhook-secret, --stripe-api-url
// (a fake of Stripe's "Create a Checkout Session", per its API reference),
// --credit-price 0.01 and --currency usd; a checkout of 1,000 credits
// creates one Checkout Session in payment mode and answers its
// checkout.stripe.com url; a forged event grants nothing; the signed
// checkout.session.completed grants 1,000 once, and its redelivery grants
// nothing more.
func TestStripeTopUpServe(t *testing.T) {
	var mu sync.Mutex
	var forms []url.Values
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		mu.Lock()
		forms = append(forms, form)
		mu.Unlock()
		if r.URL.Path != "/v1/checkout/sessions" || r.Header.Get("Authorization") != "Bearer sk_test_cli" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "cs_test_cli1", "object": "checkout.session", "mode": %q, "url": "https://checkout.stripe.com/c/pay/cs_test_cli1"}`, form.Get("mode"))
	}))
	defer fake.Close()
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0", "--stripe-secret-key", "sk_test_cli", "--stripe-webhook-secret", "whsec_cli",
		"--stripe-api-url", fake.URL, "--credit-price", "0.01", "--currency", "usd")
	r := mustAPI(t, srv.base, "POST", "/api/v1/account/checkout", srv.key, map[string]any{"credits": 1000}, nil)
	wantCode(t, r, http.StatusCreated)
	if r.str("id") != "cs_test_cli1" || !strings.HasPrefix(r.str("url"), "https://checkout.stripe.com/") {
		t.Fatalf("checkout answered %v", r.json)
	}
	if len(forms) != 1 || forms[0].Get("mode") != "payment" || forms[0].Get("line_items[0][price_data][unit_amount]") != "1" ||
		forms[0].Get("line_items[0][quantity]") != "1000" || forms[0].Get("line_items[0][price_data][currency]") != "usd" {
		t.Fatalf("sessions created: %v", forms)
	}
	event, _ := json.Marshal(map[string]any{"id": "evt_cli", "object": "event", "type": "checkout.session.completed", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{"id": "cs_test_cli1", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
			"client_reference_id": srv.account, "metadata": map[string]string{"gengate_account": srv.account, "gengate_credits": "1000"}}}})
	deliver := func(secret string) httpResult {
		p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: event, Secret: secret})
		res, err := api(srv.base, "POST", "/api/v1/stripe/webhook", "", json.RawMessage(event), map[string]string{"Stripe-Signature": p.Header})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	wantCode(t, deliver("whsec_forged"), http.StatusBadRequest)
	balance := func() int {
		return mustAPI(t, srv.base, "GET", "/api/v1/account", srv.key, nil, nil).num("remainingCredits")
	}
	if b := balance(); b != 1000 {
		t.Fatalf("a forged event changed the balance to %d", b)
	}
	wantCode(t, deliver("whsec_cli"), http.StatusOK)
	wantCode(t, deliver("whsec_cli"), http.StatusOK)
	if b := balance(); b != 2000 {
		t.Fatalf("balance %d after the event and its redelivery, want 2000", b)
	}
}
