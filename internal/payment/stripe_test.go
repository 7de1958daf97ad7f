package payment_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/payment"
)

// stripeMock starts stripe-mock (Stripe's API simulator, a Go program:
// go install github.com/stripe/stripe-mock@v0.203.0) on a loopback port
// and returns its URL. Without it the test is skipped, or fails under
// CI=true, where .ci/run installs it.
func stripeMock(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("stripe-mock")
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		bin = filepath.Join(strings.TrimSpace(string(gopath)), "bin", "stripe-mock")
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("stripe-mock is not installed (go install github.com/stripe/stripe-mock@v0.203.0)")
			}
			t.Skip("stripe-mock is not installed (go install github.com/stripe/stripe-mock@v0.203.0)")
		}
	}
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Listening for HTTP at address: "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(2 * time.Minute):
		t.Fatal("stripe-mock did not start")
	}
	return ""
}

// recorder keeps the form of each request the adapter sends.
type recorder struct {
	mu    sync.Mutex
	forms []url.Values
	paths []string
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		rec.mu.Lock()
		rec.forms = append(rec.forms, form)
		rec.paths = append(rec.paths, r.Method+" "+r.URL.Path)
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestCheckoutStripeMock: CreateCheckout sends stripe-mock (which checks
// every parameter against Stripe's OpenAPI description) one Checkout
// Session in payment mode with one line item priced by price_data, the
// account and credits in metadata and client_reference_id, and returns
// the session's id and its checkout.stripe.com address.
func TestCheckoutStripeMock(t *testing.T) {
	base := stripeMock(t)
	rec := &recorder{}
	s := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_123", APIURL: base,
		HTTPClient: &http.Client{Transport: rec, Timeout: time.Minute}})
	id, u, err := s.CreateCheckout(context.Background(), gengate.Checkout{AccountID: "acct-1", Credits: 1000, UnitAmount: 1,
		Currency: "usd", SuccessURL: "https://gen.example.com/#/?checkout=success", CancelURL: "https://gen.example.com/#/?checkout=canceled"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "cs_") || !strings.HasPrefix(u, "https://checkout.stripe.com/") {
		t.Errorf("session %q at %q", id, u)
	}
	if len(rec.forms) != 1 || rec.paths[0] != "POST /v1/checkout/sessions" {
		t.Fatalf("requests: %v", rec.paths)
	}
	f := rec.forms[0]
	want := map[string]string{
		"mode": "payment", "line_items[0][price_data][currency]": "usd", "line_items[0][price_data][unit_amount]": "1",
		"line_items[0][quantity]": "1000", "client_reference_id": "acct-1", "metadata[gengate_account]": "acct-1",
		"metadata[gengate_credits]": "1000", "payment_intent_data[metadata][gengate_credits]": "1000",
	}
	for k, v := range want {
		if f.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, f.Get(k), v)
		}
	}
	if _, ok := f["line_items[1][quantity]"]; ok {
		t.Error("more than one line item")
	}
}

// signed returns an event body of the type with obj as its data.object,
// and its Stripe-Signature header made with secret at the time.
func signed(t *testing.T, secret, typ string, obj map[string]any, at time.Time) ([]byte, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"id": "evt_" + typ, "object": "event", "type": typ, "api_version": "2020-08-27",
		"created": at.Unix(), "data": map[string]any{"object": obj}})
	if err != nil {
		t.Fatal(err)
	}
	p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return body, p.Header
}

// TestVerifyEvent: stripe-go's signature check refuses a wrong secret, a
// changed body and a stale timestamp (ESignature); a completed and paid
// session of gengate's is a Purchase, an unpaid one or another
// integration's is nothing; a refunded charge is a PurchaseRefund.
func TestVerifyEvent(t *testing.T) {
	const secret = "whsec_test_secret"
	s := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_123", WebhookSecret: secret})
	session := func(status string, meta map[string]string) map[string]any {
		return map[string]any{"id": "cs_test_1", "object": "checkout.session", "mode": "payment", "payment_status": status,
			"client_reference_id": "acct-1", "metadata": meta, "payment_intent": "pi_1", "amount_total": 1000, "currency": "usd"}
	}
	ours := map[string]string{payment.MetaAccount: "acct-1", payment.MetaCredits: "1000"}
	now := time.Now()

	body, sig := signed(t, secret, "checkout.session.completed", session("paid", ours), now)
	ev, err := s.VerifyEvent(body, sig)
	if err != nil || ev.Purchase == nil || *ev.Purchase != (gengate.Purchase{SessionID: "cs_test_1", AccountID: "acct-1", Credits: 1000,
		PaymentIntent: "pi_1", AmountTotal: 1000, Currency: "usd"}) {
		t.Fatalf("paid session: %+v, %v", ev.Purchase, err)
	}
	refusals := map[string]func() ([]byte, string){
		"wrong secret": func() ([]byte, string) {
			return signed(t, "whsec_other", "checkout.session.completed", session("paid", ours), now)
		},
		"changed body": func() ([]byte, string) { return bytes.Replace(body, []byte("1000"), []byte("9000"), 1), sig },
		"stale": func() ([]byte, string) {
			return signed(t, secret, "checkout.session.completed", session("paid", ours), now.Add(-10*time.Minute))
		},
		"no header": func() ([]byte, string) { return body, "" },
	}
	for name, make := range refusals {
		b, h := make()
		if _, err := s.VerifyEvent(b, h); gengate.ErrorCode(err) != gengate.ESignature {
			t.Errorf("%s: %v, want %s", name, err, gengate.ESignature)
		}
	}
	for name, obj := range map[string]map[string]any{
		"unpaid": session("unpaid", ours), "not gengate's": session("paid", map[string]string{"order": "7"}),
	} {
		b, h := signed(t, secret, "checkout.session.completed", obj, now)
		if ev, err := s.VerifyEvent(b, h); err != nil || ev.Purchase != nil {
			t.Errorf("%s: %+v, %v; want nothing to do", name, ev.Purchase, err)
		}
	}
	b, h := signed(t, secret, "charge.refunded", map[string]any{"id": "ch_1", "object": "charge", "payment_intent": "pi_1",
		"amount": 1000, "amount_refunded": 250}, now)
	if ev, err := s.VerifyEvent(b, h); err != nil || ev.Refund == nil || *ev.Refund != (gengate.PurchaseRefund{PaymentIntent: "pi_1", Amount: 1000, AmountRefunded: 250}) {
		t.Errorf("refund: %+v, %v", ev.Refund, err)
	}
}
