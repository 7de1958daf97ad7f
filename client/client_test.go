package client_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg"
	"image/png"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate/client"
)

func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGenerateAndDownload: a synchronous generate gives the images, and
// DownloadTo writes them as files.
func TestGenerateAndDownload(t *testing.T) {
	s := newServer(t, serverOpts{})
	acct, key := s.mustAccount(t, 100)
	c := client.New(s.URL, key)
	ctx := context.Background()
	job, err := c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "a lighthouse",
		Options: map[string]any{"numOutputs": 2, "aspectRatio": "16:9"}})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != "succeeded" || len(job.Outputs()) != 2 || job.RemainingCredits == nil || *job.RemainingCredits != s.balance(t, acct) {
		t.Fatalf("job %+v", job)
	}
	// The synchronous answer's job is the whole task, as a read gives it.
	if job.Type != "image" || job.ModelID != "flux" || job.Cost != 100-s.balance(t, acct) || job.Cost == 0 || job.CreatedAt.IsZero() || job.CompletedAt.IsZero() {
		t.Errorf("the job of a synchronous Generate: type %q, model %q, cost %d (charged %d), created %v, completed %v",
			job.Type, job.ModelID, job.Cost, 100-s.balance(t, acct), job.CreatedAt, job.CompletedAt)
	}
	dir := t.TempDir()
	for _, u := range job.Outputs() {
		p, err := c.DownloadTo(ctx, u, dir)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || format != "png" || cfg.Width*9 != cfg.Height*16 {
			t.Errorf("%s: %dx%d %s %v", p, cfg.Width, cfg.Height, format, err)
		}
	}
}

// TestAsyncPolls: a 202 is followed by polls until the task finishes;
// progress sees the task processing, then succeeded.
func TestAsyncPolls(t *testing.T) {
	s := newServer(t, serverOpts{sandboxDelay: 1500 * time.Millisecond})
	_, key := s.mustAccount(t, 100)
	c := client.New(s.URL, key)
	ctx := context.Background()
	job, err := c.Submit(ctx, client.Request{ModelID: "flux", Prompt: "a lighthouse"}, client.CallOptions{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != "processing" || job.RetryAfter <= 0 || job.StatusURL == "" {
		t.Fatalf("async submit: %+v", job)
	}
	var seen []string
	done, err := c.Wait(ctx, job.ID, func(j *client.Job) { seen = append(seen, j.Status) })
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != "succeeded" || len(done.Images) != 1 || done.ModelID != "flux" || seen[len(seen)-1] != "succeeded" {
		t.Errorf("waited job %+v, progress %v", done, seen)
	}
	// Generate with a short Prefer wait polls on its own.
	seen = nil
	job, err = c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "a harbour"},
		client.CallOptions{Wait: time.Second, Progress: func(j *client.Job) { seen = append(seen, j.Status) }})
	if err != nil || job.Status != "succeeded" || len(seen) == 0 {
		t.Errorf("generate with a short wait: %+v %v %v", job, err, seen)
	}
}

// dropFirst is a transport that loses the first answer after the server
// handled the request, as a broken connection would. It records the
// Idempotency-Key of each POST (the generate calls; the task reads that
// follow a synchronous answer carry none).
type dropFirst struct {
	n    atomic.Int32
	keys []string
}

func (d *dropFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		d.keys = append(d.keys, r.Header.Get("Idempotency-Key"))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if d.n.Add(1) == 1 && err == nil {
		resp.Body.Close()
		return nil, errors.New("connection reset (injected)")
	}
	return resp, err
}

// TestRetryChargesOnce: a generate whose answer was lost is retried with
// the same Idempotency-Key and charged once.
func TestRetryChargesOnce(t *testing.T) {
	s := newServer(t, serverOpts{})
	acct, key := s.mustAccount(t, 100)
	tr := &dropFirst{}
	c := client.New(s.URL, key, client.WithHTTPClient(&http.Client{Transport: tr}))
	job, err := c.Generate(context.Background(), client.Request{Type: "image", ModelID: "flux", Prompt: "a lighthouse"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.keys) != 2 || tr.keys[0] == "" || tr.keys[0] != tr.keys[1] {
		t.Errorf("Idempotency-Keys sent: %q; want one key twice", tr.keys)
	}
	if spent := 100 - s.balance(t, acct); spent != 4 || job.Status != "succeeded" {
		t.Errorf("spent %d credits (want flux's 4 once), job %+v", spent, job)
	}
	// A second call is a new generation: a fresh key.
	if _, err := c.Generate(context.Background(), client.Request{Type: "image", ModelID: "flux", Prompt: "a lighthouse"}); err != nil {
		t.Fatal(err)
	}
	if len(tr.keys) != 3 || tr.keys[2] == tr.keys[0] {
		t.Errorf("a new call reused the key: %q", tr.keys)
	}
}

// TestTypedErrors: refusals, review and unsupported cancel are typed values.
func TestTypedErrors(t *testing.T) {
	s := newServer(t, serverOpts{reviewTerms: []string{"hold me"}})
	_, key := s.mustAccount(t, 5)
	c := client.New(s.URL, key)
	ctx := context.Background()
	var e *client.Error

	_, err := c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "a lighthouse", Options: map[string]any{"numOutputs": 4}})
	if !errors.As(err, &e) || e.Code != client.CodeInsufficientCredits || e.Status != 402 || e.Extra["requiredCredits"] != float64(16) || e.RequestID == "" {
		t.Errorf("insufficient credits: %v %+v", err, e)
	}
	_, err = c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "a lighthouse", Options: map[string]any{"outputFormat": "bmp"}})
	if !errors.As(err, &e) || e.Status != 400 || len(e.Fields) == 0 || e.Fields[0].Field != "outputFormat" {
		t.Errorf("bad option: %v %+v", err, e)
	}
	_, err = c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "please hold me"})
	if !errors.As(err, &e) || e.Code != client.CodeNeedsReview || e.Status != 409 || e.JobID == "" {
		t.Fatalf("review: %v %+v", err, e)
	}
	job, err := c.Job(ctx, e.JobID)
	if err != nil || job.Status != "needs_review" {
		t.Errorf("the reviewed job reads %+v, %v", job, err)
	}
	canceled, err := c.Cancel(ctx, e.JobID)
	if err != nil || canceled.Status != "canceled" || !canceled.Done() {
		t.Errorf("cancel of a task in review: %+v, %v", canceled, err)
	}
	if _, err := c.Wait(ctx, e.JobID, nil); !errors.As(err, &e) || e.Code != "GENERATION_CANCELED" {
		t.Errorf("waiting for a canceled task: %v", err)
	}
	if again, err := c.Cancel(ctx, canceled.ID); err != nil || again.Status != "canceled" {
		t.Errorf("canceling again: %+v, %v", again, err)
	}
	if _, err := c.Job(ctx, "00000000-0000-4000-8000-000000000000"); !errors.As(err, &e) || e.Code != client.CodeNotFound {
		t.Errorf("unknown job: %v", err)
	}
	if _, err := client.New(s.URL, "gg_live_wrong").Models(ctx); !errors.As(err, &e) || e.Code != client.CodeUnauthorized {
		t.Errorf("bad key: %v", err)
	}
}

// TestUploadChain: an uploaded file is the input of a model, and that
// model's output the input of the next.
func TestUploadChain(t *testing.T) {
	s := newServer(t, serverOpts{})
	_, key := s.mustAccount(t, 100)
	c := client.New(s.URL, key)
	ctx := context.Background()
	p := t.TempDir() + "/in.png"
	if err := os.WriteFile(p, testPNG(t, 40, 30), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := c.UploadFile(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if f.ContentType != "image/png" || f.ExpiresAt.IsZero() {
		t.Errorf("upload %+v", f)
	}
	job, err := c.Generate(ctx, client.Request{ModelID: "image-upscaler", Inputs: map[string]string{"imageUrl": f.URL}, Options: map[string]any{"scale": 2}})
	if err != nil {
		t.Fatal(err)
	}
	job, err = c.Generate(ctx, client.Request{ModelID: "remove-bg", Inputs: map[string]string{"imageUrl": job.Images[0]}})
	if err != nil || len(job.Images) != 1 {
		t.Fatalf("chained: %+v %v", job, err)
	}
	if _, err := c.Upload(ctx, []byte("not a picture"), "text/plain"); err == nil {
		t.Error("a text upload was accepted")
	}
}
