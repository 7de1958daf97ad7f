package replicate

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

var run = enginetest.RunJob

var ctx = context.Background()

func newEngine(t *testing.T) (*replicatetest.Server, *Engine) {
	t.Helper()
	f := replicatetest.New(t)
	return f, New(Config{APIKey: f.Key(), BaseURL: f.URL()})
}

func route(up string) gengate.Route { return gengate.Route{Engine: "replicate", Upstream: up} }

func imageJob(up, aspect, format string, n int) gengate.Job {
	return gengate.Job{TaskID: "0b4c7c1e-1f7e-4d0c-9d47-2f1a1d3c5e6f", Route: route(up), ModelID: "flux", Type: "image",
		Prompt: "a red fox", AspectRatio: aspect, NumOutputs: n, OutputFormat: format, Options: map[string]any{}}
}

func videoJob(up string, opts map[string]any) gengate.Job {
	return gengate.Job{TaskID: "5a0f3c1e-1f7e-4d0c-9d47-2f1a1d3c5e6f", Route: route(up), Type: "video",
		Prompt: "a red fox running", AspectRatio: "16:9", NumOutputs: 1, OutputFormat: "mp4", Options: opts}
}

var pngInput = func() gengate.Input {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	var b bytes.Buffer
	if err := pngEncode(&b, img); err != nil {
		panic(err)
	}
	return gengate.Input{Data: b.Bytes(), ContentType: "image/png"}
}()

func TestImageSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob("black-forest-labs/flux-dev", "16:9", "jpeg", 2)
	job.Options["seed"] = int64(42)
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if p.UpstreamID == "" || p.RetryAfter != firstImagePoll || len(p.Outputs) != 0 { // read back a quarter second after the submit
		t.Fatalf("submit progress %+v", p)
	}
	p, err = e.Check(ctx, job, p.UpstreamID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Outputs) != 2 {
		t.Fatalf("%d outputs, want 2", len(p.Outputs))
	}
	enginetest.ReadOutputs(t, p.Outputs)
	for i, o := range p.Outputs {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
		if err != nil || format != "jpeg" || o.ContentType != "image/jpeg" {
			t.Fatalf("output %d: %v %s %s", i, err, format, o.ContentType)
		}
		if cfg.Width*9 != cfg.Height*16 {
			t.Errorf("output %d is %dx%d, want 16:9", i, cfg.Width, cfg.Height)
		}
	}
	in := f.LastRequest()["input"].(map[string]any)
	want := map[string]any{"prompt": "a red fox", "aspect_ratio": "16:9", "num_outputs": 2.0, "output_format": "jpg", "seed": 42.0}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("input %s = %v, want %v", k, in[k], v)
		}
	}
	if len(in) != len(want) {
		t.Errorf("input %v has extra fields", in)
	}
}

func TestVideoSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := videoJob("openai/sora-2", map[string]any{"duration": int64(8)})
	job.AspectRatio = "9:16"
	job.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if p.RetryAfter != videoDelay {
		t.Errorf("first poll after %v, want %v", p.RetryAfter, videoDelay)
	}
	p, err = e.Check(ctx, job, p.UpstreamID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Outputs) != 1 || p.Outputs[0].ContentType != "video/mp4" || p.Outputs[0].Ext != "mp4" {
		t.Fatalf("outputs %+v", p.Outputs)
	}
	in := f.LastRequest()["input"].(map[string]any)
	if in["aspect_ratio"] != "portrait" || in["seconds"] != 8.0 || in["prompt"] != "a red fox running" {
		t.Errorf("input %v", in)
	}
	if ref, _ := in["input_reference"].(string); !strings.HasPrefix(ref, "data:image/png;base64,") {
		t.Errorf("input_reference %.40q, want a PNG data URI", ref)
	}
}

func TestConformance(t *testing.T) {
	_, e := newEngine(t)
	cases := enginetest.DefaultCases()
	cases[0].Job.Route = route("black-forest-labs/flux-dev")
	cases[1].Job.Route = route("black-forest-labs/flux-schnell")
	cases[2].Job.Route = route("kwaivgi/kling-v2.1")
	cases[2].Job.Options = map[string]any{"duration": int64(5)}
	cases[2].Job.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	veo := videoJob("google/veo-3", map[string]any{"duration": int64(8), "resolution": "1080p", "generateAudio": true})
	versioned := imageJob("someone/custom-flux:5599ed30703defd1d160a25a63321b4dec97101d98b4674bcc56e41f62f35637", "9:16", "png", 1)
	cases = append(cases, enginetest.Case{Name: "veo-3", Job: veo}, enginetest.Case{Name: "versioned custom model", Job: versioned})
	enginetest.Run(t, e, cases, func(time.Duration) {})
}

func TestVersionedRoute(t *testing.T) {
	f, e := newEngine(t)
	up := "someone/custom-flux:5599ed30703defd1d160a25a63321b4dec97101d98b4674bcc56e41f62f35637"
	job := imageJob(up, "1:1", "png", 1)
	job.Route.Params = map[string]any{"lora_scale": 0.8}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	body := f.LastRequest()
	if body["version"] != up {
		t.Errorf("version %v", body["version"])
	}
	if in := body["input"].(map[string]any); in["lora_scale"] != 0.8 || in["aspect_ratio"] != "1:1" {
		t.Errorf("input %v", in)
	}
}

func TestInputForms(t *testing.T) {
	cases := []struct {
		name   string
		job    gengate.Job
		inputs map[string]gengate.Input
		want   map[string]string // param → "uri" or "list"
	}{
		{"nano-banana list", imageJob("google/nano-banana", "1:1", "png", 1), map[string]gengate.Input{"imageUrl": pngInput}, map[string]string{"image_input": "list"}},
		{"kontext", imageJob("black-forest-labs/flux-kontext-pro", "1:1", "png", 1), map[string]gengate.Input{"imageUrl": pngInput}, map[string]string{"input_image": "uri"}},
		{"eraser", gengate.Job{Route: route("bria/eraser"), Type: "image", NumOutputs: 1, OutputFormat: "png"},
			map[string]gengate.Input{"image": pngInput, "mask": pngInput}, map[string]string{"image": "uri", "mask": "uri"}},
		{"face swap", gengate.Job{Route: route("codeplugtech/face-swap"), Type: "image", NumOutputs: 1, OutputFormat: "png"},
			map[string]gengate.Input{"inputImage": pngInput, "swapImage": pngInput}, map[string]string{"input_image": "uri", "swap_image": "uri"}},
		{"esrgan", gengate.Job{Route: route("nightmareai/real-esrgan"), Type: "image", NumOutputs: 1, OutputFormat: "png", Options: map[string]any{"scale": int64(4)}},
			map[string]gengate.Input{"imageUrl": pngInput}, map[string]string{"image": "uri"}},
		{"veo first and last frame", videoJob("google/veo-3.1-fast", map[string]any{"duration": int64(8)}),
			map[string]gengate.Input{"imageUrl": pngInput, "inputs.lastFrameUrl": pngInput}, map[string]string{"image": "uri", "last_frame": "uri"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, e := newEngine(t)
			tc.job.Inputs = tc.inputs
			if _, err := run(t, e, tc.job); err != nil {
				t.Fatal(err)
			}
			in := f.LastRequest()["input"].(map[string]any)
			for param, form := range tc.want {
				v := in[param]
				if form == "list" {
					l, ok := v.([]any)
					if !ok || len(l) != 1 {
						t.Fatalf("%s = %T, want a list of one", param, v)
					}
					v = l[0]
				}
				if s, _ := v.(string); !strings.HasPrefix(s, "data:image/png;base64,") {
					t.Errorf("%s = %.40v, want a data URI", param, v)
				}
			}
			if _, ok := in["prompt"]; ok && tc.job.Prompt == "" {
				t.Error("prompt sent")
			}
		})
	}
}

func TestValidate(t *testing.T) {
	e := New(Config{APIKey: "k"})
	withOpts := enginetest.WithOptions
	named := enginetest.WithInputNames
	noAspect := func(j gengate.Job) gengate.Job { j.AspectRatio = ""; return j }
	cases := []struct {
		name  string
		job   gengate.Job
		field string // "" accepted
	}{
		{"flux-dev 16:9", imageJob("black-forest-labs/flux-dev", "16:9", "png", 4), ""},
		{"flux-dev 4:3", imageJob("black-forest-labs/flux-dev", "4:3", "png", 1), "aspectRatio"},
		{"flux-schnell 4:3", imageJob("black-forest-labs/flux-schnell", "4:3", "jpeg", 1), ""},
		{"flux-schnell 5 outputs", imageJob("black-forest-labs/flux-schnell", "1:1", "png", 5), "numOutputs"},
		{"flux-2-pro 2 outputs", imageJob("black-forest-labs/flux-2-pro", "1:1", "png", 2), "numOutputs"},
		{"nano-banana webp", imageJob("google/nano-banana", "1:1", "webp", 1), "outputFormat"},
		{"nano-banana-pro 2K", withOpts(imageJob("google/nano-banana-pro", "1:1", "png", 1), "resolution", "2K"), ""},
		{"imagen ultra 2K", withOpts(imageJob("google/imagen-4-ultra", "1:1", "png", 1), "resolution", "2K"), "resolution"},
		{"imagen seed", withOpts(imageJob("google/imagen-4-fast", "1:1", "png", 1), "seed", int64(3)), "seed"},
		{"seedream 4K", withOpts(imageJob("bytedance/seedream-4.5", "21:9", "jpeg", 1), "resolution", "4K"), ""},
		{"z-image 16:9", imageJob("prunaai/z-image-turbo", "16:9", "webp", 1), ""},
		{"esrgan scale 3", withOpts(gengate.Job{Route: route("nightmareai/real-esrgan"), Type: "image", OutputFormat: "png"}, "scale", int64(3)), "scale"},
		{"esrgan without image", withOpts(gengate.Job{Route: route("nightmareai/real-esrgan"), Type: "image", OutputFormat: "png"}, "scale", int64(2)), "imageUrl"},
		{"remove-bg prompt", named(imageJob("851-labs/background-remover", "", "png", 1), "imageUrl"), "prompt"},
		{"qwen edit", named(imageJob("qwen/qwen-image-edit-plus", "", "jpeg", 1), "image"), ""},
		{"flux mask", named(imageJob("black-forest-labs/flux-dev", "1:1", "png", 1), "mask"), "mask"},
		{"sora 16:9 12 s", withOpts(videoJob("openai/sora-2", nil), "duration", int64(12)), ""},
		{"sora 6 s", withOpts(videoJob("openai/sora-2", nil), "duration", int64(6)), "duration"},
		{"veo-3.1 4k", withOpts(videoJob("google/veo-3.1", nil), "resolution", "4k"), "resolution"},
		{"kling text only", withOpts(videoJob("kwaivgi/kling-v2.1", nil), "duration", int64(5)), "imageUrl"},
		{"kling with image", named(withOpts(videoJob("kwaivgi/kling-v2.1", nil), "duration", int64(5)), "imageUrl"), ""},
		{"seedance 12 s", withOpts(videoJob("bytedance/seedance-1-pro-fast", nil), "duration", int64(12)), ""},
		{"seedance 13 s", withOpts(videoJob("bytedance/seedance-1-pro-fast", nil), "duration", int64(13)), "duration"},
		{"wan t2v 9:16 1080p", withOpts(videoJob("wan-video/wan-2.6-t2v", nil), "duration", int64(15), "resolution", "1080p"), ""},
		{"hailuo audio", noAspect(withOpts(videoJob("minimax/hailuo-2.3", nil), "generateAudio", true)), "generateAudio"},
		{"hailuo aspect", withOpts(videoJob("minimax/hailuo-2.3", nil), "duration", int64(6)), "aspectRatio"},
		{"motion control any duration", noAspect(named(withOpts(videoJob("kwaivgi/kling-v2.6-motion-control", nil), "duration", int64(7)), "imageUrl", "inputs.videoUrl")), ""},
		{"unknown model", withOpts(named(imageJob("acme/new-model", "7:3", "webp", 9), "imageUrl", "mask"), "seed", int64(1), "quality", "high"), ""},
		{"unknown model input", named(imageJob("acme/new-model", "1:1", "png", 1), "personImage", "clothImage", "inputs.videoUrl"), ""},
		{"unknown model usual", withOpts(named(imageJob("acme/new-model", "7:3", "webp", 9), "imageUrl", "mask"), "seed", int64(1)), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.WantValidate(t, e.Validate(tc.job), tc.field)
		})
	}
}

// TestEveryCatalogRoute checks that every replicate route of the catalog
// has a table entry and that the model's default settings validate.
func TestEveryCatalogRoute(t *testing.T) {
	cat, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	e := New(Config{APIKey: "k"})
	n := 0
	for _, m := range cat.Models() {
		for _, r := range m.Routes {
			if r.Engine != "replicate" {
				continue
			}
			n++
			if _, ok := specFor(r.Upstream); !ok {
				t.Errorf("%s: no table entry for %s", m.ID, r.Upstream)
				continue
			}
			job := gengate.Job{Route: r, ModelID: m.ID, Type: m.Type, NumOutputs: 1, Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
			for _, f := range m.Inputs {
				switch {
				case f.Name == "prompt":
					job.Prompt = "x"
				default:
					job.Inputs[f.Name] = gengate.Input{} // every input, as kling-v2.1 needs its image
				}
			}
			for _, f := range m.Options {
				switch f.Name {
				case "aspectRatio":
					job.AspectRatio, _ = f.Default.(string)
				case "outputFormat":
					job.OutputFormat, _ = f.Default.(string)
				case "numOutputs":
				default:
					if f.Default != nil {
						if v, ok := f.Default.(float64); ok {
							job.Options[f.Name] = int64(v)
						} else {
							job.Options[f.Name] = f.Default
						}
					}
				}
			}
			if err := e.Validate(job); err != nil {
				t.Errorf("%s on %s with defaults: %v", m.ID, r.Upstream, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no replicate routes in the catalog")
	}
}

func TestSecretsNeverShown(t *testing.T) {
	const key = "r8_superSecretToken42"
	// An upstream that echoes the credentials it got in every answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch {
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"title":"Forbidden","detail":"token `+auth+` may not run this model","status":403}`)
		default:
			io.WriteString(w, `{"id":"abc","status":"failed","error":"worker saw `+key+` and crashed"}`)
		}
	}))
	defer srv.Close()
	e := New(Config{APIKey: key, BaseURL: srv.URL})
	job := imageJob("black-forest-labs/flux-dev", "1:1", "png", 1)
	_, err1 := e.Submit(ctx, job)
	_, err2 := e.Check(ctx, job, "abc")
	for _, err := range []error{err1, err2} {
		if err == nil || strings.Contains(err.Error(), key) {
			t.Fatalf("error %v shows the key", err)
		}
	}
}

func TestMalformedUpstreamID(t *testing.T) {
	_, e := newEngine(t)
	_, err := e.Check(ctx, imageJob("black-forest-labs/flux-dev", "1:1", "png", 1), "../../account")
	var ge *gengate.Error
	if !errors.As(err, &ge) || ge.Code != gengate.EFailed {
		t.Fatalf("got %v", err)
	}
}

func pngEncode(w io.Writer, img image.Image) error { return png.Encode(w, img) }

func TestUpstream(t *testing.T) {
	veo := videoJob("google/veo-3.1", map[string]any{"duration": int64(4), "resolution": "720p", "generateAudio": false})
	enginetest.Upstream(t, enginetest.UpstreamCase{
		NewFake:   func(t *testing.T) enginetest.Fake { return replicatetest.New(t) },
		NewEngine: func(key, url string) gengate.Engine { return New(Config{APIKey: key, BaseURL: url}) },
		Job:       imageJob("black-forest-labs/flux-schnell", "1:1", "png", 1),
		Refusals: []enginetest.Answer{
			{Status: 422, Code: gengate.CodeRejectedInput},
			{Status: 403, Code: gengate.CodeUpstream},
		},
		WrongKey:          "r8_wrongToken9876543210",
		FreshJob:          &veo,
		FreshRetryAfter:   videoDelay,
		HoldCancel:        true,
		DeleteBeforeCheck: true,
	})
}
