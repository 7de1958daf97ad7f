package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestStatusURLAdvances: GET on a statusUrl only reads (the task stays
// processing however often it is read); POST runs no step itself (with no
// free worker the task stays queued, not one attempt made) but wakes the
// workers and waits for the result (spec 3, rule 1; docs/architecture.md).
func TestStatusURLAdvances(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"image", map[string]any{"type": "image", "modelId": "flux", "prompt": "a cat", "numOutputs": 2}},
		{"video", map[string]any{"type": "video", "modelId": "wan-2-5-t2v", "prompt": "a cat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, stackOpts{noWorkers: true})
			acct, key := s.account(100)
			id := wantAccepted(t, s.generate(key, tc.body, async))
			var created string
			for i := range 5 {
				g := s.do(call{Method: "GET", Path: jobPath(id), Key: key})
				wantStatus(t, g, http.StatusOK)
				if g.str("status") != "processing" {
					t.Fatalf("GET #%d: status %q without workers: %s", i+1, g.str("status"), g.Body)
				}
				for _, m := range []string{"jobId", "status", "type", "modelId", "createdAt", "updatedAt", "statusUrl"} {
					if g.str(m) == "" {
						t.Errorf("GET body lacks %q: %s", m, g.Body)
					}
				}
				if g.str("jobId") != id || g.str("type") != tc.body["type"] || g.str("modelId") != tc.body["modelId"] ||
					g.str("statusUrl") != jobPath(id) || g.num("cost") <= 0 {
					t.Errorf("GET body: %s", g.Body)
				}
				if created == "" {
					created = g.str("createdAt")
				}
				if _, err := time.Parse(time.RFC3339Nano, g.str("createdAt")); err != nil {
					t.Errorf("createdAt: %v", err)
				}
			}
			task, err := s.store.FindTask(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if task.Status != gengate.StatusQueued || task.Attempts != 0 {
				t.Fatalf("after GETs the task is %s with %d attempts; GET must not advance it", task.Status, task.Attempts)
			}
			cost := task.Cost

			// No worker is free: POST answers with the task after its
			// wait, and no step ran in the handler.
			p := s.do(call{Method: "POST", Path: jobPath(id), Key: key, Header: map[string]string{"Prefer": "wait=1"}})
			wantAccepted(t, p)
			if task, err := s.store.FindTask(context.Background(), id); err != nil || task.Status != gengate.StatusQueued || task.Attempts != 0 {
				t.Fatalf("after POST with no free worker the task is %+v (%v), want queued with no attempt", task, err)
			}
			s.startWorkers(1)
			p = s.do(call{Method: "POST", Path: jobPath(id), Key: key})
			wantStatus(t, p, http.StatusOK)
			if p.str("jobId") != id || p.num("remainingCredits") != 100-cost {
				t.Errorf("POST: %s", p.Body)
			}
			var first []string
			if tc.body["type"] == "video" {
				wantVideo(t, p.str("video"))
				first = []string{p.str("video")}
			} else {
				first = images(t, p)
				if len(first) != 2 {
					t.Fatalf("%d images, want 2", len(first))
				}
				for _, u := range first {
					wantImage(t, u, "png", 1, 1)
				}
			}

			// Polling a finished task again gives the same result and
			// charges nothing.
			for range 3 {
				again := s.do(call{Method: "POST", Path: jobPath(id), Key: key})
				wantStatus(t, again, http.StatusOK)
				urls := []string{again.str("video")}
				if tc.body["type"] == "image" {
					urls = images(t, again)
				}
				if !slices.Equal(urls, first) || again.num("remainingCredits") != 100-cost || again.str("jobId") != id {
					t.Errorf("second POST differs: %s", again.Body)
				}
			}
			g := s.do(call{Method: "GET", Path: jobPath(id), Key: key})
			if g.str("status") != "succeeded" || g.str("completedAt") == "" || g.str("createdAt") != created {
				t.Errorf("GET after finishing: %s", g.Body)
			}
			if b := s.balance(acct); b != 100-cost {
				t.Errorf("balance %d, want %d", b, 100-cost)
			}
			entries := s.ledgerCheck(acct)
			if c := charges(entries, "charge"); len(c) != 1 || c[id] != 1 {
				t.Errorf("charges %v, want one for %s", c, id)
			}
		})
	}
}

// TestStatusURLWakesWorker: POST on a task whose next poll is far off
// (an upstream's backoff) makes it due now and wakes a free worker, which
// runs the step; the POST waits for the result. Without the nudge the
// worker would leave the task alone for an hour.
func TestStatusURLWakesWorker(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(100)
	id := wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "z-image-turbo", "prompt": "x"}, async))
	// Put the task in a backoff, as a busy upstream would.
	ctx := context.Background()
	task, err := s.store.ClaimTask(ctx, id, "test", time.Now(), time.Minute)
	if err != nil || task == nil {
		t.Fatalf("ClaimTask: %v %v", task, err)
	}
	task.RunAt = time.Now().Add(time.Hour)
	if err := s.store.SaveStep(ctx, task, true); err != nil {
		t.Fatal(err)
	}
	s.startWorkers(1)
	p := s.do(call{Method: "POST", Path: jobPath(id), Key: key, Header: map[string]string{"Prefer": "wait=60"}})
	wantStatus(t, p, http.StatusOK)
	wantImage(t, images(t, p)[0], "png", 1, 1)
}

// TestJobNotFound: another account's task and unknown ids are 404, never
// 403, on GET and POST.
func TestJobNotFound(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(100)
	_, other := s.account(100)
	id := wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, async))
	for _, tc := range []struct{ name, key, id string }{
		{"other account", other, id},
		{"unknown uuid", key, gengate.NewID()},
		{"not a uuid", key, "nope"},
	} {
		for _, m := range []string{"GET", "POST"} {
			t.Run(tc.name+" "+m, func(t *testing.T) {
				wantProblem(t, s.do(call{Method: m, Path: jobPath(tc.id), Key: tc.key}), http.StatusNotFound, gengate.ENotFound)
			})
		}
	}
	// The other account's POST did not advance the task.
	task, err := s.store.FindTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != gengate.StatusQueued {
		t.Errorf("task is %s after another account's POST", task.Status)
	}
	wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/nothing", Key: key}), http.StatusNotFound, gengate.ENotFound)
}

// TestAuth: both headers work; a missing, invalid or revoked key is 401
// with a problem body, on every endpoint.
func TestAuth(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	acct, key := s.account(100)
	_, revoked := s.account(100)
	if err := s.store.RevokeAPIKey(context.Background(), gengate.DisplayPrefix(revoked), time.Now()); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}
	id := wantAccepted(t, s.generate(key, body, async))

	t.Run("Authorization Bearer", func(t *testing.T) {
		wantAccepted(t, s.do(call{Method: "POST", Path: "/api/v1/generate", Body: body, Header: map[string]string{
			"Authorization": "Bearer " + key, "Prefer": "respond-async"}}))
	})
	t.Run("X-API-Key", func(t *testing.T) {
		wantAccepted(t, s.do(call{Method: "POST", Path: "/api/v1/generate", Body: body, Header: map[string]string{
			"X-API-Key": key, "Prefer": "respond-async"}}))
		g := s.do(call{Method: "GET", Path: jobPath(id), Header: map[string]string{"X-API-Key": key}})
		wantStatus(t, g, http.StatusOK)
		wantStatus(t, s.do(call{Method: "GET", Path: "/api/v1/models", Header: map[string]string{"X-API-Key": key}}), http.StatusOK)
	})
	before, balance := s.taskCount(), s.balance(acct)
	bad := []struct {
		name   string
		header map[string]string
	}{
		{"missing", nil},
		{"invalid bearer", map[string]string{"Authorization": "Bearer gg_live_00000000000000000000000000000000"}},
		{"invalid x-api-key", map[string]string{"X-API-Key": "gg_live_nope"}},
		{"revoked bearer", map[string]string{"Authorization": "Bearer " + revoked}},
		{"revoked x-api-key", map[string]string{"X-API-Key": revoked}},
		{"basic scheme", map[string]string{"Authorization": "Basic " + key}},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}},
	}
	for _, tc := range bad {
		for _, ep := range []call{
			{Method: "POST", Path: "/api/v1/generate", Body: body},
			{Method: "GET", Path: "/api/v1/models"},
			{Method: "GET", Path: jobPath(id)},
			{Method: "POST", Path: jobPath(id)},
		} {
			t.Run(tc.name+" "+ep.Method+" "+ep.Path, func(t *testing.T) {
				ep.Header = tc.header
				r := s.do(ep)
				wantProblem(t, r, http.StatusUnauthorized, gengate.EUnauthorized)
				if r.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 without WWW-Authenticate")
				}
			})
		}
	}
	if s.taskCount() != before || s.balance(acct) != balance {
		t.Errorf("unauthorized requests changed something: tasks %d→%d", before, s.taskCount())
	}
}

// TestModels: GET /api/v1/models lists the 42 models (25 image and 16
// video models of the current listing, and face-swap), each served by the
// sandbox as a placeholder.
func TestModels(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(0)
	r := s.do(call{Method: "GET", Path: "/api/v1/models", Key: key})
	wantStatus(t, r, http.StatusOK)
	models, _ := r.JSON["models"].([]any)
	if len(models) != 42 {
		t.Fatalf("%d models, want 42", len(models))
	}
	count := map[string]int{}
	ids := map[string]bool{}
	for _, raw := range models {
		m, _ := raw.(map[string]any)
		id, _ := m["id"].(string)
		typ, _ := m["type"].(string)
		if ids[id] {
			t.Errorf("model %q listed twice", id)
		}
		ids[id] = true
		if m["legacy"] == true {
			count["legacy "+typ]++
		} else {
			count[typ]++
		}
		if m["engine"] != "sandbox" || m["placeholder"] != true {
			t.Errorf("model %s: engine %v placeholder %v, want sandbox true", id, m["engine"], m["placeholder"])
		}
		if _, ok := m["credits"].(float64); !ok {
			t.Errorf("model %s has no credits", id)
		}
		if _, ok := m["inputs"].([]any); !ok {
			t.Errorf("model %s has no inputs list", id)
		}
	}
	if count["image"] != 25 || count["video"] != 16 || count["legacy image"] != 1 || !ids["face-swap"] {
		t.Errorf("listing counts %v, want 25 image, 16 video and face-swap", count)
	}
	for _, id := range []string{"flux", "remove-bg", "gpt-image-2-5-sunburst", "ai-background-generator",
		"openai-sora-2", "kling-v2-6-motion-control", "wan-2-6-t2v"} {
		if !ids[id] {
			t.Errorf("model %s missing", id)
		}
	}
}

// TestReviewTerms: a prompt held for review is 409 GENERATION_NEEDS_REVIEW
// with its jobId; the credits stay charged; GET shows needs_review and POST
// keeps answering 409.
func TestReviewTerms(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{reviewTerms: []string{"Forbidden Thing"}})
	acct, key := s.account(100)
	for _, prefer := range []map[string]string{nil, async} {
		before := s.balance(acct)
		r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a forbidden thing at dawn"}, prefer)
		wantProblem(t, r, http.StatusConflict, gengate.ENeedsReview)
		id := r.str("jobId")
		if !isUUID(id) {
			t.Fatalf("409 without jobId: %s", r.Body)
		}
		if b := s.balance(acct); b != before-4 {
			t.Errorf("balance %d, want %d: credits are held while in review", b, before-4)
		}
		if r.num("remainingCredits") != before-4 {
			t.Errorf("remainingCredits %d, want %d", r.num("remainingCredits"), before-4)
		}
		g := s.do(call{Method: "GET", Path: jobPath(id), Key: key})
		wantStatus(t, g, http.StatusOK)
		if g.str("status") != "needs_review" {
			t.Errorf("GET status %q, want needs_review: %s", g.str("status"), g.Body)
		}
		for range 2 {
			wantProblem(t, s.do(call{Method: "POST", Path: jobPath(id), Key: key}), http.StatusConflict, gengate.ENeedsReview)
		}
		if b := s.balance(acct); b != before-4 {
			t.Errorf("balance %d after POSTs, want %d", b, before-4)
		}
	}
	// A prompt without the term is not held.
	wantStatus(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a permitted thing"}, nil), http.StatusOK)
	s.ledgerCheck(acct)
}
