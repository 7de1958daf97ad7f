package httpapi_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/fetch"
)

// falJWKS is a JSON Web Key Set as fal publishes its webhook keys.
type falJWKS struct {
	Keys []struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
	} `json:"keys"`
}

// fetchJWKS reads a key set, as a receiver of fal's webhooks fetches
// fal's.
func fetchJWKS(t *testing.T, jwksURL string) falJWKS {
	t.Helper()
	resp, err := http.Get(jwksURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set falJWKS
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || resp.StatusCode != 200 ||
		resp.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "public, max-age=") {
		t.Fatalf("JWKS %s: %d %v %v %+v", jwksURL, resp.StatusCode, resp.Header, err, set)
	}
	return set
}

// verifyFalWebhook checks a delivery as fal's webhook docs tell a
// receiver to ("Verifying Your Webhook"): the four X-Fal-Webhook-*
// headers are there; the timestamp is within five minutes of now; the
// message is the request id, the user id, the timestamp and the hex
// SHA-256 of the raw body, joined by newlines; the hex signature verifies
// as ED25519 under one of the key set's OKP/Ed25519 keys (x, base64url).
func verifyFalWebhook(set falJWKS, h http.Header, body []byte, now time.Time) error {
	reqID, userID, ts, sigHex := h.Get("X-Fal-Webhook-Request-Id"), h.Get("X-Fal-Webhook-User-Id"),
		h.Get("X-Fal-Webhook-Timestamp"), h.Get("X-Fal-Webhook-Signature")
	if reqID == "" || userID == "" || ts == "" || sigHex == "" {
		return errors.New("missing headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || math.Abs(float64(now.Unix()-sec)) > 300 {
		return fmt.Errorf("timestamp %q out of the five-minute window", ts)
	}
	sum := sha256.Sum256(body)
	msg := []byte(strings.Join([]string{reqID, userID, ts, hex.EncodeToString(sum[:])}, "\n"))
	sig, err := hex.DecodeString(sigHex)
	if err != nil {
		return fmt.Errorf("signature not hex: %v", err)
	}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		pub, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			continue
		}
		if ed25519.Verify(ed25519.PublicKey(pub), msg, sig) {
			return nil
		}
	}
	return errors.New("no key verifies the signature")
}

// falHook is a fal webhook body as fal documents it; decoding refuses any
// other member.
type falHook struct {
	RequestID        string          `json:"request_id"`
	GatewayRequestID string          `json:"gateway_request_id"`
	Status           string          `json:"status"`
	Payload          json.RawMessage `json:"payload"`
	Error            *string         `json:"error"`
	PayloadError     *string         `json:"payload_error"`
}

func decodeFalHook(t *testing.T, body []byte) falHook {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var h falHook
	if err := dec.Decode(&h); err != nil || h.RequestID == "" || h.GatewayRequestID != h.RequestID {
		t.Fatalf("not fal's webhook body: %v\n%s", err, body)
	}
	return h
}

// TestFalWebhook: a submit through /fal/proxy with fal_webhook, as fal's
// clients send it, gets fal's webhook at that URL once the request is
// done, which a receiver verifies exactly as fal's docs say, with
// gengate's JWKS in place of fal's: status OK with payload.images whose
// URLs download (after a refused first attempt, retried and signed
// again), ERROR with fal's error for a request that failed upstream, was
// refused after review or was canceled. A request held for review sends
// nothing until it is settled. A tampered body, another key set or a stale
// timestamp fail the verification. On both databases.
func TestFalWebhook(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		up := faltest.New(t)
		s := newStack(t, stackOpts{dialect: dialect, allowPrivate: true, reviewTerms: []string{"hold me"}, engines: map[string]gengate.Engine{
			"fal": fal.New(fal.Config{APIKey: up.Key(), BaseURL: up.URL(), AllowPrivateOutputs: true})}})
		s.svc.Webhooks.Guard = fetch.TargetGuard(true)
		s.startWebhooks([]time.Duration{10 * time.Millisecond})
		acct, key := s.account(1000)
		ctx := context.Background()
		rcv := newReceiver(t, http.StatusInternalServerError) // refuses the first attempt
		jwksURL := s.URL + "/fal/.well-known/jwks.json"

		submit := func(path, prompt string) string {
			t.Helper()
			target := "https://queue.fal.run/fal-ai/flux/schnell?fal_webhook=" + url.QueryEscape(rcv.URL+path)
			r := s.falCall("POST", target, key, `{"prompt": "`+prompt+`", "num_images": 2}`)
			if r.Status != 200 || r.str("request_id") == "" || r.str("gateway_request_id") != r.str("request_id") {
				t.Fatalf("submit: %s", r)
			}
			return r.str("request_id")
		}
		delivered := func(id string) []delivery { // the request's deliveries once its event is delivered
			t.Helper()
			var ev []map[string]any
			waitFor(t, "the webhook event of "+id, func() bool {
				ev = s.webhookEvents(key, id)
				return len(ev) > 0 && ev[0]["status"] != "pending"
			})
			if len(ev) != 1 || ev[0]["type"] != gengate.FalCompleted || ev[0]["status"] != "delivered" {
				t.Fatalf("the webhook events of %s: %v; want one %s, delivered", id, ev, gengate.FalCompleted)
			}
			var out []delivery
			for _, d := range rcv.deliveries() {
				if d.header.Get("X-Fal-Webhook-Request-Id") == id {
					out = append(out, d)
				}
			}
			return out
		}
		verified := func(d delivery) falHook {
			t.Helper()
			if err := verifyFalWebhook(fetchJWKS(t, jwksURL), d.header, d.body, time.Now()); err != nil {
				t.Fatalf("the webhook does not verify as fal's docs say: %v (headers %v)", err, d.header)
			}
			if d.header.Get("X-Fal-Webhook-User-Id") != acct || d.header.Get("webhook-signature") != "" {
				t.Errorf("headers %v; want the account as the user id, no Standard Webhooks signature", d.header)
			}
			return decodeFalHook(t, d.body)
		}

		// Success, after one refused attempt: two signed deliveries.
		ok := submit("/ok", "an owl")
		got := delivered(ok)
		if len(got) != 2 {
			t.Fatalf("%d deliveries of the succeeded request; want the refused one and the retry", len(got))
		}
		var okHook falHook
		for _, d := range got {
			okHook = verified(d)
		}
		var result struct {
			Images []struct {
				URL         string `json:"url"`
				ContentType string `json:"content_type"`
			} `json:"images"`
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(okHook.Payload, &result); err != nil || okHook.Status != "OK" || okHook.RequestID != ok ||
			okHook.Error != nil || okHook.PayloadError != nil || len(result.Images) != 2 || result.Prompt != "an owl" {
			t.Fatalf("the success webhook: %+v %v\n%s", okHook, err, got[1].body)
		}
		for _, img := range result.Images {
			wantImage(t, img.URL, strings.TrimPrefix(img.ContentType, "image/"), 1, 1)
		}
		// The payload is the result GET .../requests/{id} answers.
		res := s.falCall("GET", "https://queue.fal.run/fal-ai/flux/requests/"+ok, key, "")
		if res.Status != 200 || !jsonEqual(t, okHook.Payload, res.Body) {
			t.Errorf("the payload is not the result:\n%s\nvs\n%s", okHook.Payload, res.Body)
		}

		// What a receiver refuses: a tampered body, another key set, a
		// stale timestamp.
		d := got[1]
		tampered := bytes.Replace(d.body, []byte("an owl"), []byte("an cat"), 1)
		if err := verifyFalWebhook(fetchJWKS(t, jwksURL), d.header, tampered, time.Now()); err == nil {
			t.Error("a tampered body verifies")
		}
		pub, _, _ := ed25519.GenerateKey(nil)
		var other falJWKS
		_ = json.Unmarshal([]byte(`{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "`+base64.RawURLEncoding.EncodeToString(pub)+`"}]}`), &other)
		if err := verifyFalWebhook(other, d.header, d.body, time.Now()); err == nil {
			t.Error("another key set verifies the webhook")
		}
		if err := verifyFalWebhook(fetchJWKS(t, jwksURL), d.header, d.body, time.Now().Add(10*time.Minute)); err == nil {
			t.Error("a stale timestamp verifies")
		}

		// A failure upstream: ERROR, fal's error as the payload.
		up.FailJobs("content_policy")
		failed := submit("/failed", "a fox")
		if _, err := s.svc.Wait(ctx, acct, failed, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		up.FailJobs("")
		got = delivered(failed)
		h := verified(got[len(got)-1])
		var detail struct {
			Detail    string `json:"detail"`
			ErrorType string `json:"error_type"`
		}
		if err := json.Unmarshal(h.Payload, &detail); err != nil || h.Status != "ERROR" || h.Error == nil ||
			*h.Error != "Invalid status code: 422" || detail.ErrorType != "content_policy_violation" || detail.Detail == "" {
			t.Errorf("the failure webhook: %+v, payload %s, %v", h, h.Payload, err)
		}

		// Held for review: nothing until settled (no event is written);
		// delivered, it sends OK; refused, ERROR.
		for _, refund := range []bool{false, true} {
			held := submit(fmt.Sprintf("/held-%v", refund), "hold me please")
			if ev := s.webhookEvents(key, held); len(ev) != 0 {
				t.Errorf("a request held for review has webhook events %v", ev)
			}
			if _, err := s.svc.Settle(ctx, held, refund); err != nil {
				t.Fatal(err)
			}
			h := verified(delivered(held)[0])
			if want := map[bool]string{false: "OK", true: "ERROR"}[refund]; h.Status != want {
				t.Errorf("settled with refund %v: %s, want %s", refund, h.Status, want)
			}
		}

		// Canceled through fal's cancel address while fal holds it in
		// its queue: ERROR, request_canceled.
		up.Hold()
		canceled := submit("/canceled", "a mole")
		waitFor(t, "the cancel of "+canceled, func() bool { // 503 while a step of it runs
			return s.falCall("PUT", "https://queue.fal.run/fal-ai/flux/requests/"+canceled+"/cancel", key, "").Status == http.StatusAccepted
		})
		up.Release()
		if o, err := s.svc.Wait(ctx, acct, canceled, 2*time.Minute); err != nil || o.Task.Status != gengate.StatusCanceled {
			t.Fatalf("the canceled request: %v %v", o, err)
		}
		h = verified(delivered(canceled)[0])
		if err := json.Unmarshal(h.Payload, &detail); err != nil || h.Status != "ERROR" || h.Error == nil ||
			*h.Error != "Invalid status code: 400" || detail.ErrorType != "request_canceled" {
			t.Errorf("the cancel webhook: %+v, payload %s, %v", h, h.Payload, err)
		}
	})
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
