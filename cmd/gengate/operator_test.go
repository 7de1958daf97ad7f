package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestOperatorListener: /metrics and pprof are on the --admin-addr
// listener; the public listener answers 404 for /metrics unless
// --metrics-token is set, and then only to that token.
func TestOperatorListener(t *testing.T) {
	const token = "operator-metrics-token-1234"
	srv := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")
	if srv.admin == "" || srv.admin == srv.base {
		t.Fatalf("admin listener %q (public %q)", srv.admin, srv.base)
	}
	wantCode(t, mustAPI(t, srv.base, "POST", "/api/v1/generate", srv.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "m"}, nil), http.StatusOK)
	r := mustAPI(t, srv.admin, "GET", "/metrics", "", nil, nil)
	wantCode(t, r, http.StatusOK)
	for _, want := range []string{`gengate_tasks{status="succeeded"} 1`, `gengate_http_requests_total{code="200",route="POST /api/v1/generate"} 1`} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("admin /metrics lacks %s", want)
		}
	}
	wantCode(t, mustAPI(t, srv.admin, "GET", "/debug/pprof/", "", nil, nil), http.StatusOK)
	for _, p := range []string{"/metrics", "/debug/pprof/"} {
		if r := mustAPI(t, srv.base, "GET", p, "", nil, nil); r.status != http.StatusNotFound || strings.Contains(string(r.body), "gengate_") {
			t.Errorf("public %s: %d %.100s", p, r.status, r.body)
		}
	}
	if r := mustAPI(t, srv.base, "GET", "/metrics", token, nil, nil); r.status != http.StatusNotFound {
		t.Errorf("public /metrics with a token but no --metrics-token: %d", r.status)
	}

	tok := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-token", token)
	wantCode(t, mustAPI(t, tok.base, "GET", "/metrics", "", nil, nil), http.StatusUnauthorized)
	wantCode(t, mustAPI(t, tok.base, "GET", "/metrics", tok.key, nil, nil), http.StatusUnauthorized)
	r = mustAPI(t, tok.base, "GET", "/metrics", token, nil, nil)
	wantCode(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), "gengate_tasks") {
		t.Errorf("token /metrics: %.200s", r.body)
	}
}
