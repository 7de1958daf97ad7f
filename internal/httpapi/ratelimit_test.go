package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"
)

// TestRateLimit: with a limit set, a key's calls over its bucket get 429
// RATE_LIMITED with Retry-After and change nothing; other keys and other
// endpoints are unaffected.
func TestRateLimit(t *testing.T) {
	s := newStack(t, stackOpts{rateLimit: 0.01, rateBurst: 2}) // 2 at once, then one per 100 s
	acct, key := s.account(100)
	_, other := s.account(100)
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "limited"}
	for range 2 {
		wantStatus(t, s.generate(key, body, async), http.StatusAccepted)
	}
	tasks, balance := s.taskCount(), s.balance(acct)
	r := s.generate(key, body, async)
	wantStatus(t, r, http.StatusTooManyRequests)
	if r.JSON["code"] != "RATE_LIMITED" {
		t.Fatalf("code %v, want RATE_LIMITED", r.JSON["code"])
	}
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 100 {
		t.Fatalf("Retry-After %q, want 1..100 seconds", r.Header.Get("Retry-After"))
	}
	if s.taskCount() != tasks || s.balance(acct) != balance {
		t.Fatalf("a refused call changed tasks (%d→%d) or balance (%d→%d)", tasks, s.taskCount(), balance, s.balance(acct))
	}
	wantStatus(t, s.generate(other, body, async), http.StatusAccepted)
	wantStatus(t, s.do(call{Method: "GET", Path: "/api/v1/models", Key: key}), http.StatusOK)
}

// TestNoRateLimitByDefault: without a limit, many calls in a row pass.
func TestNoRateLimitByDefault(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(1000)
	for range 20 {
		wantStatus(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "free"}, async), http.StatusAccepted)
	}
}
