package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/payment"
	"github.com/gengate/gengate/internal/sqlstore"
)

const testWebhookSecret = "whsec_test_gengate"

// fakeStripe is Stripe's API as far as Checkout Sessions go, built from
// Stripe's API reference ("Create a Checkout Session", POST
// /v1/checkout/sessions, form-encoded, Bearer secret key; the answer is
// the Session object with id cs_… and url https://checkout.stripe.com/…).
// It keeps the form of each creation.
type fakeStripe struct {
	*httptest.Server
	mu    sync.Mutex
	forms []url.Values
}

func newFakeStripe(t *testing.T) *fakeStripe {
	f := &fakeStripe{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/checkout/sessions" || r.Header.Get("Authorization") != "Bearer sk_test_fake" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error": {"type": "invalid_request_error", "message": "Unrecognized request URL"}}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		f.mu.Lock()
		f.forms = append(f.forms, form)
		id := "cs_test_" + strings.Repeat("a", 10) + string(rune('a'+len(f.forms)))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "checkout.session", "mode": form.Get("mode"),
			"payment_status": "unpaid", "status": "open", "client_reference_id": form.Get("client_reference_id"),
			"url": "https://checkout.stripe.com/c/pay/" + id})
	}))
	t.Cleanup(f.Close)
	return f
}

// withStripe configures card top-ups on the stack: 1 cent a credit,
// 100 to 100,000 credits a top-up.
func (s *stack) withStripe(apiURL string) {
	s.svc.Payments = payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_fake", WebhookSecret: testWebhookSecret, APIURL: apiURL})
	s.svc.TopUp = gengate.TopUpTerms{UnitAmount: 1, Currency: "usd", Min: 100, Max: 100000}
}

// stripeEvent is a delivery of a Stripe event of the type about obj, signed
// with secret at the time, as Stripe signs (stripe-go's webhook package
// makes the header).
func stripeEvent(t *testing.T, secret, id, typ string, obj map[string]any, at time.Time) call {
	t.Helper()
	body, err := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": "2025-01-27.acacia",
		"created": at.Unix(), "livemode": false, "data": map[string]any{"object": obj}})
	if err != nil {
		t.Fatal(err)
	}
	p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return call{Method: "POST", Path: "/api/v1/stripe/webhook", Body: body, Header: map[string]string{"Stripe-Signature": p.Header}}
}

func paidSession(id, account string, credits int, pi string) map[string]any {
	return map[string]any{"id": id, "object": "checkout.session", "mode": "payment", "payment_status": "paid", "status": "complete",
		"client_reference_id": account, "payment_intent": pi, "amount_total": credits, "currency": "usd",
		"metadata": map[string]string{payment.MetaAccount: account, payment.MetaCredits: strings.TrimSpace(itoa(credits))}}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// failingGrant is the store with GrantPurchase failing: before its
// transaction (afterCommit false: nothing written, as a crash before the
// commit leaves it), or after it committed (the answer lost, as a crash
// between the commit and Stripe's 2xx).
type failingGrant struct {
	*sqlstore.DB
	afterCommit bool
}

func (f failingGrant) GrantPurchase(ctx context.Context, p gengate.Purchase, now time.Time) (bool, int, error) {
	if f.afterCommit {
		_, _, _ = f.DB.GrantPurchase(ctx, p, now)
	}
	return false, 0, errors.New("the process died here")
}

// TestStripeTopUps: a checkout creates one Checkout Session in payment
// mode (one line item by price_data, the account and credits in metadata)
// and answers its id and checkout.stripe.com url; out-of-range credits
// are 400 naming the field; a forged or stale event changes nothing; the
// signed checkout.session.completed grants its credits once as a purchase
// naming the session, however many deliveries (concurrent ones too), and
// a failure before or after the grant's commit loses nothing and grants
// nothing twice; refunds take credits back as far as the balance allows
// and show operators the rest; the ledger equals the balance throughout,
// on both databases.
func TestStripeTopUps(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		fake := newFakeStripe(t)
		s.withStripe(fake.URL)
		h := s.holder(0, false)
		op := s.holder(0, true)

		r := s.do(call{Method: "POST", Path: "/api/v1/account/checkout", Key: h.key, Body: map[string]any{"credits": 1000}})
		wantStatus(t, r, http.StatusCreated)
		sid := r.str("id")
		if !strings.HasPrefix(sid, "cs_") || !strings.HasPrefix(r.str("url"), "https://checkout.stripe.com/") {
			t.Fatalf("checkout answer %s", r)
		}
		if len(fake.forms) != 1 {
			t.Fatalf("%d sessions created, want 1", len(fake.forms))
		}
		f := fake.forms[0]
		for k, v := range map[string]string{"mode": "payment", "line_items[0][price_data][currency]": "usd",
			"line_items[0][price_data][unit_amount]": "1", "line_items[0][quantity]": "1000", "client_reference_id": h.account,
			"metadata[gengate_account]": h.account, "metadata[gengate_credits]": "1000"} {
			if f.Get(k) != v {
				t.Errorf("session %s = %q, want %q", k, f.Get(k), v)
			}
		}
		for _, n := range []int{99, 100001, 0} {
			r := s.do(call{Method: "POST", Path: "/api/v1/account/checkout", Key: h.key, Body: map[string]any{"credits": n}})
			wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
			if !strings.Contains(string(r.Body), `"field":"credits"`) {
				t.Errorf("credits %d: the problem does not name the field: %s", n, r.Body)
			}
		}
		if len(fake.forms) != 1 {
			t.Errorf("refused checkouts reached Stripe: %d sessions", len(fake.forms))
		}

		now := time.Now()
		completed := paidSession(sid, h.account, 1000, "pi_1")
		forged := stripeEvent(t, "whsec_not_the_secret", "evt_1", "checkout.session.completed", completed, now)
		wantProblem(t, s.do(forged), http.StatusBadRequest, gengate.ESignature)
		stale := stripeEvent(t, testWebhookSecret, "evt_1", "checkout.session.completed", completed, now.Add(-time.Hour))
		wantProblem(t, s.do(stale), http.StatusBadRequest, gengate.ESignature)
		unsigned := forged
		unsigned.Header = nil
		wantProblem(t, s.do(unsigned), http.StatusBadRequest, gengate.ESignature)
		if s.balance(h.account) != 0 {
			t.Fatalf("a refused event granted: balance %d", s.balance(h.account))
		}

		// A failure before the commit: nothing granted, Stripe gets a 500
		// and delivers again.
		real := s.svc.Store
		s.svc.Store = failingGrant{DB: s.store}
		event := stripeEvent(t, testWebhookSecret, "evt_1", "checkout.session.completed", completed, now)
		wantProblem(t, s.do(event), http.StatusInternalServerError, gengate.EInternal)
		s.svc.Store = real
		if s.balance(h.account) != 0 {
			t.Fatalf("a failed grant granted: balance %d", s.balance(h.account))
		}
		// The redeliveries, four at once: one grant.
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wantStatus(t, s.do(event), http.StatusOK)
			}()
		}
		wg.Wait()
		if s.balance(h.account) != 1000 {
			t.Fatalf("after the deliveries the balance is %d, want 1000", s.balance(h.account))
		}
		// A failure after the commit (the 2xx lost): the redelivery grants
		// nothing more.
		s.svc.Store = failingGrant{DB: s.store, afterCommit: true}
		wantProblem(t, s.do(event), http.StatusInternalServerError, gengate.EInternal)
		s.svc.Store = real
		wantStatus(t, s.do(event), http.StatusOK)
		purchases := 0
		for _, e := range s.ledgerCheck(h.account) {
			if e.Kind == gengate.LedgerPurchase {
				purchases++
				if e.Amount != 1000 || e.Note != "stripe "+sid {
					t.Errorf("purchase entry %+v", e)
				}
			}
		}
		if purchases != 1 || s.balance(h.account) != 1000 {
			t.Fatalf("%d purchase entries, balance %d; want 1 and 1000", purchases, s.balance(h.account))
		}
		unpaid := paidSession("cs_test_unpaid", h.account, 500, "pi_2")
		unpaid["payment_status"] = "unpaid"
		wantStatus(t, s.do(stripeEvent(t, testWebhookSecret, "evt_2", "checkout.session.completed", unpaid, now)), http.StatusOK)
		wantStatus(t, s.do(stripeEvent(t, testWebhookSecret, "evt_3", "customer.created", map[string]any{"id": "cus_1", "object": "customer"}, now)), http.StatusOK)
		if s.balance(h.account) != 1000 {
			t.Fatalf("an unpaid session or another event granted: %d", s.balance(h.account))
		}

		// Refunds: a quarter, then the whole (delivered twice).
		refund := func(id string, refunded int) call {
			return stripeEvent(t, testWebhookSecret, id, "charge.refunded", map[string]any{"id": "ch_1", "object": "charge",
				"payment_intent": "pi_1", "amount": 1000, "amount_refunded": refunded}, now)
		}
		wantStatus(t, s.do(refund("evt_4", 250)), http.StatusOK)
		if s.balance(h.account) != 750 {
			t.Fatalf("after a quarter refunded the balance is %d, want 750", s.balance(h.account))
		}
		wantStatus(t, s.do(refund("evt_5", 1000)), http.StatusOK)
		wantStatus(t, s.do(refund("evt_5", 1000)), http.StatusOK)
		if s.balance(h.account) != 0 {
			t.Fatalf("after the whole refunded the balance is %d, want 0", s.balance(h.account))
		}
		s.ledgerCheck(h.account)

		// A refund of credits already spent: taken back as far as the
		// balance allows, the rest shown to operators.
		h2 := s.holder(0, false)
		wantStatus(t, s.do(stripeEvent(t, testWebhookSecret, "evt_6", "checkout.session.completed", paidSession("cs_test_2", h2.account, 1000, "pi_3"), now)), http.StatusOK)
		if _, err := s.store.Grant(context.Background(), h2.account, -900, "spent", time.Now()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, s.do(stripeEvent(t, testWebhookSecret, "evt_7", "charge.refunded", map[string]any{"id": "ch_3", "object": "charge",
			"payment_intent": "pi_3", "amount": 1000, "amount_refunded": 1000}, now)), http.StatusOK)
		if s.balance(h2.account) != 0 {
			t.Fatalf("balance %d after a refund of spent credits, want 0", s.balance(h2.account))
		}
		s.ledgerCheck(h2.account)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/admin/purchases", Key: h.key}), http.StatusForbidden, gengate.EForbidden)
		list := s.do(call{Method: "GET", Path: "/api/v1/admin/purchases?unrecovered=true", Key: op.key})
		wantStatus(t, list, http.StatusOK)
		data := list.JSON["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["sessionId"] != "cs_test_2" ||
			data[0].(map[string]any)["refundedCredits"] != float64(1000) || data[0].(map[string]any)["takenBack"] != float64(100) {
			t.Errorf("unrecovered purchases: %s", list.Body)
		}
		all := s.do(call{Method: "GET", Path: "/api/v1/admin/purchases?limit=10", Key: op.key})
		if len(all.JSON["data"].([]any)) != 2 {
			t.Errorf("purchases: %s", all.Body)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/admin/purchases?unrecovered=maybe", Key: op.key}), http.StatusBadRequest, gengate.EInvalid)
	})
}

// TestTopUpsOff: without Stripe configured, checkout and the webhook are
// 404 and the sign-in configuration offers no top-up.
func TestTopUpsOff(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	h := s.holder(0, false)
	wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/account/checkout", Key: h.key, Body: map[string]any{"credits": 1000}}),
		http.StatusNotFound, gengate.ENotFound)
	wantProblem(t, s.do(stripeEvent(t, testWebhookSecret, "evt_1", "checkout.session.completed", paidSession("cs_1", h.account, 1000, "pi_1"), time.Now())),
		http.StatusNotFound, gengate.ENotFound)
	c := s.do(call{Method: "GET", Path: "/api/v1/auth/config"})
	if _, ok := c.JSON["topUp"]; ok {
		t.Errorf("auth config offers top-ups: %s", c.Body)
	}
	s.withStripe("http://127.0.0.1:1")
	c = s.do(call{Method: "GET", Path: "/api/v1/auth/config"})
	if tu, _ := c.JSON["topUp"].(map[string]any); tu["currency"] != "usd" || tu["minCredits"] != float64(100) {
		t.Errorf("auth config with Stripe: %s", c.Body)
	}
}

// TestPaymentEventTooLarge: an event body over MaxPaymentEvent is 413,
// nothing read further.
func TestPaymentEventTooLarge(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	s.withStripe("http://127.0.0.1:1")
	big := `{"id": "evt_1", "pad": "` + strings.Repeat("x", httpapi.MaxPaymentEvent) + `"}`
	wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/stripe/webhook", Body: big, Header: map[string]string{"Stripe-Signature": "t=1,v1=00"}}),
		http.StatusRequestEntityTooLarge, gengate.ETooLarge)
}
