package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFalWebhookServe: gengate serve wires fal's webhooks: a submit through
// /fal/proxy with fal_webhook gets a POST signed as fal signs one
// (X-Fal-Webhook-*, ED25519 over the request id, user id, timestamp and
// the body's SHA-256), which verifies under a key of the set serve
// publishes at /fal/.well-known/jwks.json, with status OK.
func TestFalWebhookServe(t *testing.T) {
	var mu sync.Mutex
	var header http.Header
	var body []byte
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		header, body = r.Header.Clone(), b
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	s := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--allow-private-inputs")
	r := mustAPI(t, s.base, "POST", "/fal/proxy", s.key, map[string]any{"prompt": "a hook"},
		map[string]string{"X-Fal-Target-Url": "https://queue.fal.run/fal-ai/flux/schnell?fal_webhook=" + url.QueryEscape(rcv.URL+"/fal")})
	wantCode(t, r, http.StatusOK)
	id := r.str("request_id")
	poll(t, 2*time.Minute, 20*time.Millisecond, "the fal webhook", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return body != nil
	})

	set := mustAPI(t, s.base, "GET", "/fal/.well-known/jwks.json", "", nil, nil)
	wantCode(t, set, http.StatusOK)
	var jwks struct {
		Keys []struct{ Kty, Crv, X string } `json:"keys"`
	}
	if err := json.Unmarshal(set.body, &jwks); err != nil || len(jwks.Keys) != 1 || jwks.Keys[0].Kty != "OKP" || jwks.Keys[0].Crv != "Ed25519" {
		t.Fatalf("JWKS %s (%v)", set.body, err)
	}
	pub, err := base64.RawURLEncoding.DecodeString(jwks.Keys[0].X)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("JWKS key %q: %v", jwks.Keys[0].X, err)
	}
	sum := sha256.Sum256(body)
	msg := strings.Join([]string{header.Get("X-Fal-Webhook-Request-Id"), header.Get("X-Fal-Webhook-User-Id"),
		header.Get("X-Fal-Webhook-Timestamp"), hex.EncodeToString(sum[:])}, "\n")
	sig, err := hex.DecodeString(header.Get("X-Fal-Webhook-Signature"))
	if err != nil || !ed25519.Verify(pub, []byte(msg), sig) || header.Get("X-Fal-Webhook-Request-Id") != id ||
		header.Get("X-Fal-Webhook-User-Id") != s.account {
		t.Fatalf("the webhook does not verify under the published key (%v): headers %v", err, header)
	}
	var hook struct {
		RequestID string `json:"request_id"`
		Status    string `json:"status"`
	}
	if err := json.Unmarshal(body, &hook); err != nil || hook.RequestID != id || hook.Status != "OK" {
		t.Errorf("the webhook body %s (%v)", body, err)
	}
}
