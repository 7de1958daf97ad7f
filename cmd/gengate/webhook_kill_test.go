package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// hookReceiver is a webhook receiver on loopback: it answers 500 to the
// first request, holds the second until release is closed (the attempt
// in flight when the test kills the sender), and answers 200 after that.
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []http.Header
	bodies   [][]byte
	ok       int // requests answered 200
	inFlight chan struct{}
	release  chan struct{}
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{inFlight: make(chan struct{}), release: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req.Header.Clone())
		r.bodies = append(r.bodies, body)
		n := len(r.got)
		r.mu.Unlock()
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			close(r.inFlight)
			select {
			case <-r.release:
			case <-req.Context().Done():
			}
			w.WriteHeader(http.StatusInternalServerError)
		default:
			r.mu.Lock()
			r.ok++
			r.mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
		r.Close()
	})
	return r
}

// TestWebhookSurvivesSIGKILL: the receiver fails the first attempt; the
// delivering process is SIGKILLed while the second attempt is in flight;
// restarted on the same data, it sends the event again, with the same
// webhook-id and a valid signature, once the killed attempt's lease has run
// out. Backoff and lease are shortened with --webhook-retry-delays and
// --webhook-lease; the receiver is on loopback (--allow-private-inputs).
func TestWebhookSurvivesSIGKILL(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			_, _, args := crashSetup(t, dialect, "0s", "2s")
			args = append(args, "--allow-private-inputs", "--webhook-retry-delays", "1s,1s,1s,1s,1s",
				"--webhook-lease", "3s", "--webhook-timeout", "2s")
			rcv := newHookReceiver(t)
			p1 := startProcess(t, args...)
			key := p1.key
			secret := mustAPI(t, p1.base, "GET", "/api/v1/webhooks/secret", key, nil, nil).str("secret")
			r := mustAPI(t, p1.base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux",
				"prompt": "a hook", "webhookUrl": rcv.URL + "/hook"}, nil)
			wantCode(t, r, http.StatusOK)
			id := r.str("jobId")

			select { // the first attempt failed; the retry is at the receiver
			case <-rcv.inFlight:
			case <-time.After(2 * time.Minute):
				t.Fatalf("the retry never came\n%s", p1.logTail())
			}
			p1.kill(t)
			close(rcv.release)

			p2 := startProcess(t, args...)
			poll(t, 2*time.Minute, 20*time.Millisecond, "the event delivered after the restart", func() bool {
				rcv.mu.Lock()
				defer rcv.mu.Unlock()
				return rcv.ok > 0
			})
			rcv.mu.Lock()
			got, bodies := rcv.got, rcv.bodies
			rcv.mu.Unlock()
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range got {
				if h.Get("webhook-id") != got[0].Get("webhook-id") {
					t.Errorf("attempt %d webhook-id %q, want %q", i+1, h.Get("webhook-id"), got[0].Get("webhook-id"))
				}
				if err := wh.Verify(bodies[i], h); err != nil {
					t.Errorf("attempt %d does not verify: %v", i+1, err)
				}
			}
			var p struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(bodies[len(bodies)-1], &p); err != nil || p.Type != "generation.succeeded" || p.Data["jobId"] != id {
				t.Errorf("delivered payload %s (%v)", bodies[len(bodies)-1], err)
			}
			// The record: delivered, the killed attempt counted but never
			// recorded (no answer reached a living process).
			poll(t, 2*time.Minute, 20*time.Millisecond, "the record to say delivered", func() bool {
				rec := mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+id, key, nil, nil)
				wh, _ := rec.json["webhook"].(map[string]any)
				evs, _ := wh["events"].([]any)
				return len(evs) == 1 && evs[0].(map[string]any)["status"] == "delivered" &&
					evs[0].(map[string]any)["id"] == got[0].Get("webhook-id")
			})
		})
	}
}
