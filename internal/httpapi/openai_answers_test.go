package httpapi_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/fetch"
)

// editBody is a multipart /v1/images/edits body with one image.
func editBody(t *testing.T, model, prompt string, image []byte) ([]byte, map[string]string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("model", model)
	_ = w.WriteField("prompt", prompt)
	if image != nil {
		part, err := w.CreateFormFile("image", "in.png")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = part.Write(image)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), map[string]string{"Content-Type": w.FormDataContentType()}
}

// openAIAnswer checks an OpenAI-shaped error answer's status and code.
func openAIAnswer(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	e, _ := r.JSON["error"].(map[string]any)
	if got, _ := e["code"].(string); got != code {
		t.Errorf("code %q, want %q: %s", got, code, r.Body)
	}
}

// TestOpenAIAnswers: the OpenAI-compatible endpoints, by plain HTTP, give
// OpenAI's shape for each outcome: in review (409), still running (503
// generation_pending), failed upstream (502) or past its deadline (504)
// when retried with the Idempotency-Key, over the key's spend limit (402),
// and for edits a missing image (400), an unknown model (404), no credits
// (429 insufficient_quota) and a body over the limit (413).
func TestOpenAIAnswers(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, syncWait: time.Millisecond, reviewTerms: []string{"hold"},
		maxBody: 64 << 10, fetch: fetch.Config{MaxBytes: 64 << 10, MaxVideoBytes: 64 << 10}})
	h := s.holder(1000, false)
	png := testPNG(t, 16, 16)
	gen := func(prompt string, header map[string]string) response {
		return s.do(call{Method: "POST", Path: "/v1/images/generations", Key: h.key, Body: map[string]any{"model": "flux", "prompt": prompt}, Header: header})
	}
	edit := func(key, model, prompt string, image []byte, header map[string]string) response {
		body, hdr := editBody(t, model, prompt, image)
		for k, v := range header {
			hdr[k] = v
		}
		return s.do(call{Method: "POST", Path: "/v1/images/edits", Key: key, Body: body, Header: hdr})
	}
	openAIAnswer(t, gen("hold this cat", nil), http.StatusConflict, "generation_needs_review")
	openAIAnswer(t, edit(h.key, "qwen-image-edit", "hold this", png, nil), http.StatusConflict, "generation_needs_review")

	// No worker runs: the task is still running when the wait ends.
	for _, c := range []struct {
		code   string
		status int
	}{{gengate.CodeUpstream, http.StatusBadGateway}, {gengate.CodeDeadline, http.StatusGatewayTimeout}} {
		idem := map[string]string{"Idempotency-Key": "oa-" + c.code}
		openAIAnswer(t, gen("a cat", idem), http.StatusServiceUnavailable, "generation_pending")
		eidem := map[string]string{"Idempotency-Key": "oa-edit-" + c.code}
		openAIAnswer(t, edit(h.key, "qwen-image-edit", "night", png, eidem), http.StatusServiceUnavailable, "generation_pending")
		tasks := listOf(t, s.do(call{Method: "GET", Path: "/api/generation/jobs?status=processing", Key: h.key}))
		if len(tasks) != 2 {
			t.Fatalf("%d running tasks, want 2", len(tasks))
		}
		for _, task := range tasks {
			s.failTask(task["jobId"].(string), c.code, false)
		}
		openAIAnswer(t, gen("a cat", idem), c.status, "generation_failed")
		openAIAnswer(t, edit(h.key, "qwen-image-edit", "night", png, eidem), c.status, "generation_failed")
	}

	openAIAnswer(t, edit(h.key, "qwen-image-edit", "night", nil, nil), http.StatusBadRequest, "invalid_value")
	openAIAnswer(t, edit(h.key, "dall-e-9", "night", png, nil), http.StatusNotFound, "model_not_found")
	openAIAnswer(t, edit(h.key, "qwen-image-edit", "night", bytes.Repeat(png, (3<<20)/len(png)), nil), http.StatusRequestEntityTooLarge, "payload_too_large")
	poor := s.holder(0, false)
	openAIAnswer(t, edit(poor.key, "qwen-image-edit", "night", png, nil), http.StatusTooManyRequests, "insufficient_quota")

	k := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "tight", "spendLimit": 1}})
	wantStatus(t, k, http.StatusCreated)
	r := s.do(call{Method: "POST", Path: "/v1/images/generations", Key: k.str("key"), Body: map[string]any{"model": "flux", "prompt": "a cat"}})
	openAIAnswer(t, r, http.StatusPaymentRequired, strings.ToLower(gengate.ESpendLimit))
	openAIAnswer(t, edit(k.str("key"), "qwen-image-edit", "night", png, nil), http.StatusPaymentRequired, strings.ToLower(gengate.ESpendLimit))
	if refunds := charges(s.ledgerCheck(h.account), gengate.LedgerRefund); len(refunds) != 4 {
		t.Errorf("refunds %v, want one per failed task", refunds)
	}
}

// TestCancelProviderUnreachable: a cancel whose provider cannot be asked
// (fal answers 503) answers 503 OVERLOADED with Retry-After and changes
// nothing; once fal answers again, the cancel goes through, refunded as
// fal confirms the request was still queued.
func TestCancelProviderUnreachable(t *testing.T) {
	f := faltest.New(t)
	var down atomic.Bool
	target, _ := url.Parse(f.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"detail": "service unavailable"}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	s := newStack(t, stackOpts{noWorkers: true, engines: map[string]gengate.Engine{
		"fal": fal.New(fal.Config{APIKey: f.Key(), BaseURL: front.URL, AllowPrivateOutputs: true})}})
	h := s.holder(100, false)
	f.Hold()
	id := wantAccepted(t, s.generate(h.key, flux("a cat"), async))
	if _, err := s.svc.RunNext(context.Background()); err != nil { // a worker submits it to fal
		t.Fatal(err)
	}
	g := s.do(call{Method: "GET", Path: jobPath(id), Key: h.key})
	if route, _ := g.JSON["route"].(map[string]any); route["engine"] != "fal" {
		t.Fatalf("the task is not on fal: %s", g.Body)
	}
	balance := s.balance(h.account)

	down.Store(true)
	r := s.do(call{Method: "POST", Path: jobPath(id) + "/cancel", Key: h.key})
	wantProblem(t, r, http.StatusServiceUnavailable, gengate.EOverloaded)
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if g := s.do(call{Method: "GET", Path: jobPath(id), Key: h.key}); g.str("status") != "processing" || s.balance(h.account) != balance {
		t.Errorf("a cancel that could not ask fal changed the task: %s, balance %d → %d", g.Body, balance, s.balance(h.account))
	}

	down.Store(false)
	r = s.do(call{Method: "POST", Path: jobPath(id) + "/cancel", Key: h.key})
	wantStatus(t, r, http.StatusOK)
	if r.str("status") != "canceled" || r.num("remainingCredits") != 100 || f.Cancels() != 1 {
		t.Errorf("cancel after fal is back: %s (%d cancels at fal)", r.Body, f.Cancels())
	}
}
