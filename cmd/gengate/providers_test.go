package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// These tests run gengate (in process through run(), or as the real binary
// for the crash test) against in-process fakes of the upstream providers.
// The fakes (internal/engine/*/…test) are written from each provider's
// documented protocol; no real provider is reachable from here.

// writeConfig writes a --config file and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gengate.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func falConfig(f *faltest.Server) string {
	return fmt.Sprintf("  fal:\n    apiKey: %s\n    baseUrl: %s\n", f.Key(), f.URL())
}

func replicateConfig(r *replicatetest.Server) string {
	return fmt.Sprintf("  replicate:\n    apiKey: %s\n    baseUrl: %s\n", r.Key(), r.URL())
}

// runServerEnv is runServer with an environment.
func runServerEnv(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{stderr: &syncBuffer{}, done: make(chan error, 1), stop: cancel}
	go func() {
		err := run(ctx, append([]string{"serve"}, args...), func(k string) string { return env[k] }, pw, s.stderr)
		pw.Close()
		s.done <- err
	}()
	lines := startLines(pr)
	s.banner = readBanner(t, lines, 30*time.Second, func() string { return "stderr: " + s.stderr.String() })
	go func() {
		for range lines {
		}
	}()
	t.Cleanup(func() { s.shutdown(t) })
	return s
}

func providerServer(t *testing.T, yaml string, env map[string]string) *server {
	t.Helper()
	args := []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--sync-wait", "30s"}
	if yaml != "" {
		args = append(args, "--config", writeConfig(t, "providers:\n"+yaml))
	}
	return runServerEnv(t, env, args...)
}

var fluxBody = map[string]any{"type": "image", "modelId": "flux", "prompt": "a lighthouse at dusk"}

// TestProviderSuccessAndOutputsKept: a fal task completes, its output is
// served from gengate's storage, and still after fal deleted its copy.
func TestProviderSuccessAndOutputsKept(t *testing.T) {
	fal := faltest.New(t)
	s := providerServer(t, falConfig(fal), nil)
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusOK)
	if n := r.num("remainingCredits"); n != 996 {
		t.Errorf("remainingCredits %d, want 996", n)
	}
	if got := fal.LastRequest()["prompt"]; got != "a lighthouse at dusk" {
		t.Errorf("fal got prompt %v", got)
	}
	fal.DeleteOutputs()
	urls := outputURLs(r)
	if len(urls) != 1 {
		t.Fatalf("outputs %v", urls)
	}
	for _, u := range urls {
		if strings.HasPrefix(u, fal.URL()) {
			t.Fatalf("output served from the upstream: %s", u)
		}
		data, err := download(u)
		if err != nil || !isMedia(data) {
			t.Fatalf("output %s after the upstream deleted it: %v", u, err)
		}
	}
	if fal.Submissions() != 1 {
		t.Errorf("fal submissions %d", fal.Submissions())
	}
}

// TestProviderFallback: the first route refuses (401), the second takes
// the task; one charge, no refund.
func TestProviderFallback(t *testing.T) {
	fal := faltest.New(t)
	rep := replicatetest.New(t)
	fal.FailSubmits(http.StatusUnauthorized, 100)
	s := providerServer(t, falConfig(fal)+replicateConfig(rep), nil)
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusOK)
	if fal.Submissions() != 0 || rep.Submissions() != 1 {
		t.Errorf("fal %d, replicate %d submissions; want 0 and 1", fal.Submissions(), rep.Submissions())
	}
	if n := r.num("remainingCredits"); n != 996 {
		t.Errorf("remainingCredits %d, want 996", n)
	}
	// The refusal was logged; the keys never are.
	if log := s.stderr.String(); strings.Contains(log, fal.Key()) || strings.Contains(log, rep.Key()) {
		t.Error("an upstream API key appears in the server log")
	}
	if strings.Contains(string(r.body), fal.Key()) || strings.Contains(string(r.body), rep.Key()) {
		t.Error("an upstream API key appears in the response")
	}
}

// TestProviderBusyThenSuccess: 429 at submit and 503 while polling only
// delay the task.
func TestProviderBusyThenSuccess(t *testing.T) {
	fal := faltest.New(t)
	fal.FailSubmits(http.StatusTooManyRequests, 2)
	fal.FailPolls(http.StatusServiceUnavailable, 2)
	s := providerServer(t, falConfig(fal), nil)
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusOK)
	if fal.Submissions() != 1 {
		t.Errorf("fal submissions %d, want 1", fal.Submissions())
	}
}

// TestProviderFailures: a definite failure and a content-policy rejection
// fail the task with their reason and refund it; an option the only
// configured upstream cannot do is refused before any charge.
func TestProviderFailures(t *testing.T) {
	fal := faltest.New(t)
	rep := replicatetest.New(t)
	s := providerServer(t, falConfig(fal)+replicateConfig(rep), nil)

	fal.FailJobs("content_policy")
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusUnprocessableEntity)
	if r.str("code") != "GENERATION_FAILED" || r.str("reason") != "CONTENT_POLICY" || r.num("creditsRefunded") != 4 || r.num("remainingCredits") != 1000 {
		t.Fatalf("content policy: %s", r.body)
	}
	if rep.Submissions() != 0 {
		t.Error("a content-policy failure must not fall back")
	}

	fal.FailJobs("error")
	r = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusBadGateway)
	if r.str("reason") != "UPSTREAM_ERROR" || r.num("remainingCredits") != 1000 {
		t.Fatalf("upstream error: %s", r.body)
	}
	// Failures are logged at WARN, where an operator looks.
	poll(t, 10*time.Second, 20*time.Millisecond, "the failure in the log at WARN", func() bool {
		return strings.Contains(s.stderr.String(), `"level":"WARN","msg":"task finished"`)
	})
	job := mustAPI(t, s.base, "GET", "/api/generation/jobs/"+r.str("jobId"), s.key, nil, nil)
	if e, _ := job.json["error"].(map[string]any); e == nil || e["reason"] != "UPSTREAM_ERROR" {
		t.Errorf("GET shows %s", job.body)
	}
}

// TestProviderUnsupportedOption: Replicate's flux-dev has no 4:3; with only
// Replicate configured the request is refused with 400, nothing charged.
func TestProviderUnsupportedOption(t *testing.T) {
	rep := replicatetest.New(t)
	s := providerServer(t, replicateConfig(rep), nil)
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "aspectRatio": "4:3"}
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, body, nil)
	wantCode(t, r, http.StatusBadRequest)
	if r.str("code") != "UNSUPPORTED_MODEL_OPTION" || !strings.Contains(string(r.body), "aspectRatio") {
		t.Fatalf("got %s", r.body)
	}
	r = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusOK)
	if n := r.num("remainingCredits"); n != 996 || rep.Submissions() != 1 {
		t.Errorf("after a refused request: remainingCredits %d, submissions %d", n, rep.Submissions())
	}
}

// TestProviderResetAfterSubmit: the connection drops after fal received the
// submit: the task goes to review (409), fal saw exactly one submission,
// and the credits stay held.
func TestProviderResetAfterSubmit(t *testing.T) {
	fal := faltest.New(t)
	rep := replicatetest.New(t)
	fal.ResetNextSubmit()
	s := providerServer(t, falConfig(fal)+replicateConfig(rep), nil)
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, fluxBody, nil)
	wantCode(t, r, http.StatusConflict)
	if r.str("code") != "GENERATION_NEEDS_REVIEW" || r.num("remainingCredits") != 996 {
		t.Fatalf("got %s", r.body)
	}
	again := mustAPI(t, s.base, "POST", "/api/generation/jobs/"+r.str("jobId"), s.key, nil, nil)
	wantCode(t, again, http.StatusConflict)
	if fal.Submissions() != 1 || rep.Submissions() != 0 {
		t.Errorf("submissions fal %d replicate %d, want 1 and 0", fal.Submissions(), rep.Submissions())
	}
}

// TestModelsFollowProviders: with a provider configured, only the models
// its routes (or built-in engines) serve are listed, none as placeholders;
// with none, every model is listed, served by the sandbox.
func TestModelsFollowProviders(t *testing.T) {
	listing := func(s *server) map[string]map[string]any {
		r := mustAPI(t, s.base, "GET", "/api/v1/models", s.key, nil, nil)
		out := map[string]map[string]any{}
		for _, m := range r.json["models"].([]any) {
			mm := m.(map[string]any)
			out[mm["id"].(string)] = mm
		}
		return out
	}
	fal := faltest.New(t)
	withFal := listing(providerServer(t, "", map[string]string{"FAL_KEY": fal.Key()}))
	if _, ok := withFal["gpt-image-2"]; ok {
		t.Error("gpt-image-2 listed with only fal configured")
	}
	if m := withFal["flux"]; m == nil || m["engine"] != "fal" || m["placeholder"] != false {
		t.Errorf("flux: %v", m)
	}
	offline := listing(providerServer(t, "", nil))
	if m := offline["gpt-image-2"]; m == nil || m["engine"] != "sandbox" || m["placeholder"] != true {
		t.Errorf("offline gpt-image-2: %v", m)
	}
	if len(offline) <= len(withFal) {
		t.Errorf("offline lists %d models, with fal %d", len(offline), len(withFal))
	}
}

// TestProviderCrashResume: gengate is SIGKILLed after fal accepted a task
// and before it finished; after a restart the task resumes from its stored
// upstream id: fal counts one submission, the task succeeds, charged once.
func TestProviderCrashResume(t *testing.T) {
	fal := faltest.New(t)
	fal.Hold()
	dir, dbURL, args := crashSetup(t, "sqlite", "0s", "2s")
	args = append(args, "--config", writeConfig(t, "providers:\n"+falConfig(fal)))
	p1 := startProcess(t, args...)
	r := mustAPI(t, p1.base, "POST", "/api/v1/generate", p1.key, fluxBody, map[string]string{"Prefer": "respond-async"})
	wantCode(t, r, http.StatusAccepted)
	id := r.str("jobId")
	store, err := openDataStore(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, 20*time.Millisecond, "the upstream id to be stored", func() bool {
		tk, err := store.FindTask(context.Background(), id)
		return err == nil && tk.UpstreamID != ""
	})
	store.Close()
	p1.kill(t)
	fal.Release()

	p2 := startProcess(t, args...)
	var final httpResult
	poll(t, 60*time.Second, 100*time.Millisecond, "the task to finish", func() bool {
		final = mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+id, p1.key, nil, nil)
		return final.str("status") != "processing"
	})
	if final.str("status") != "succeeded" {
		t.Fatalf("task ended %s\n%s", final.body, p2.logTail())
	}
	if fal.Submissions() != 1 {
		t.Errorf("fal submissions %d, want 1", fal.Submissions())
	}
	res := mustAPI(t, p2.base, "POST", "/api/generation/jobs/"+id, p1.key, nil, nil)
	wantCode(t, res, http.StatusOK)
	if n := res.num("remainingCredits"); n != 996 {
		t.Errorf("remainingCredits %d, want 996 (one charge)", n)
	}
	fal.DeleteOutputs()
	for _, u := range outputURLs(res) {
		if data, err := download(u); err != nil || !isMedia(data) {
			t.Errorf("output %s: %v", u, err)
		}
	}
	_ = sqltest.Dialects
}
