package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestMetrics(t *testing.T) {
	s := newStack(t, stackOpts{})
	_, key := s.account(100)
	wantStatus(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "metrics"}, nil), http.StatusOK)
	wantStatus(t, s.generate(key, map[string]any{"type": "image", "modelId": "no-such-model"}, nil), http.StatusBadRequest)
	wantStatus(t, s.generate("gg_live_wrong", map[string]any{"type": "image"}, nil), http.StatusUnauthorized)

	r := s.do(call{Method: "GET", Path: "/metrics"})
	wantStatus(t, r, http.StatusOK)
	body := string(r.Body)
	for _, want := range []string{
		`gengate_http_requests_total{code="200",route="POST /api/v1/generate"} 1`,
		`gengate_http_requests_total{code="400",route="POST /api/v1/generate"} 1`,
		`gengate_http_requests_total{code="401",route="POST /api/v1/generate"} 1`,
		`gengate_tasks{status="succeeded"} 1`,
		`gengate_tasks{status="queued"} 0`,
		`gengate_http_request_duration_seconds_count{route="POST /api/v1/generate"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
