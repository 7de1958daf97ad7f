package google

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	_ "image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/google/googletest"
)

var (
	run         = enginetest.RunJob
	upstreamErr = enginetest.UpstreamErr
)

var ctx = context.Background()

const (
	flashImage = "gemini-2.5-flash-image"
	proImage   = "gemini-3-pro-image-preview"
	imagenFast = "imagen-4.0-fast-generate-001"
	imagenUltr = "imagen-4.0-ultra-generate-001"
	veo31      = "veo-3.1-generate-001"
	veo3Fast   = "veo-3.0-fast-generate-001"
)

func newEngine(t *testing.T) (*googletest.Server, *Engine) {
	t.Helper()
	f := googletest.New(t)
	return f, New(Config{APIKey: f.Key(), BaseURL: f.URL()})
}

func route(up string) gengate.Route { return gengate.Route{Engine: "google", Upstream: up} }

func imageJob(up, aspect, format string) gengate.Job {
	return gengate.Job{TaskID: "0b4c7c1e-1f7e-4d0c-9d47-2f1a1d3c5e6f", Route: route(up), ModelID: "nano-banana", Type: "image",
		Prompt: "a red fox", AspectRatio: aspect, NumOutputs: 1, OutputFormat: format, Options: map[string]any{}}
}

func videoJob(up string, opts map[string]any) gengate.Job {
	return gengate.Job{TaskID: "5a0f3c1e-1f7e-4d0c-9d47-2f1a1d3c5e6f", Route: route(up), ModelID: "google-veo-3-1", Type: "video",
		Prompt: "a red fox running", AspectRatio: "16:9", NumOutputs: 1, OutputFormat: "mp4", Options: opts}
}

var pngInput = func() gengate.Input {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		panic(err)
	}
	return gengate.Input{Data: b.Bytes(), ContentType: "image/png"}
}()

// get walks a decoded JSON body: get(body, "generationConfig", "imageConfig", "aspectRatio").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func decode(t *testing.T, o gengate.Output) (image.Config, string) {
	t.Helper()
	cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
	if err != nil {
		t.Fatalf("output does not decode: %v", err)
	}
	if o.ContentType != "image/"+format || o.Ext != format {
		t.Fatalf("output labelled %s/%s, is %s", o.ContentType, o.Ext, format)
	}
	return cfg, format
}

func TestGeminiImageSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob(flashImage, "16:9", "jpeg")
	job.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if p.UpstreamID != "" || len(p.Outputs) != 1 {
		t.Fatalf("submit progress %+v, want one output at once", p)
	}
	cfg, format := decode(t, p.Outputs[0])
	if format != "jpeg" || cfg.Width*9 != cfg.Height*16 {
		t.Errorf("output is %s %dx%d, want a 16:9 JPEG (re-encoded from the PNG answer)", format, cfg.Width, cfg.Height)
	}
	body := f.LastRequest()
	want := map[string]any{
		"contents": []any{map[string]any{"role": "user", "parts": []any{
			map[string]any{"text": "a red fox"},
			map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(pngInput.Data)}},
		}}},
		"generationConfig": map[string]any{"responseModalities": []any{"IMAGE"}, "imageConfig": map[string]any{"aspectRatio": "16:9"}},
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("request body\n%v\nwant\n%v", body, want)
	}
}

func TestGeminiProImageSize(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob(proImage, "21:9", "png")
	job.Options["resolution"] = "2K"
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	ic := get(f.LastRequest(), "generationConfig", "imageConfig")
	if want := map[string]any{"aspectRatio": "21:9", "imageSize": "2K"}; !reflect.DeepEqual(ic, want) {
		t.Errorf("imageConfig %v, want %v", ic, want)
	}
}

func TestImagenSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob(imagenUltr, "9:16", "jpeg")
	job.NumOutputs = 2
	job.Options["resolution"] = "2K"
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Outputs) != 2 {
		t.Fatalf("%d outputs, want 2", len(p.Outputs))
	}
	for _, o := range p.Outputs {
		if cfg, format := decode(t, o); format != "jpeg" || cfg.Width*16 != cfg.Height*9 {
			t.Errorf("output is %s %dx%d, want a 9:16 JPEG", format, cfg.Width, cfg.Height)
		}
	}
	want := map[string]any{
		"instances": []any{map[string]any{"prompt": "a red fox"}},
		"parameters": map[string]any{"sampleCount": 2.0, "aspectRatio": "9:16", "sampleImageSize": "2K",
			"outputOptions": map[string]any{"mimeType": "image/jpeg"}, "includeRaiReason": true},
	}
	if body := f.LastRequest(); !reflect.DeepEqual(body, want) {
		t.Errorf("request body\n%v\nwant\n%v", body, want)
	}
}

func TestVideoSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := videoJob(veo31, map[string]any{"duration": int64(8), "resolution": "1080p", "generateAudio": true})
	job.AspectRatio = "9:16"
	job.Inputs = map[string]gengate.Input{"imageUrl": pngInput, "inputs.lastFrameUrl": pngInput}
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.UpstreamID, "models/"+veo31+"/operations/") || p.RetryAfter != videoDelay || len(p.Outputs) != 0 {
		t.Fatalf("submit progress %+v", p)
	}
	p, err = e.Check(ctx, job, p.UpstreamID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Outputs) != 1 || p.Outputs[0].ContentType != "video/mp4" || p.Outputs[0].Ext != "mp4" {
		t.Fatalf("outputs %+v", p.Outputs)
	}
	frame := map[string]any{"bytesBase64Encoded": base64.StdEncoding.EncodeToString(pngInput.Data), "mimeType": "image/png"}
	want := map[string]any{
		"instances":  []any{map[string]any{"prompt": "a red fox running", "image": frame, "lastFrame": frame}},
		"parameters": map[string]any{"aspectRatio": "9:16", "durationSeconds": 8.0, "resolution": "1080p"},
	}
	if body := f.LastRequest(); !reflect.DeepEqual(body, want) {
		t.Errorf("request body\n%v\nwant\n%v", body, want)
	}
}

func TestConformance(t *testing.T) {
	_, e := newEngine(t)
	cases := enginetest.DefaultCases()
	cases[0].Job.Route = route(flashImage)
	cases[1].Job.Route = route(imagenFast) // jpeg 16:9, two images
	cases[2].Job.Route = route(veo3Fast)
	cases[2].Job.Options = map[string]any{"duration": int64(4), "resolution": "720p", "generateAudio": true}
	pro := imageJob(proImage, "9:16", "png")
	pro.Options["resolution"] = "1K"
	edit := imageJob("gemini-2.5-flash-image-preview", "1:1", "jpeg")
	edit.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	custom := imageJob("gemini-9-image-experimental", "1:1", "png")
	i2v := videoJob("veo-3.1-fast-generate-preview", map[string]any{"duration": int64(6)})
	i2v.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	cases = append(cases,
		enginetest.Case{Name: "nano-banana-pro", Job: pro},
		enginetest.Case{Name: "edit", Job: edit},
		enginetest.Case{Name: "unknown gemini model", Job: custom},
		enginetest.Case{Name: "veo image to video", Job: i2v})
	enginetest.Run(t, e, cases, func(time.Duration) {})
}

// Jobs of each method, for the tables below.
var methodJobs = map[string]gengate.Job{
	"generateContent":    imageJob(flashImage, "1:1", "png"),
	"predict":            imageJob(imagenFast, "1:1", "png"),
	"predictLongRunning": videoJob(veo31, map[string]any{"duration": int64(4)}),
}

func TestRouteParams(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob(flashImage, "1:1", "png")
	safety := []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}}
	job.Route.Params = map[string]any{"safetySettings": safety, "temperature": 0.5,
		"generationConfig": map[string]any{"responseModalities": []any{"TEXT", "IMAGE"}}}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	body := f.LastRequest()
	want := map[string]any{"responseModalities": []any{"TEXT", "IMAGE"}, "temperature": 0.5, "imageConfig": map[string]any{"aspectRatio": "1:1"}}
	if !reflect.DeepEqual(body["safetySettings"], safety) || !reflect.DeepEqual(body["generationConfig"], want) {
		t.Errorf("body %v", body)
	}

	vjob := videoJob(veo31, map[string]any{"duration": int64(8)})
	vjob.Route.Params = map[string]any{"personGeneration": "allow_all", "negativePrompt": "text"}
	if _, err := run(t, e, vjob); err != nil {
		t.Fatal(err)
	}
	params := get(f.LastRequest(), "parameters")
	want = map[string]any{"aspectRatio": "16:9", "durationSeconds": 8.0, "personGeneration": "allow_all", "negativePrompt": "text"}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("parameters %v, want %v", params, want)
	}
}

func TestValidate(t *testing.T) {
	e := New(Config{APIKey: "k"})
	opts := func(j gengate.Job, kv ...any) gengate.Job {
		j.Options = map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			j.Options[kv[i].(string)] = kv[i+1]
		}
		return j
	}
	named := enginetest.WithInputNames
	outputs := func(j gengate.Job, n int) gengate.Job { j.NumOutputs = n; return j }
	cases := []struct {
		name  string
		job   gengate.Job
		field string // "" accepted
	}{
		{"nano-banana 21:9 jpeg", imageJob(flashImage, "21:9", "jpeg"), ""},
		{"nano-banana webp", imageJob(flashImage, "1:1", "webp"), "outputFormat"},
		{"nano-banana 7:3", imageJob(flashImage, "7:3", "png"), "aspectRatio"},
		{"nano-banana two images", outputs(imageJob(flashImage, "1:1", "png"), 2), "numOutputs"},
		{"nano-banana resolution", opts(imageJob(flashImage, "1:1", "png"), "resolution", "2K"), "resolution"},
		{"nano-banana edit", named(imageJob(flashImage, "1:1", "png"), "imageUrl"), ""},
		{"nano-banana mask", named(imageJob(flashImage, "1:1", "png"), "imageUrl", "mask"), "mask"},
		{"nano-banana-pro 4K", opts(imageJob(proImage, "1:1", "png"), "resolution", "4K"), ""},
		{"nano-banana-pro 8K", opts(imageJob(proImage, "1:1", "png"), "resolution", "8K"), "resolution"},
		{"imagen 4:3 x4", outputs(imageJob(imagenFast, "4:3", "jpeg"), 4), ""},
		{"imagen x5", outputs(imageJob(imagenFast, "1:1", "png"), 5), "numOutputs"},
		{"imagen 21:9", imageJob(imagenUltr, "21:9", "png"), "aspectRatio"},
		{"imagen ultra 2K", opts(imageJob(imagenUltr, "1:1", "png"), "resolution", "2K"), ""},
		{"imagen fast 2K", opts(imageJob(imagenFast, "1:1", "png"), "resolution", "2K"), "resolution"},
		{"imagen seed", opts(imageJob(imagenFast, "1:1", "png"), "seed", int64(7)), "seed"},
		{"imagen input", named(imageJob(imagenFast, "1:1", "png"), "imageUrl"), "imageUrl"},
		{"veo 1080p 8 s", opts(videoJob(veo31, nil), "duration", int64(8), "resolution", "1080p"), ""},
		{"veo 1080p 4 s", opts(videoJob(veo31, nil), "duration", int64(4), "resolution", "1080p"), "duration"},
		{"veo-3.1 4k", opts(videoJob(veo31, nil), "duration", int64(8), "resolution", "4k"), "resolution"},
		{"veo 720p 6 s", opts(videoJob(veo31, nil), "duration", int64(6), "resolution", "720p"), ""},
		{"veo 5 s", opts(videoJob(veo31, nil), "duration", int64(5)), "duration"},
		{"veo 1:1", func() gengate.Job { j := videoJob(veo31, nil); j.AspectRatio = "1:1"; return j }(), "aspectRatio"},
		{"veo-3 4k", opts(videoJob(veo3Fast, nil), "duration", int64(8), "resolution", "4k"), "resolution"},
		{"veo no audio", opts(videoJob(veo31, nil), "generateAudio", false), "generateAudio"},
		{"veo audio", opts(videoJob(veo31, nil), "generateAudio", true), ""},
		{"veo seed", opts(videoJob(veo31, nil), "seed", int64(1)), "seed"},
		{"veo nil seed", opts(videoJob(veo31, nil), "seed", nil), ""},
		{"veo png", func() gengate.Job { j := videoJob(veo31, nil); j.OutputFormat = "png"; return j }(), "outputFormat"},
		{"veo-3.1 last frame", named(videoJob(veo31, nil), "imageUrl", "inputs.lastFrameUrl"), ""},
		{"veo-3.1 last frame alone", named(videoJob(veo31, nil), "inputs.lastFrameUrl"), "inputs.lastFrameUrl"},
		{"veo-3 last frame", named(videoJob(veo3Fast, nil), "imageUrl", "inputs.lastFrameUrl"), "inputs.lastFrameUrl"},
		{"veo quality", opts(videoJob(veo31, nil), "quality", "high"), "quality"},
		{"image type on veo", imageJob(veo31, "16:9", "png"), "type"},
		{"unknown image model", opts(named(imageJob("gemini-9-image", "7:3", "jpeg"), "imageUrl", "personImage"), "quality", "high", "seed", int64(2)), ""},
		{"unknown image model webp", imageJob("gemini-9-image", "1:1", "webp"), "outputFormat"},
		{"unknown imagen x8", outputs(imageJob("imagen-5.0-generate-001", "2:1", "png"), 8), ""},
		{"unknown veo", opts(named(videoJob("veo-4.0-generate-preview", nil), "imageUrl", "inputs.lastFrameUrl"), "duration", int64(12), "resolution", "8k", "generateAudio", false, "seed", int64(3)), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.WantValidate(t, e.Validate(tc.job), tc.field)
		})
	}
}

// TestSubmitAgreesWithValidate checks that Submit refuses what Validate
// refuses, before sending anything.
func TestSubmitAgreesWithValidate(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob(flashImage, "1:1", "webp")
	_, err := e.Submit(ctx, job)
	var ge *gengate.Error
	if !errors.As(err, &ge) || ge.Code != gengate.EUnsupportedOption || f.Submissions() != 0 {
		t.Fatalf("got %v, %d submissions", err, f.Submissions())
	}
}

// TestEveryCatalogRoute checks that every google route of the catalog
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
			if r.Engine != "google" {
				continue
			}
			n++
			if _, ok := specFor(r.Upstream, m.Type); !ok {
				t.Errorf("%s: no table entry for %s", m.ID, r.Upstream)
				continue
			}
			job := gengate.Job{Route: r, ModelID: m.ID, Type: m.Type, NumOutputs: 1, Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
			for _, f := range m.Inputs {
				if f.Name == "prompt" {
					job.Prompt = "x"
				} else {
					job.Inputs[f.Name] = gengate.Input{} // every input at once
				}
			}
			for _, f := range m.Options {
				switch f.Name {
				case "aspectRatio":
					job.AspectRatio, _ = f.Default.(string)
				case "outputFormat":
					job.OutputFormat, _ = f.Default.(string)
				default:
					if v, ok := f.Default.(float64); ok {
						job.Options[f.Name] = int64(v)
					} else if f.Default != nil {
						job.Options[f.Name] = f.Default
					}
				}
			}
			if err := e.Validate(job); err != nil {
				t.Errorf("%s on %s with defaults: %v", m.ID, r.Upstream, err)
			}
			// Every declared value of every enum option, one at a time.
			for _, f := range m.Options {
				for _, v := range f.Values {
					j := job
					j.Options = map[string]any{}
					for k, x := range job.Options {
						j.Options[k] = x
					}
					switch f.Name {
					case "aspectRatio":
						j.AspectRatio = v.(string)
					case "outputFormat":
						j.OutputFormat = v.(string)
					case "duration":
						j.Options[f.Name] = int64(v.(float64))
					default:
						j.Options[f.Name] = v
					}
					if err := e.Validate(j); err != nil {
						t.Logf("%s on %s: %s=%v refused: %v", m.ID, r.Upstream, f.Name, v, err)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no google routes in the catalog")
	}
}

// TestContentAnswers reads generateContent answers the fake does not make.
func TestContentAnswers(t *testing.T) {
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 8, 8)))
	b64 := base64.StdEncoding.EncodeToString(img.Bytes())
	cases := []struct {
		name, body string
		outputs    int
		code       string
	}{
		{"prompt blocked", `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}`, 0, gengate.CodeContentPolicy},
		{"safety finish", `{"candidates":[{"finishReason":"SAFETY"}]}`, 0, gengate.CodeContentPolicy},
		{"text only", `{"candidates":[{"content":{"parts":[{"text":"Here is a story instead."}]},"finishReason":"STOP"}]}`, 0, gengate.CodeUpstream},
		{"no candidates", `{}`, 0, gengate.CodeUpstream},
		{"thought then image", `{"candidates":[{"content":{"parts":[{"thought":true,"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}},{"text":"done"},{"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}}]},"finishReason":"STOP"}]}`, 1, ""},
		{"snake case", `{"candidates":[{"content":{"parts":[{"inline_data":{"mime_type":"image/png","data":"` + b64 + `"}}]}}]}`, 1, ""},
		{"not an image", `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"aGVsbG8gd29ybGQ="}}]}}]}`, 0, gengate.CodeUpstream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tc.body) }))
			defer srv.Close()
			e := New(Config{APIKey: "AIzaSyLocal0123456789", BaseURL: srv.URL})
			p, err := e.Submit(ctx, imageJob(flashImage, "1:1", "png"))
			if tc.outputs > 0 {
				if err != nil || len(p.Outputs) != tc.outputs {
					t.Fatalf("got %d outputs, %v", len(p.Outputs), err)
				}
				return
			}
			if ue := upstreamErr(t, err); ue.Kind != gengate.Failed || ue.Code != tc.code {
				t.Fatalf("got %+v", ue)
			}
		})
	}
}

// TestErrorAnswers reads error answers the fake does not make.
func TestErrorAnswers(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   gengate.UpstreamKind
		code   string
	}{
		{"safety 400", 400, `{"error":{"code":400,"message":"The input image violates Google's Responsible AI practices. Try rephrasing.","status":"INVALID_ARGUMENT"}}`, gengate.Failed, gengate.CodeContentPolicy},
		{"location", 400, `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`, gengate.Refused, gengate.CodeUpstream},
		{"bad image", 400, `{"error":{"code":400,"message":"Unable to process input image.","status":"INVALID_ARGUMENT"}}`, gengate.Refused, gengate.CodeRejectedInput},
		{"quota 429", 429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, gengate.Busy, gengate.CodeUpstream},
		// go-genai sends nothing again unless told (common.go
		// retryHTTPRequest: "A nil opts means a single attempt"): a 5xx
		// after the request was sent is ambiguous.
		{"plain text 502", 502, `<html>Bad Gateway</html>`, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			e := New(Config{APIKey: "AIzaSyLocal0123456789", BaseURL: srv.URL})
			_, err := e.Submit(ctx, imageJob(flashImage, "1:1", "png"))
			if tc.kind == 0 {
				var ue *gengate.UpstreamError
				if err == nil || errors.As(err, &ue) {
					t.Fatalf("got %v, want ambiguous", err)
				}
				return
			}
			if ue := upstreamErr(t, err); ue.Kind != tc.kind || ue.Code != tc.code {
				t.Fatalf("got %+v", ue)
			}
		})
	}
}

func TestSecretsNeverShown(t *testing.T) {
	const key = "AIzaSySuperSecret-42abcdefghijklmnop"
	// An upstream that echoes the credentials it got in every answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("x-goog-api-key")
		switch {
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":{"code":403,"message":"key `+got+` may not call this model","status":"PERMISSION_DENIED"}}`)
		case strings.HasSuffix(r.URL.Path, ":predict"):
			io.WriteString(w, `{"predictions":[{"raiFilteredReason":"filtered for key=`+got+`"}]}`)
		default:
			io.WriteString(w, `{"name":"models/veo/operations/abc","done":true,"error":{"code":13,"message":"worker saw `+got+` and crashed"}}`)
		}
	}))
	defer srv.Close()
	e := New(Config{APIKey: key, BaseURL: srv.URL})
	_, err1 := e.Submit(ctx, methodJobs["generateContent"])
	_, err2 := e.Submit(ctx, methodJobs["predict"])
	_, err3 := e.Check(ctx, methodJobs["predictLongRunning"], "models/veo/operations/abc")
	for _, err := range []error{err1, err2, err3} {
		if err == nil || strings.Contains(err.Error(), key) {
			t.Fatalf("error %v shows the key", err)
		}
	}
}

func TestMalformedUpstreamID(t *testing.T) {
	_, e := newEngine(t)
	job := methodJobs["predictLongRunning"]
	for _, id := range []string{"", "../../v1/files", "models/veo/operations/a?key=x", "https://evil.example/operations/x"} {
		_, err := e.Check(ctx, job, id)
		var ge *gengate.Error
		if !errors.As(err, &ge) || ge.Code != gengate.EFailed {
			t.Errorf("%q: got %v", id, err)
		}
	}
}

func TestUpstream(t *testing.T) {
	veo := videoJob(veo31, map[string]any{"duration": int64(6), "resolution": "720p"})
	enginetest.Upstream(t, enginetest.UpstreamCase{
		NewFake:   func(t *testing.T) enginetest.Fake { return googletest.New(t) },
		NewEngine: func(key, url string) gengate.Engine { return New(Config{APIKey: key, BaseURL: url}) },
		Job:       methodJobs["predictLongRunning"],
		Sync: []enginetest.Case{
			{Name: "generateContent", Job: methodJobs["generateContent"]},
			{Name: "predict", Job: methodJobs["predict"]},
		},
		Refusals: []enginetest.Answer{
			{Status: 400, Code: gengate.CodeRejectedInput},
			{Status: 401, Code: gengate.CodeUpstream},
			{Status: 403, Code: gengate.CodeUpstream},
			{Status: 404, Code: gengate.CodeUpstream},
		},
		WrongKey:        "AIzaSyWrongKey-9876543210zyxwvutsrqpo",
		WrongKeyStatus:  http.StatusBadRequest,
		NoKeyStatus:     http.StatusForbidden,
		FreshJob:        &veo,
		FreshRetryAfter: videoDelay,
		HoldCancel:      true,
	})
}

// TestCheckRegistry: a route whose model the Gemini API's models.list no
// longer names is unknown; the others are live.
func TestCheckRegistry(t *testing.T) {
	srv := googletest.New(t)
	e := New(Config{APIKey: srv.Key(), BaseURL: srv.URL()})
	srv.Retire("veo-3.0-generate-001")
	got, err := e.CheckRegistry(ctx, []string{"gemini-2.5-flash-image", "veo-3.0-generate-001", "veo-3.1-generate-preview"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"gemini-2.5-flash-image": gengate.RouteLive, "veo-3.0-generate-001": gengate.RouteUnknown,
		"veo-3.1-generate-preview": gengate.RouteLive}
	for id, st := range want {
		if got[id].State != st {
			t.Errorf("%s: %+v, want %s", id, got[id], st)
		}
	}
	bad := New(Config{APIKey: "AIzaWrong0000000000", BaseURL: srv.URL()})
	if _, err := bad.CheckRegistry(ctx, []string{"gemini-2.5-flash-image"}); err == nil {
		t.Error("a registry that refuses the key gave an answer")
	}
}
