package fal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/upstream"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

var upstreamErr = enginetest.UpstreamErr

func newEngine(t *testing.T) (*Engine, *faltest.Server) {
	t.Helper()
	s := faltest.New(t)
	return New(Config{APIKey: s.Key(), BaseURL: s.URL()}), s
}

func imageJob(upstreamID, ar string, n int, format string) gengate.Job {
	return gengate.Job{TaskID: "3f2b8c1e-0000-4000-8000-000000000001", Route: gengate.Route{Engine: "fal", Upstream: upstreamID},
		Type: "image", Prompt: "a red fox", AspectRatio: ar, NumOutputs: n, OutputFormat: format, Options: map[string]any{}}
}

func videoJob(upstreamID string, opts map[string]any) gengate.Job {
	return gengate.Job{TaskID: "3f2b8c1e-0000-4000-8000-000000000002", Route: gengate.Route{Engine: "fal", Upstream: upstreamID},
		Type: "video", Prompt: "a red fox running", AspectRatio: "16:9", NumOutputs: 1, OutputFormat: "mp4", Options: opts}
}

// run submits job and checks it until it is done, at most 10 times.
func run(t *testing.T, e gengate.Engine, job gengate.Job) (gengate.Progress, error) {
	t.Helper()
	ctx := context.Background()
	p, err := e.Submit(ctx, job)
	for i := 0; err == nil && len(p.Outputs) == 0; i++ {
		if i == 10 {
			t.Fatal("no outputs after 10 checks")
		}
		p, err = e.Check(ctx, job, p.UpstreamID)
	}
	return p, err
}

func pngInput(t *testing.T) gengate.Input {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return gengate.Input{Data: buf.Bytes(), ContentType: "image/jpeg"}
}

func TestConformance(t *testing.T) {
	e, _ := newEngine(t)
	routes := map[string]string{"flux": "fal-ai/flux/dev", "kling-2-1": "fal-ai/kling-video/v2.1/master/text-to-video"}
	var cases []enginetest.Case
	for _, c := range enginetest.DefaultCases() {
		c.Job.Route = gengate.Route{Engine: "fal", Upstream: routes[c.Job.ModelID]}
		if c.Job.Type == "video" {
			c.Job.Options = map[string]any{"duration": int64(5)} // Kling makes 5 or 10 s
		}
		cases = append(cases, c)
	}
	cases = append(cases,
		enginetest.Case{Name: "nano-banana 9:16 jpeg", Job: imageJob("fal-ai/nano-banana", "9:16", 1, "jpeg")},
		enginetest.Case{Name: "veo 3.1", Job: videoJob("fal-ai/veo3.1", map[string]any{"duration": int64(8), "resolution": "720p", "generateAudio": true})},
	)
	enginetest.Run(t, e, cases, func(time.Duration) {})
}

func TestImageSuccess(t *testing.T) {
	e, s := newEngine(t)
	job := imageJob("fal-ai/flux/dev", "16:9", 2, "jpeg")
	job.Options["seed"] = int64(7)
	p, err := run(t, e, job)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"prompt": "a red fox", "image_size": "landscape_16_9", "num_images": 2.0, "output_format": "jpeg", "seed": 7.0}
	if got := s.LastRequest(); !reflect.DeepEqual(got, want) {
		t.Errorf("request body %v, want %v", got, want)
	}
	if len(p.Outputs) != 2 {
		t.Fatalf("%d outputs, want 2", len(p.Outputs))
	}
	enginetest.ReadOutputs(t, p.Outputs)
	for _, o := range p.Outputs {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
		if err != nil || format != "jpeg" || o.ContentType != "image/jpeg" || o.Ext != "jpeg" {
			t.Fatalf("output %s/%s: %v", o.ContentType, format, err)
		}
		if cfg.Width != 64 || cfg.Height != 36 {
			t.Errorf("output %dx%d, want 64x36", cfg.Width, cfg.Height)
		}
	}
}

func TestImageSizes(t *testing.T) {
	cases := []struct {
		ar   string
		want any
	}{
		{"1:1", "square_hd"},
		{"3:4", "portrait_4_3"},
		{"9:16", "portrait_16_9"},
		{"21:9", map[string]any{"width": 1552, "height": 672}},
		{"2:3", map[string]any{"width": 832, "height": 1248}},
	}
	for _, c := range cases {
		req, err := plan(imageJob("fal-ai/flux/schnell", c.ar, 1, "png"))
		if err != nil {
			t.Fatal(err)
		}
		if got := req.body["image_size"]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: image_size %v, want %v", c.ar, got, c.want)
		}
		if m, ok := c.want.(map[string]any); ok {
			w, h := m["width"].(int), m["height"].(int)
			if w%16 != 0 || h%16 != 0 || w*h > 1024*1024 || w*h < 900*1000 {
				t.Errorf("%s: %dx%d is not near 1 MP in multiples of 16", c.ar, w, h)
			}
		}
	}
	req, err := plan(gengate.Job{Route: gengate.Route{Upstream: "fal-ai/bytedance/seedream/v4.5/text-to-image"}, Type: "image",
		Prompt: "x", AspectRatio: "16:9", NumOutputs: 1, OutputFormat: "png", Options: map[string]any{"resolution": "4K"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := req.body["image_size"].(map[string]any); m["width"].(int)*m["height"].(int) > 16777216 || m["width"].(int) < 4096 {
		t.Errorf("seedream 4K 16:9 size %v", m)
	}
}

func TestVideoSuccess(t *testing.T) {
	e, s := newEngine(t)
	s.SetPolls(3)
	job := videoJob("fal-ai/veo3.1", map[string]any{"duration": int64(6), "resolution": "1080p", "generateAudio": false, "seed": int64(3)})
	job.AspectRatio = "9:16"
	ctx := context.Background()
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if p.RetryAfter != 10*time.Second || !strings.HasPrefix(p.UpstreamID, "fal-ai/veo3.1|") {
		t.Errorf("submit progress %+v", p)
	}
	for i := 0; i < 2; i++ {
		p, err = e.Check(ctx, job, p.UpstreamID)
		if err != nil || len(p.Outputs) != 0 || p.RetryAfter != 10*time.Second {
			t.Fatalf("check %d: %+v, %v; want still running", i, p, err)
		}
	}
	p, err = e.Check(ctx, job, p.UpstreamID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Outputs) != 1 || p.Outputs[0].ContentType != "video/mp4" || p.Outputs[0].Ext != "mp4" {
		t.Fatalf("outputs %+v", p.Outputs)
	}
	want := map[string]any{"prompt": "a red fox running", "aspect_ratio": "9:16", "duration": "6s", "resolution": "1080p", "generate_audio": false, "seed": 3.0}
	if got := s.LastRequest(); !reflect.DeepEqual(got, want) {
		t.Errorf("request body %v, want %v", got, want)
	}
}

func TestInputVariants(t *testing.T) {
	in := gengate.Input{Data: pngInput(t).Data, ContentType: "image/jpeg"}
	uri := upstream.DataURI(in)
	cases := []struct {
		name, route string
		inputs      map[string]gengate.Input
		typ         string
		endpoint    string
		want        map[string]any
	}{
		{"nano-banana edit", "fal-ai/nano-banana", map[string]gengate.Input{"imageUrl": in}, "image", "fal-ai/nano-banana/edit", map[string]any{"image_urls": []any{uri}}},
		{"kontext", "fal-ai/flux-pro/kontext/text-to-image", map[string]gengate.Input{"imageUrl": in}, "image", "fal-ai/flux-pro/kontext", map[string]any{"image_url": uri}},
		{"object removal", "fal-ai/object-removal/mask", map[string]gengate.Input{"image": in, "mask": in}, "image", "fal-ai/object-removal/mask", map[string]any{"image_url": uri, "mask_url": uri}},
		{"try-on", "fal-ai/image-apps-v2/virtual-try-on", map[string]gengate.Input{"personImage": in, "clothImage": in}, "image", "fal-ai/image-apps-v2/virtual-try-on", map[string]any{"person_image_url": uri, "clothing_image_url": uri}},
		{"face swap", "half-moon-ai/ai-face-swap/faceswapimage", map[string]gengate.Input{"swapImage": in, "inputImage": in}, "image", "half-moon-ai/ai-face-swap/faceswapimage", map[string]any{"source_face_url": uri, "target_image_url": uri}},
		{"kling image-to-video", "fal-ai/kling-video/v2.1/master/text-to-video", map[string]gengate.Input{"imageUrl": in}, "video", "fal-ai/kling-video/v2.1/master/image-to-video", map[string]any{"image_url": uri}},
		{"veo first-last frame", "fal-ai/veo3.1/fast", map[string]gengate.Input{"imageUrl": in, "inputs.lastFrameUrl": in}, "video", "fal-ai/veo3.1/fast/first-last-frame-to-video", map[string]any{"first_frame_url": uri, "last_frame_url": uri}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, s := newEngine(t)
			job := imageJob(c.route, "1:1", 1, "png")
			if c.typ == "video" {
				job = videoJob(c.route, map[string]any{"duration": int64(8)})
				if strings.Contains(c.route, "kling") {
					job.Options["duration"] = int64(5)
				}
			}
			job.Inputs = c.inputs
			if models[c.endpoint].noPrompt {
				job.Prompt = ""
			}
			if _, err := run(t, e, job); err != nil {
				t.Fatal(err)
			}
			if got := s.LastEndpoint(); got != c.endpoint {
				t.Errorf("endpoint %s, want %s", got, c.endpoint)
			}
			body := s.LastRequest()
			for k, v := range c.want {
				if !reflect.DeepEqual(body[k], v) {
					t.Errorf("%s = %.60v, want %.60v", k, body[k], v)
				}
			}
			if _, ok := body["aspect_ratio"]; ok {
				t.Error("aspect_ratio sent with an input image")
			}
		})
	}
}

func TestSubmitRefused(t *testing.T) {
	t.Run("unreadable input", func(t *testing.T) {
		e, s := newEngine(t)
		job := imageJob("fal-ai/nano-banana", "1:1", 1, "png")
		job.Inputs = map[string]gengate.Input{"imageUrl": {Data: []byte("not an image"), ContentType: "image/png"}}
		_, err := e.Submit(context.Background(), job)
		ue := upstreamErr(t, err)
		if ue.Kind != gengate.Refused || ue.Code != gengate.CodeRejectedInput || ue.Status != 422 {
			t.Errorf("%v, want refused %s", ue, gengate.CodeRejectedInput)
		}
		if !strings.Contains(ue.Message, "image_urls") {
			t.Errorf("message %q does not name the field", ue.Message)
		}
		if s.Submissions() != 0 {
			t.Errorf("%d submissions", s.Submissions())
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := New(Config{APIKey: "k", BaseURL: url}).Submit(context.Background(), imageJob("fal-ai/flux/dev", "1:1", 1, "png"))
		if ue := upstreamErr(t, err); ue.Kind != gengate.Refused {
			t.Errorf("%v, want refused", ue)
		}
	})
}

func TestCancel(t *testing.T) {
	e, s := newEngine(t)
	s.Hold()
	job := imageJob("fal-ai/flux/dev", "1:1", 1, "png")
	p, err := e.Submit(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(context.Background(), job, p.UpstreamID); err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(context.Background(), job, p.UpstreamID); err != nil {
		t.Errorf("second cancel (already completed): %v", err)
	}
	if s.Cancels() != 2 {
		t.Errorf("%d cancels", s.Cancels())
	}
}

func TestMalformedID(t *testing.T) {
	e, _ := newEngine(t)
	for _, id := range []string{"", "nobar", "fal-ai|", "flux|abc"} {
		_, err := e.Check(context.Background(), imageJob("fal-ai/flux/dev", "1:1", 1, "png"), id)
		if gengate.ErrorCode(err) != gengate.EFailed {
			t.Errorf("%q: %v, want %s", id, err, gengate.EFailed)
		}
	}
}

// TestSecrets checks that no error text shows the key, even when the
// upstream echoes it.
func TestSecrets(t *testing.T) {
	const key = "fal-secret-key-9f8e7d6c5b4a"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"detail":"bad key ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Key ") + `"}`))
	}))
	defer echo.Close()
	e := New(Config{APIKey: key, BaseURL: echo.URL})
	job := imageJob("fal-ai/flux/dev", "1:1", 1, "png")
	var errs []error
	_, err := e.Submit(context.Background(), job)
	errs = append(errs, err)
	_, err = e.Check(context.Background(), job, "fal-ai/flux/dev|abc")
	errs = append(errs, err)
	errs = append(errs, e.Cancel(context.Background(), job, "fal-ai/flux/dev|abc"))
	for _, err := range errs {
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "9f8e7d6c") {
			t.Errorf("error shows the key: %v", err)
		}
	}
}

func TestUpstream(t *testing.T) {
	wan := videoJob("fal-ai/wan-25-preview/text-to-video", map[string]any{"duration": int64(5), "resolution": "720p"})
	enginetest.Upstream(t, enginetest.UpstreamCase{
		NewFake:           func(t *testing.T) enginetest.Fake { return faltest.New(t) },
		NewEngine:         func(key, url string) gengate.Engine { return New(Config{APIKey: key, BaseURL: url}) },
		Job:               imageJob("fal-ai/flux/dev", "1:1", 1, "png"),
		WrongKey:          "fal-wrong-0123456789abcdef",
		FreshJob:          &wan,
		FreshRetryAfter:   10 * time.Second,
		DeleteBeforeCheck: true,
		HoldCancel:        true,
	})
}

// TestStreamedInputs: a large input that comes as a stream from storage
// is never read when it has a URL (the URL is sent), and is read whole and
// sent as a data: URI when it has none; a storage failure then is Busy,
// nothing sent.
func TestStreamedInputs(t *testing.T) {
	in := gengate.Input{Data: pngInput(t).Data, ContentType: "image/jpeg"}
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(in.Data) }))
	t.Cleanup(files.Close)
	e, s := newEngine(t)
	job := imageJob("fal-ai/flux-pro/kontext/text-to-image", "1:1", 1, "png")
	withURL := upstreamtest.Unreadable(in) // opening it would fail the test
	withURL.URL = files.URL + "/in/a.jpg"
	job.Inputs = map[string]gengate.Input{"imageUrl": withURL}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if got := s.LastRequest()["image_url"]; got != withURL.URL {
		t.Errorf("image_url = %.60v, want the URL", got)
	}
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Streamed(in)}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if got := s.LastRequest()["image_url"]; got != upstream.DataURI(in) {
		t.Errorf("image_url = %.60v, want the data: URI of the input", got)
	}
	before := s.Submissions()
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Unreadable(in)}
	_, err := e.Submit(context.Background(), job)
	var ue *gengate.UpstreamError
	if !errors.As(err, &ue) || ue.Kind != gengate.Busy || s.Submissions() != before {
		t.Errorf("unreadable input without URL: %v, want Busy and nothing sent", err)
	}
}

// TestIngressErrorsOnly: of the 5xx answers to a submit, only fal's ingress
// errors (502, 503, 504 without x-fal-request-id: nothing reached fal's
// servers) are Busy, to be sent again; the same statuses from fal's own
// servers (with x-fal-request-id) may have queued the request: ambiguous,
// never sent again (fal_client _is_ingress_error; fal-js retry.ts).
func TestIngressErrorsOnly(t *testing.T) {
	job := imageJob("fal-ai/flux/dev", "1:1", 1, "png")
	for _, status := range []int{502, 503, 504} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e, srv := newEngine(t)
			srv.FailIngress(status, 1)
			_, err := e.Submit(context.Background(), job)
			if ue := upstreamErr(t, err); ue.Kind != gengate.Busy || ue.Status != status {
				t.Fatalf("ingress %d: %+v, want busy", status, ue)
			}
			srv.FailSubmits(status, 1)
			_, err = e.Submit(context.Background(), job)
			var ue *gengate.UpstreamError
			if err == nil || errors.As(err, &ue) {
				t.Fatalf("server %d: %v, want ambiguous", status, err)
			}
			if srv.Submissions() != 0 {
				t.Fatalf("%d submissions", srv.Submissions())
			}
		})
	}
}

// TestBackgroundWithoutPrompt: Bria's background replace takes either a
// prompt or a reference image ("Either ref_image_url or bg_prompt has to
// be provided", fal-js endpoints.ts BGReplaceInput); the model's prompt is
// optional (a neutral studio backdrop when absent), so a job with only its
// image sends that backdrop as the prompt, and a job's own prompt as it is.
func TestBackgroundWithoutPrompt(t *testing.T) {
	for _, prompt := range []string{"", "a beach at noon"} {
		e, s := newEngine(t)
		job := imageJob("fal-ai/bria/background/replace", "", 1, "png")
		job.ModelID, job.Prompt, job.AspectRatio = "ai-background-generator", prompt, ""
		job.Inputs = map[string]gengate.Input{"imageUrl": pngInput(t)}
		if err := e.Validate(job); err != nil {
			t.Fatal(err)
		}
		if _, err := run(t, e, job); err != nil {
			t.Fatalf("prompt %q: %v", prompt, err)
		}
		want := prompt
		if want == "" {
			want = studioBackdrop
		}
		if got := s.LastRequest()["prompt"]; got != want {
			t.Errorf("prompt %q sent as %v, want %q", prompt, got, want)
		}
	}
}

// TestCancelWorkAnswers follows fal's cancel semantics
// (https://fal.ai/docs/inference-api/queue/cancel): OK means fal removed
// the request from the queue, so it was never processed and nothing was
// charged; CANCELLATION_REQUESTED means a runner had it and got a signal
// (it may have been billed); a completed request is too late.
func TestCancelWorkAnswers(t *testing.T) {
	ctx := context.Background()
	job := imageJob("fal-ai/flux/dev", "1:1", 1, "png")
	for _, tc := range []struct {
		name string
		prep func(e *Engine, s *faltest.Server, id string)
		want gengate.Cancellation
	}{
		{"queued: OK", func(_ *Engine, s *faltest.Server, _ string) { s.Hold() }, gengate.CancelBeforeCharge},
		{"in progress: CANCELLATION_REQUESTED", func(e *Engine, s *faltest.Server, id string) {
			s.SetPolls(100)
			if _, err := e.Check(ctx, job, id); err != nil {
				t.Fatal(err)
			}
		}, gengate.CancelRequested},
		{"completed", func(e *Engine, s *faltest.Server, id string) {
			if _, err := e.Check(ctx, job, id); err != nil {
				t.Fatal(err)
			}
		}, gengate.CancelTooLate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := newEngine(t)
			p, err := e.Submit(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			tc.prep(e, s, p.UpstreamID)
			got, err := e.CancelWork(ctx, job, p.UpstreamID)
			if err != nil || got != tc.want {
				t.Fatalf("CancelWork: %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
