package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/openai/openaitest"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

var (
	run         = enginetest.RunJob
	upstreamErr = enginetest.UpstreamErr
)

func newFake(t *testing.T) (*Engine, *openaitest.Server) {
	t.Helper()
	srv := openaitest.New(t)
	return New(Config{APIKey: srv.Key(), BaseURL: srv.URL()}), srv
}

func imageJob(upstreamID, aspect string, n int, format string) gengate.Job {
	return gengate.Job{TaskID: "3f1c2a9e-0000-4000-8000-000000000001", ModelID: "gpt-image-2", Type: "image",
		Route: gengate.Route{Engine: "openai", Upstream: upstreamID}, Prompt: "a red fox",
		AspectRatio: aspect, NumOutputs: n, OutputFormat: format,
		Options: map[string]any{"aspectRatio": aspect, "numOutputs": int64(n), "outputFormat": format, "quality": "medium"}}
}

func videoJob(aspect string, seconds int64) gengate.Job {
	return gengate.Job{TaskID: "3f1c2a9e-0000-4000-8000-000000000002", ModelID: "openai-sora-2", Type: "video",
		Route: gengate.Route{Engine: "openai", Upstream: "sora-2"}, Prompt: "a red fox running",
		AspectRatio: aspect, NumOutputs: 1, OutputFormat: "mp4",
		Options: map[string]any{"aspectRatio": aspect, "duration": seconds, "outputFormat": "mp4"}}
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestConformance(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		e, _ := newFake(t)
		enginetest.Run(t, e, []enginetest.Case{
			{Name: "gpt-image-2 png 1:1", Job: imageJob("gpt-image-2", "1:1", 1, "png")},
			{Name: "flare jpeg 3:2 x2", Job: imageJob("gpt-image-2.5-flare", "3:2", 2, "jpeg")},
			{Name: "sunburst webp 2:3", Job: imageJob("gpt-image-2.5-sunburst", "2:3", 1, "webp")},
			{Name: "sora-2 16:9", Job: videoJob("16:9", 4)},
			{Name: "sora-2 9:16 12s", Job: videoJob("9:16", 12)},
		}, func(time.Duration) {})
	})
	t.Run("compatible", func(t *testing.T) {
		srv := openaitest.New(t)
		srv.Compatible()
		e := NewCompatible("localai", Config{BaseURL: srv.URL()})
		var cases []enginetest.Case
		for _, c := range enginetest.DefaultCases() {
			if c.Job.Type == "image" {
				cases = append(cases, c)
			}
		}
		enginetest.Run(t, e, cases, func(time.Duration) {})
	})
}

func TestImageSuccess(t *testing.T) {
	e, srv := newFake(t)
	job := imageJob("gpt-image-2", "3:2", 2, "jpeg")
	job.Options["quality"] = "high"
	p, err := e.Submit(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if p.UpstreamID != "" || len(p.Outputs) != 2 {
		t.Fatalf("images come with the submit: id %q, %d outputs", p.UpstreamID, len(p.Outputs))
	}
	enginetest.ReadOutputs(t, p.Outputs)
	for _, o := range p.Outputs {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
		if err != nil || format != "jpeg" || o.ContentType != "image/jpeg" || cfg.Width != 1536 || cfg.Height != 1024 {
			t.Fatalf("output %s %dx%d (%s), err %v", format, cfg.Width, cfg.Height, o.ContentType, err)
		}
	}
	want := map[string]string{"model": "gpt-image-2", "prompt": "a red fox", "size": "1536x1024",
		"quality": "high", "n": "2", "output_format": "jpeg"}
	got := srv.LastRequest()
	for k, v := range want {
		if str(got[k]) != v {
			t.Errorf("request %s = %v, want %s", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("request has extra fields: %v", got)
	}
	if h := srv.LastHeader().Get("Idempotency-Key"); h != "gengate-"+job.TaskID {
		t.Errorf("Idempotency-Key %q", h)
	}
	if srv.Submissions() != 1 {
		t.Errorf("%d submissions", srv.Submissions())
	}
}

func TestVideoSuccess(t *testing.T) {
	e, srv := newFake(t)
	srv.SetPolls(3)
	job := videoJob("9:16", 8)
	ctx := context.Background()
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.UpstreamID, "video:") || p.RetryAfter != 10*time.Second {
		t.Fatalf("progress %+v", p)
	}
	got := srv.LastRequest()
	want := map[string]any{"model": "sora-2", "prompt": "a red fox running", "size": "720x1280", "seconds": "8"}
	for k, v := range want {
		if got[k] != v { // seconds must be a JSON string
			t.Errorf("request %s = %#v, want %#v", k, got[k], v)
		}
	}
	for i := 0; i < 2; i++ {
		p, err = e.Check(ctx, job, p.UpstreamID)
		if err != nil || len(p.Outputs) != 0 || p.RetryAfter <= 0 {
			t.Fatalf("check %d: %+v %v", i, p, err)
		}
		// The video object's progress is the task's percentage.
		if r := p.Report; r == nil || r.Status != "in_progress" || r.Percent == nil || *r.Percent != float64(100*(i+1)/3) {
			t.Fatalf("check %d report: %+v", i, r)
		}
	}
	p, err = e.Check(ctx, job, p.UpstreamID)
	if err != nil || len(p.Outputs) != 1 {
		t.Fatalf("final check: %+v %v", p, err)
	}
	enginetest.ReadOutputs(t, p.Outputs)
	if o := p.Outputs[0]; o.ContentType != "video/mp4" || o.Ext != "mp4" || string(o.Data[4:8]) != "ftyp" {
		t.Fatalf("output %s %s", o.ContentType, o.Ext)
	}
}

func TestSubmitRefused(t *testing.T) {
	t.Run("rejected input", func(t *testing.T) {
		e, srv := newFake(t)
		job := imageJob("gpt-image-2", "1:1", 1, "png")
		job.Route.Params = map[string]any{"size": "999x999"} // an operator's mistake
		_, err := e.Submit(context.Background(), job)
		ue := upstreamErr(t, err)
		if ue.Kind != gengate.Refused || ue.Status != 400 || ue.Code != gengate.CodeRejectedInput || !strings.Contains(ue.Message, "999x999") {
			t.Fatalf("got %+v", ue)
		}
		if srv.Submissions() != 0 {
			t.Fatal("a rejected submit created a job")
		}
	})
	t.Run("quota", func(t *testing.T) {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
		}))
		defer up.Close()
		e := New(Config{APIKey: "sk-x-123456", BaseURL: up.URL})
		_, err := e.Submit(context.Background(), imageJob("gpt-image-2", "1:1", 1, "png"))
		if ue := upstreamErr(t, err); ue.Kind != gengate.Refused || ue.Code != gengate.CodeUpstream || ue.Status != 429 {
			t.Fatalf("got %+v", ue)
		}
	})
}

func TestValidate(t *testing.T) {
	img := func(upstream, aspect string, n int, format string, edit func(*gengate.Job)) gengate.Job {
		j := imageJob(upstream, aspect, n, format)
		if edit != nil {
			edit(&j)
		}
		return j
	}
	vid := func(aspect string, seconds int64, edit func(*gengate.Job)) gengate.Job {
		j := videoJob(aspect, seconds)
		if edit != nil {
			edit(&j)
		}
		return j
	}
	withInput := func(names ...string) func(*gengate.Job) {
		return func(j *gengate.Job) {
			j.Inputs = map[string]gengate.Input{}
			for _, n := range names {
				j.Inputs[n] = gengate.Input{} // names only, as before fetching
			}
		}
	}
	cases := []struct {
		name       string
		compatible bool
		job        gengate.Job
		field      string // "" accepted
	}{
		{"gpt 1:1", false, img("gpt-image-2", "1:1", 1, "png", nil), ""},
		{"gpt 3:2 x4 webp", false, img("gpt-image-2.5-flare", "3:2", 4, "webp", nil), ""},
		{"gpt 16:9", false, img("gpt-image-1", "16:9", 1, "png", nil), "aspectRatio"},
		{"gpt n 11", false, img("gpt-image-2", "1:1", 11, "png", nil), "numOutputs"},
		{"gpt gif", false, img("gpt-image-2", "1:1", 1, "gif", nil), "outputFormat"},
		{"gpt quality ultra", false, img("gpt-image-2", "1:1", 1, "png", func(j *gengate.Job) { j.Options["quality"] = "ultra" }), "quality"},
		{"gpt seed", false, img("gpt-image-2", "1:1", 1, "png", func(j *gengate.Job) { j.Options["seed"] = int64(7) }), "seed"},
		{"gpt edit with mask", false, img("gpt-image-2", "1:1", 1, "png", withInput("imageUrl", "mask")), ""},
		{"gpt mask alone", false, img("gpt-image-2", "1:1", 1, "png", withInput("mask")), "mask"},
		{"gpt video input", false, img("gpt-image-2", "1:1", 1, "png", withInput("inputs.videoUrl")), "inputs.videoUrl"},
		{"sora 16:9 4s", false, vid("16:9", 4, nil), ""},
		{"sora 9:16 12s image", false, vid("9:16", 12, withInput("imageUrl")), ""},
		{"sora 1:1", false, vid("1:1", 4, nil), "aspectRatio"},
		{"sora 5s", false, vid("16:9", 5, nil), "duration"},
		{"sora duration float", false, vid("16:9", 4, func(j *gengate.Job) { j.Options["duration"] = float64(8) }), ""},
		{"sora last frame", false, vid("16:9", 4, withInput("imageUrl", "inputs.lastFrameUrl")), "inputs.lastFrameUrl"},
		{"sora audio", false, vid("16:9", 4, func(j *gengate.Job) { j.Options["generateAudio"] = true }), "generateAudio"},
		{"unknown image id 21:9", false, img("my-image-model", "21:9", 2, "png", func(j *gengate.Job) { j.Options["seed"] = int64(1) }), ""},
		{"unknown video id 1:1", false, vid("1:1", 4, func(j *gengate.Job) { j.Route.Upstream = "sora-9" }), "aspectRatio"},
		{"compatible 16:9", true, img("stablediffusion", "16:9", 1, "png", nil), ""},
		{"compatible video", true, vid("16:9", 4, nil), "type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := New(Config{APIKey: "sk-x"})
			if tc.compatible {
				e = NewCompatible("localai", Config{BaseURL: "http://127.0.0.1:1"})
			}
			err := e.Validate(tc.job)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ge *gengate.Error
			if !errors.As(err, &ge) || ge.Code != gengate.EUnsupportedOption || len(ge.Fields) != 1 ||
				ge.Fields[0].Field != tc.field || ge.Fields[0].Code != gengate.FieldUnsupported {
				t.Fatalf("want UNSUPPORTED_MODEL_OPTION on %s, got %#v", tc.field, err)
			}
			// Submit maps the same way: it refuses without calling anyone.
			if _, serr := e.Submit(context.Background(), tc.job); serr == nil || serr.Error() != err.Error() {
				t.Fatalf("Submit says %v, Validate %v", serr, err)
			}
		})
	}
}

func TestInputImage(t *testing.T) {
	in := gengate.Input{Data: pngBytes(t, 64, 64), ContentType: "image/png"}
	mask := gengate.Input{Data: pngBytes(t, 64, 64), ContentType: "image/png"}
	t.Run("openai edit", func(t *testing.T) {
		e, srv := newFake(t)
		job := imageJob("gpt-image-2", "2:3", 1, "png")
		job.Inputs = map[string]gengate.Input{"imageUrl": in, "mask": mask}
		if _, err := run(t, e, job); err != nil {
			t.Fatal(err)
		}
		files := srv.LastFiles()
		if !bytes.Equal(files["image[]"], in.Data) || !bytes.Equal(files["mask"], mask.Data) {
			t.Fatalf("file parts %v", srv.LastRequest())
		}
		got := srv.LastRequest()
		if got["size"] != "1024x1536" || got["model"] != "gpt-image-2" || got["prompt"] != "a red fox" || got["n"] != "1" {
			t.Fatalf("form fields %v", got)
		}
		if h := srv.LastHeader().Get("Idempotency-Key"); h != "gengate-"+job.TaskID {
			t.Errorf("Idempotency-Key %q", h)
		}
	})
	t.Run("compatible edit", func(t *testing.T) {
		srv := openaitest.New(t)
		srv.Compatible()
		e := NewCompatible("localai", Config{BaseURL: srv.URL()})
		job := imageJob("stablediffusion", "1:1", 1, "png")
		job.Inputs = map[string]gengate.Input{"imageUrl": in}
		if _, err := run(t, e, job); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(srv.LastFiles()["image"], in.Data) {
			t.Fatalf("file parts %v", srv.LastRequest())
		}
	})
	t.Run("sora input_reference", func(t *testing.T) {
		e, srv := newFake(t)
		job := videoJob("16:9", 4)
		job.Inputs = map[string]gengate.Input{"imageUrl": in}
		if _, err := run(t, e, job); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(srv.LastFiles()["input_reference"], in.Data) || srv.LastRequest()["seconds"] != "4" ||
			srv.LastRequest()["size"] != "1280x720" {
			t.Fatalf("request %v", srv.LastRequest())
		}
	})
}

func TestHold(t *testing.T) {
	e, srv := newFake(t)
	srv.Hold()
	job := videoJob("16:9", 4)
	p, err := e.Submit(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if p, err = e.Check(context.Background(), job, p.UpstreamID); err != nil || len(p.Outputs) != 0 {
			t.Fatalf("held: %+v %v", p, err)
		}
	}
	// A held image request is in flight until Release.
	done := make(chan error, 1)
	go func() {
		_, err := e.Submit(context.Background(), imageJob("gpt-image-2", "1:1", 1, "png"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("held image answered: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	srv.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p, err = e.Check(context.Background(), job, p.UpstreamID); err != nil || len(p.Outputs) != 1 {
		t.Fatalf("released: %+v %v", p, err)
	}
}

func TestOutputsGone(t *testing.T) {
	t.Run("video expired", func(t *testing.T) {
		e, _ := newFake(t)
		e.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		job := videoJob("16:9", 4)
		_, err := run(t, e, job)
		if ue := upstreamErr(t, err); ue.Kind != gengate.Failed || !strings.Contains(ue.Message, "expired") {
			t.Fatalf("got %+v", ue)
		}
	})
	t.Run("compatible urls", func(t *testing.T) {
		srv := openaitest.New(t)
		srv.Compatible()
		e := NewCompatible("localai", Config{BaseURL: srv.URL()})
		job := imageJob("sd", "1:1", 1, "png")
		p, err := e.Submit(context.Background(), job)
		if err != nil || len(p.Outputs) != 1 {
			t.Fatalf("%+v %v", p, err)
		}
		srv.DeleteOutputs()
		_, err = e.Submit(context.Background(), job)
		if ue := upstreamErr(t, err); ue.Kind != gengate.Failed {
			t.Fatalf("got %+v", ue)
		}
	})
}

func TestCompatibleDownloadLater(t *testing.T) {
	// A server whose files fail once: Submit hands Check the URLs rather
	// than failing work that was done.
	fails := 1
	var srvURL string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/images/generations":
			if r.Header.Get("Authorization") != "" {
				t.Error("no key configured, but one was sent")
			}
			io.WriteString(w, `{"created":1,"data":[{"url":"`+srvURL+`/out/1.png"}]}`)
		case "/out/1.png":
			if fails > 0 {
				fails--
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Write(pngBytes(t, 32, 32))
		}
	}))
	defer up.Close()
	srvURL = up.URL
	e := NewCompatible("localai", Config{BaseURL: up.URL + "/v1"})
	job := imageJob("sd", "1:1", 1, "png")
	p, err := e.Submit(context.Background(), job)
	if err != nil || !strings.HasPrefix(p.UpstreamID, "urls:") || len(p.Outputs) != 0 {
		t.Fatalf("%+v %v", p, err)
	}
	p, err = NewCompatible("localai", Config{BaseURL: up.URL + "/v1"}).Check(context.Background(), job, p.UpstreamID)
	if err != nil || len(p.Outputs) != 1 || p.Outputs[0].ContentType != "image/png" {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestCancel(t *testing.T) {
	e, srv := newFake(t)
	srv.Hold()
	job := videoJob("16:9", 4)
	p, err := e.Submit(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(context.Background(), job, p.UpstreamID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Check(context.Background(), job, p.UpstreamID); err == nil {
		t.Fatal("a deleted video is still there")
	}
	if err := e.Cancel(context.Background(), job, "urls:[]"); err != nil {
		t.Fatalf("nothing to cancel for images: %v", err)
	}
}

func TestMalformedID(t *testing.T) {
	e, _ := newFake(t)
	_, err := e.Check(context.Background(), videoJob("16:9", 4), "nonsense")
	var ge *gengate.Error
	if !errors.As(err, &ge) || ge.Code != gengate.EFailed {
		t.Fatalf("got %v", err)
	}
}

func TestExplain(t *testing.T) {
	cases := []struct {
		status int
		body   string
		code   string
	}{
		{400, `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","code":"content_policy_violation"}}`, gengate.CodeContentPolicy},
		{400, `{"error":{"message":"Request blocked.","type":"image_generation_user_error","code":"moderation_blocked"}}`, gengate.CodeContentPolicy},
		{400, `{"error":{"message":"Invalid size","type":"invalid_request_error","param":"size","code":"invalid_value"}}`, ""},
		{400, `{"error":{"message":"Billing hard limit has been reached","type":"invalid_request_error","code":"billing_hard_limit_reached"}}`, gengate.CodeUpstream},
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, gengate.CodeUpstream},
		{500, `not json`, ""},
	}
	for _, tc := range cases {
		if code, _ := explain(tc.status, []byte(tc.body)); code != tc.code {
			t.Errorf("%d %s: code %q, want %q", tc.status, tc.body, code, tc.code)
		}
	}
}

// str is a request value as text (JSON numbers arrive as json.Number).
func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func TestUpstream(t *testing.T) {
	enginetest.Upstream(t, enginetest.UpstreamCase{
		NewFake: func(t *testing.T) enginetest.Fake { return openaitest.New(t) },
		NewEngine: func(key, url string) gengate.Engine {
			return New(Config{APIKey: key, BaseURL: url, ResendDelay: time.Millisecond})
		},
		Resends:           2, // openai-go's MaxRetries
		Job:               videoJob("16:9", 4),
		Sync:              []enginetest.Case{{Name: "image", Job: imageJob("gpt-image-2", "1:1", 1, "png")}},
		WrongKey:          "sk-wrong-key-0123456789",
		FreshRetryAfter:   10 * time.Second,
		DeleteBeforeCheck: true,
	})
}

// TestStreamedInputs: large inputs that come as streams from storage
// (upstreamtest.Streamed) are sent as the same file parts; one whose
// storage fails is Busy and nothing is sent.
func TestStreamedInputs(t *testing.T) {
	in := gengate.Input{Data: pngBytes(t, 64, 64), ContentType: "image/png"}
	mask := gengate.Input{Data: pngBytes(t, 64, 64), ContentType: "image/png"}
	e, srv := newFake(t)
	job := imageJob("gpt-image-2", "2:3", 1, "png")
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Streamed(in), "mask": upstreamtest.Streamed(mask)}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if files := srv.LastFiles(); !bytes.Equal(files["image[]"], in.Data) || !bytes.Equal(files["mask"], mask.Data) {
		t.Fatalf("file parts %v", srv.LastRequest())
	}
	before := srv.Submissions()
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Unreadable(in)}
	_, err := e.Submit(context.Background(), job)
	var ue *gengate.UpstreamError
	if !errors.As(err, &ue) || ue.Kind != gengate.Busy || srv.Submissions() != before {
		t.Errorf("unreadable input: %v (%d submissions), want Busy and nothing sent", err, srv.Submissions()-before)
	}
}
