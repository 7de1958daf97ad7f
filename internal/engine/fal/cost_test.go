package fal

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestPriceOfRemembersNoPrice: an endpoint fal's pricing API gives no
// price for (not listed, or the answer cannot be read) is not asked about
// again at every task's end, only once priceRetry has passed; a price,
// once read, is kept.
func TestPriceOfRemembersNoPrice(t *testing.T) {
	var asked atomic.Int64
	var answer atomic.Value
	answer.Store(`{"prices":[]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models/pricing" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		body := answer.Load().(string)
		if body == "" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	e := New(Config{APIKey: "k", BaseURL: srv.URL})
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	ctx := context.Background()
	const ep = "fal-ai/flux/dev"

	steps := []struct {
		name      string
		answer    string // "": the pricing API answers 404
		advance   time.Duration
		wantOK    bool
		wantAsked int64
	}{
		{"not listed", `{"prices":[]}`, 0, false, 1},
		{"remembered", `{"prices":[]}`, priceRetry - time.Second, false, 1},
		{"asked again after priceRetry, unreadable", "", time.Second, false, 2},
		{"unreadable remembered", `{"prices":[{"endpoint_id":"` + ep + `","unit_price":0.025,"unit":"megapixels","currency":"USD"}]}`, time.Second, false, 2},
		{"listed after priceRetry", `{"prices":[{"endpoint_id":"` + ep + `","unit_price":0.025,"unit":"megapixels","currency":"USD"}]}`, priceRetry, true, 3},
		{"price kept", "", priceRetry, true, 3},
	}
	for _, st := range steps {
		answer.Store(st.answer)
		now = now.Add(st.advance)
		p, ok := e.priceOf(ctx, ep)
		if ok != st.wantOK || asked.Load() != st.wantAsked {
			t.Fatalf("%s: priceOf = %+v, %v after %d pricing requests; want ok %v after %d", st.name, p, ok, asked.Load(), st.wantOK, st.wantAsked)
		}
		if ok && p.unitPrice != 0.025 {
			t.Fatalf("%s: price %+v", st.name, p)
		}
	}
}
