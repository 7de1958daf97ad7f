package httpapi_test

import (
	"net/http"
	"testing"
)

// BenchmarkGenerate measures whole generate calls through the real stack
// (HTTP, SQLite, sandbox engine, workers): accepted as tasks (respond-async),
// and waited for to a 200 with a small PNG.
func BenchmarkGenerate(b *testing.B) {
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"async", async, http.StatusAccepted},
		{"sync", nil, http.StatusOK},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := newStack(b, stackOpts{})
			_, key := s.account(b.N * 2)
			body := map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "benchmark"}
			b.ResetTimer()
			for range b.N {
				r, err := s.send(call{Method: "POST", Path: "/api/v1/generate", Key: key, Body: body, Header: c.header})
				if err != nil || r.Status != c.want {
					b.Fatalf("status %d, err %v: %s", r.Status, err, r.Body)
				}
			}
		})
	}
}
