package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/httpapi"
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

// BenchmarkJobReadUnderScrapes measures an authenticated job read
// (GET /api/generation/jobs/{id}) on a SQLite database holding many task
// rows (GENGATE_BENCH_TASKS, default 2,000,000) while 8 clients scrape
// /metrics without pause: with the task counts cached (the server's
// default, --metrics-refresh 10s) and, for comparison, counted at every
// scrape (what every scrape did before). docs/notes/claims-and-reads.md
// has figures.
func BenchmarkJobReadUnderScrapes(b *testing.B) {
	n := 2_000_000
	if v := os.Getenv("GENGATE_BENCH_TASKS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	s := newStack(b, stackOpts{noWorkers: true})
	acct, key := s.account(100)
	r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, async)
	id := r.str("jobId")
	if r.Status != http.StatusAccepted || id == "" {
		b.Fatalf("generate: %d %s", r.Status, r.Body)
	}
	// Old finished tasks of the same account, written in one statement.
	_, err := s.store.SQL().Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
		INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost, fingerprint, engine,
		                   run_at, created_at, updated_at, completed_at)
		SELECT 'bench-' || i, ?, 'flux', 'image', 'succeeded', 'p', '{}', '{}', 4, 'f', 'sandbox', 1, 1, 1, 2 FROM n`, n, acct)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		every time.Duration
	}{{"cached", 10 * time.Second}, {"counted-every-scrape", time.Nanosecond}} {
		b.Run(tc.name, func(b *testing.B) {
			metrics := httptest.NewServer(httpapi.Operator(httpapi.NewMetrics(s.store, tc.every, slog.New(slog.DiscardHandler)), nil))
			defer metrics.Close()
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for ctx.Err() == nil {
						if resp, err := http.Get(metrics.URL + "/metrics"); err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				})
			}
			b.ResetTimer()
			for range b.N {
				r, err := s.send(call{Method: "GET", Path: jobPath(id), Key: key})
				if err != nil || r.Status != http.StatusOK {
					b.Fatalf("status %d, err %v", r.Status, err)
				}
			}
			b.StopTimer()
			stop()
			wg.Wait()
		})
	}
}
