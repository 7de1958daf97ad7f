package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/fal/faltest"
)

// TestProviderProgressAndCancel: against the fal fake, through the
// server's own workers: a queued request's record shows its queue position
// and route and is canceled with a refund; a request a runner works on
// shows its status and log lines, and is canceled upstream without a
// refund (fal may bill it); the canceled task's statusUrl answers 409
// GENERATION_CANCELED.
func TestProviderProgressAndCancel(t *testing.T) {
	fal := faltest.New(t)
	s := providerServer(t, falConfig(fal), nil)
	async := map[string]string{"Prefer": "respond-async"}
	record := func(id string, cond func(r httpResult) bool, what string) httpResult {
		var r httpResult
		poll(t, 30*time.Second, 20*time.Millisecond, what, func() bool {
			r = mustAPI(t, s.base, "GET", "/api/generation/jobs/"+id, s.key, nil, nil)
			return cond(r)
		})
		return r
	}
	progress := func(r httpResult) map[string]any { p, _ := r.json["progress"].(map[string]any); return p }

	fal.Hold()
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, async)
	wantCode(t, r, http.StatusAccepted)
	queued := r.str("jobId")
	rec := record(queued, func(r httpResult) bool { return progress(r)["upstreamStatus"] == "IN_QUEUE" }, "a queued report")
	if p := progress(rec); p["queuePosition"] != float64(0) || p["updatedAt"] == nil {
		t.Errorf("queued progress: %s", rec.body)
	}
	if route, _ := rec.json["route"].(map[string]any); route["engine"] != "fal" || route["upstream"] != "fal-ai/flux/dev" {
		t.Errorf("route: %s", rec.body)
	}
	c := mustAPI(t, s.base, "POST", "/api/generation/jobs/"+queued+"/cancel", s.key, nil, nil)
	wantCode(t, c, http.StatusOK)
	if c.str("status") != "canceled" || c.num("remainingCredits") != 1000 {
		t.Errorf("cancel of a queued request: %s", c.body)
	}

	fal.Release()
	fal.SetPolls(1000)
	r = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, async)
	wantCode(t, r, http.StatusAccepted)
	running := r.str("jobId")
	rec = record(running, func(r httpResult) bool { return progress(r)["upstreamStatus"] == "IN_PROGRESS" }, "a running report")
	if logs, _ := progress(rec)["logs"].([]any); len(logs) != 2 || progress(rec)["queuePosition"] != nil {
		t.Errorf("running progress: %s", rec.body)
	}
	cancels := fal.Cancels()
	c = mustAPI(t, s.base, "POST", "/api/generation/jobs/"+running+"/cancel", s.key, nil, nil)
	wantCode(t, c, http.StatusOK)
	if c.str("status") != "canceled" || c.num("remainingCredits") != 996 {
		t.Errorf("cancel of a running request: %s", c.body)
	}
	if fal.Cancels() != cancels+1 {
		t.Errorf("fal cancels %d, want %d", fal.Cancels(), cancels+1)
	}
	p := mustAPI(t, s.base, "POST", "/api/generation/jobs/"+running, s.key, nil, nil)
	wantCode(t, p, http.StatusConflict)
	if p.str("code") != "GENERATION_CANCELED" || p.json["refunded"] != false {
		t.Errorf("statusUrl of a canceled task: %s", p.body)
	}
}
