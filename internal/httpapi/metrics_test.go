package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

func TestMetrics(t *testing.T) {
	const token = "metrics-token-for-tests"
	s := newStack(t, stackOpts{metricsToken: token})
	_, key := s.account(100)
	wantStatus(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "metrics"}, nil), http.StatusOK)
	wantStatus(t, s.generate(key, map[string]any{"type": "image", "modelId": "no-such-model"}, nil), http.StatusBadRequest)
	wantStatus(t, s.generate("gg_live_wrong", map[string]any{"type": "image"}, nil), http.StatusUnauthorized)

	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer " + token + "x"}, {"Authorization": "Basic " + token}} {
		r := s.do(call{Method: "GET", Path: "/metrics", Header: h})
		wantStatus(t, r, http.StatusUnauthorized)
		if r.str("code") != gengate.EUnauthorized || strings.Contains(string(r.Body), "gengate_") {
			t.Errorf("/metrics with %v: %s", h, r.Body)
		}
	}
	r := s.do(call{Method: "GET", Path: "/metrics", Header: map[string]string{"Authorization": "Bearer " + token}})
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

// TestMetricsNotPublicByDefault: without a metrics token the public
// handler has no /metrics at all.
func TestMetricsNotPublicByDefault(t *testing.T) {
	s := newStack(t, stackOpts{})
	r := s.do(call{Method: "GET", Path: "/metrics"})
	wantStatus(t, r, http.StatusNotFound)
	if strings.Contains(string(r.Body), "gengate_") || r.str("code") != gengate.ENotFound {
		t.Fatalf("public /metrics answered %s", r.Body)
	}
}

// countingTasks is the real store, counting its CountTasks calls.
type countingTasks struct {
	httpapi.TaskCounter
	n atomic.Int64
}

func (c *countingTasks) CountTasks(ctx context.Context) (map[gengate.Status]int, error) {
	c.n.Add(1)
	return c.TaskCounter.CountTasks(ctx)
}

// TestTaskCountsCached: many scrapes, concurrent or not, count the tasks
// in the store once per refresh interval, not once each.
func TestTaskCountsCached(t *testing.T) {
	store := sqltest.Open(t, "sqlite")
	scrape := func(t *testing.T, url string) {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `gengate_tasks{status="queued"} 0`) {
			t.Errorf("scrape: %d %.200s", resp.StatusCode, body)
		}
	}
	for _, tc := range []struct {
		name  string
		every time.Duration
	}{
		{"cached for an hour", time.Hour},
		{"refreshed at every scrape", time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks := &countingTasks{TaskCounter: store}
			srv := httptest.NewServer(httpapi.Operator(httpapi.NewMetrics(tasks, tc.every, slog.New(slog.DiscardHandler)), nil))
			defer srv.Close()
			const scrapes = 40
			var wg sync.WaitGroup
			for range scrapes / 2 {
				wg.Go(func() { scrape(t, srv.URL) })
			}
			wg.Wait()
			for range scrapes / 2 {
				scrape(t, srv.URL)
			}
			got := tasks.n.Load()
			switch {
			case tc.every == time.Hour && got != 1:
				t.Fatalf("%d scrapes counted the tasks %d times, want once", scrapes, got)
			case tc.every == time.Nanosecond && got < scrapes/2:
				t.Fatalf("%d scrapes with no cache counted %d times", scrapes, got)
			}
		})
	}
}

func TestOperatorHandler(t *testing.T) {
	srv := httptest.NewServer(httpapi.Operator(httpapi.NewMetrics(nil, 0, slog.New(slog.DiscardHandler)), nil))
	defer srv.Close()
	for _, p := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline", "/healthz"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
}
