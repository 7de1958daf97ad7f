package comfyui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/comfyui/comfyuitest"
	"github.com/gengate/gengate/internal/engine/enginetest"
)

var (
	run         = enginetest.RunJob
	upstreamErr = enginetest.UpstreamErr
)

var ctx = context.Background()

func newEngine(t *testing.T) (*comfyuitest.Server, *Engine) {
	t.Helper()
	f := comfyuitest.New(t)
	return f, New(Config{APIKey: f.Key(), BaseURL: f.URL()})
}

func route(up string) gengate.Route { return gengate.Route{Engine: "comfyui", Upstream: up} }

var taskN atomic.Int64

// taskID returns a fresh task id: the prompt id, so distinct per task.
func taskID() string {
	return fmt.Sprintf("0b4c7c1e-1f7e-4d0c-9d47-%012d", taskN.Add(1))
}

func imageJob(up, aspect, format string, n int) gengate.Job {
	return gengate.Job{TaskID: taskID(), Route: route(up), ModelID: up, Type: "image",
		Prompt: "a red fox", AspectRatio: aspect, NumOutputs: n, OutputFormat: format, Options: map[string]any{}}
}

func videoJob(aspect string, opts map[string]any) gengate.Job {
	return gengate.Job{TaskID: taskID(), Route: route("wan-2-5-t2v"), ModelID: "wan-2-5-t2v", Type: "video",
		Prompt: "a red fox running", AspectRatio: aspect, NumOutputs: 1, OutputFormat: "mp4", Options: opts}
}

func editJob() gengate.Job {
	return gengate.Job{TaskID: taskID(), Route: route("qwen-image-edit"), ModelID: "qwen-image-edit", Type: "image",
		Prompt: "make it night", NumOutputs: 1, OutputFormat: "png", Options: map[string]any{},
		Inputs: map[string]gengate.Input{"image": pngInput}}
}

var pngInput = func() gengate.Input {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 48, 32))); err != nil {
		panic(err)
	}
	return gengate.Input{Data: b.Bytes(), ContentType: "image/png"}
}()

// node returns the inputs of node id of the last queued graph.
func node(t *testing.T, f *comfyuitest.Server, id string) map[string]any {
	t.Helper()
	g, _ := f.LastRequest()["prompt"].(map[string]any)
	n, _ := g[id].(map[string]any)
	in, _ := n["inputs"].(map[string]any)
	if in == nil {
		t.Fatalf("the last graph has no node %s", id)
	}
	return in
}

func TestImageSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob("flux-schnell", "16:9", "jpeg", 2)
	job.Options["seed"] = int64(42)
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if p.UpstreamID != job.TaskID || p.RetryAfter != imageDelay || len(p.Outputs) != 0 {
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
		if err != nil || format != "jpeg" || o.ContentType != "image/jpeg" || o.Ext != "jpeg" {
			t.Fatalf("output %d: %v %s %s %s", i, err, format, o.ContentType, o.Ext)
		}
		if r := float64(cfg.Width) / float64(cfg.Height); r < 1.74 || r > 1.81 {
			t.Errorf("output %d is %dx%d, want 16:9", i, cfg.Width, cfg.Height)
		}
	}
	body := f.LastRequest()
	if body["prompt_id"] != job.TaskID || body["client_id"] != "gengate" {
		t.Errorf("prompt_id %v client_id %v", body["prompt_id"], body["client_id"])
	}
	if in := node(t, f, "6"); in["width"] != 1360.0 || in["height"] != 768.0 || in["batch_size"] != 2.0 {
		t.Errorf("latent %v, want 1360x768 x2", in)
	}
	if in := node(t, f, "7"); in["seed"] != 42.0 || in["steps"] != 4.0 {
		t.Errorf("sampler %v", in)
	}
	if in := node(t, f, "4"); in["text"] != "a red fox" {
		t.Errorf("prompt node %v", in)
	}
	if in := node(t, f, "9"); in["filename_prefix"] != "gengate/"+job.TaskID {
		t.Errorf("save node %v", in)
	}
}

func TestVideoSuccess(t *testing.T) {
	f, e := newEngine(t)
	job := videoJob("9:16", map[string]any{"duration": int64(5), "resolution": "720p", "generateAudio": false})
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
	enginetest.ReadOutputs(t, p.Outputs)
	if len(p.Outputs) != 1 || p.Outputs[0].ContentType != "video/mp4" || p.Outputs[0].Ext != "mp4" || string(p.Outputs[0].Data[4:8]) != "ftyp" {
		t.Fatalf("outputs %+v", p.Outputs)
	}
	if in := node(t, f, "7"); in["width"] != 720.0 || in["height"] != 1280.0 || in["length"] != 81.0 {
		t.Errorf("latent %v, want 720x1280, 81 frames", in)
	}
	if in := node(t, f, "10"); in["fps"] != 16.0 {
		t.Errorf("create video %v", in)
	}
	if in := node(t, f, "11"); in["format"] != "mp4" {
		t.Errorf("save video %v", in)
	}
	if seed := node(t, f, "8")["seed"]; seed != float64(seedFor(job)) {
		t.Errorf("seed %v, want the task's %d", seed, seedFor(job))
	}
}

func TestConformance(t *testing.T) {
	_, e := newEngine(t)
	cases := enginetest.DefaultCases()
	cases[0].Job.Route = route("flux-schnell")
	cases[1].Job.Route = route("stable-diffusion-3-5-large")
	cases[2].Job.Route = route("wan-2-5-t2v")
	z := imageJob("z-image-turbo", "9:16", "png", 3)
	cases = append(cases, enginetest.Case{Name: "z-image 9:16 x3", Job: z}, enginetest.Case{Name: "qwen edit", Job: editJob()})
	enginetest.Run(t, e, cases, func(time.Duration) {})
}

// lookupsFailAfterPost is a transport whose reads fail once a POST /prompt
// has been sent, so the engine cannot tell whether a lost submit arrived.
type lookupsFailAfterPost struct{ posted atomic.Bool }

func (l *lookupsFailAfterPost) RoundTrip(r *http.Request) (*http.Response, error) {
	if l.posted.Load() && r.Method == http.MethodGet {
		return nil, errors.New("dial tcp: connection refused")
	}
	if r.Method == http.MethodPost && r.URL.Path == "/prompt" {
		l.posted.Store(true)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestResetAfterSubmitIsAmbiguous(t *testing.T) {
	isAmbiguous := func(t *testing.T, err error) {
		t.Helper()
		var ue *gengate.UpstreamError
		var ge *gengate.Error
		if err == nil || errors.As(err, &ue) || errors.As(err, &ge) {
			t.Fatalf("error %v is not ambiguous", err)
		}
	}
	t.Run("queued, look-up fails", func(t *testing.T) {
		f := comfyuitest.New(t)
		e := New(Config{APIKey: f.Key(), BaseURL: f.URL(), HTTP: &http.Client{Transport: &lookupsFailAfterPost{}}})
		f.ResetNextSubmit()
		_, err := e.Submit(ctx, imageJob("flux-schnell", "1:1", "png", 1))
		isAmbiguous(t, err)
		if f.Submissions() != 1 {
			t.Fatalf("%d submissions, want 1", f.Submissions())
		}
	})
	t.Run("lost before queuing", func(t *testing.T) {
		f, e := newEngine(t)
		f.DropNextSubmit()
		_, err := e.Submit(ctx, imageJob("flux-schnell", "1:1", "png", 1))
		isAmbiguous(t, err)
		if f.Submissions() != 0 {
			t.Fatalf("%d submissions, want 0", f.Submissions())
		}
	})
}

func TestSubmitAgainAttaches(t *testing.T) {
	f, e := newEngine(t)
	f.Hold()
	job := imageJob("z-image-turbo", "1:1", "png", 1)
	for range 3 {
		p, err := e.Submit(ctx, job)
		if err != nil || p.UpstreamID != job.TaskID {
			t.Fatalf("submit: %+v %v", p, err)
		}
	}
	if f.Submissions() != 1 {
		t.Fatalf("%d submissions, want 1", f.Submissions())
	}
	f.Release()
	if _, err := e.Check(ctx, job, job.TaskID); err != nil {
		t.Fatal(err)
	}
	// Finished and in the history: a Submit still attaches.
	if p, err := e.Submit(ctx, job); err != nil || p.UpstreamID != job.TaskID || f.Submissions() != 1 {
		t.Fatalf("submit after finish: %+v %v, %d submissions", p, err, f.Submissions())
	}
}

func TestHoldReleaseAndCancel(t *testing.T) {
	f, e := newEngine(t)
	f.Hold()
	a, b, c := imageJob("flux-schnell", "1:1", "png", 1), imageJob("flux-schnell", "1:1", "png", 1), imageJob("flux-schnell", "1:1", "png", 1)
	for _, j := range []gengate.Job{a, b, c} {
		if _, err := e.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 { // a runs, held
		if p, err := e.Check(ctx, a, a.TaskID); err != nil || len(p.Outputs) != 0 || p.RetryAfter != imageDelay {
			t.Fatalf("held check: %+v %v", p, err)
		}
	}
	if _, err := e.Check(ctx, b, b.TaskID); err != nil { // b runs too
		t.Fatal(err)
	}
	// c waits behind two running prompts: a longer delay.
	st, err := e.queued(ctx, c.TaskID, false)
	if err != nil || !st.pending || delay(c, st) != 3*imageDelay {
		t.Fatalf("c: %+v %v", st, err)
	}
	if err := e.Cancel(ctx, c, c.TaskID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Check(ctx, c, c.TaskID); upstreamErr(t, err).Kind != gengate.Failed {
		t.Fatalf("deleted prompt: %v", err)
	}
	if err := e.Cancel(ctx, b, b.TaskID); err != nil {
		t.Fatal(err)
	}
	_, err = e.Check(ctx, b, b.TaskID)
	if ue := upstreamErr(t, err); ue.Kind != gengate.Failed || !strings.Contains(ue.Message, "interrupted") {
		t.Fatalf("interrupted prompt: %+v", ue)
	}
	if f.Deletes() != 1 || f.Interrupts() != 1 {
		t.Fatalf("%d deletes, %d interrupts", f.Deletes(), f.Interrupts())
	}
	f.Release()
	if p, err := e.Check(ctx, a, a.TaskID); err != nil || len(p.Outputs) != 1 {
		t.Fatalf("after release: %+v %v", p, err)
	}
	if err := e.Cancel(ctx, a, a.TaskID); err != nil { // finished: nothing to do
		t.Fatal(err)
	}
}

func TestLostPrompt(t *testing.T) {
	f, e := newEngine(t)
	f.Hold()
	job := imageJob("flux-schnell", "1:1", "png", 1)
	if _, err := e.Submit(ctx, job); err != nil {
		t.Fatal(err)
	}
	f.Restart()
	_, err := e.Check(ctx, job, job.TaskID)
	if ue := upstreamErr(t, err); ue.Kind != gengate.Failed || !strings.Contains(ue.Message, "restarted") {
		t.Fatalf("got %+v", ue)
	}
}

func TestInputUpload(t *testing.T) {
	f, e := newEngine(t)
	job := editJob()
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	name := "gengate-" + job.TaskID + "-image.png"
	if got := f.Upload(name); !bytes.Equal(got, pngInput.Data) {
		t.Fatalf("upload %s: %d bytes, want the input's %d", name, len(got), len(pngInput.Data))
	}
	if in := node(t, f, "4"); in["image"] != name {
		t.Errorf("LoadImage %v, want %s", in, name)
	}
	if in := node(t, f, "6"); in["prompt"] != "make it night" {
		t.Errorf("edit prompt %v", in)
	}
}

func TestRouteParams(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob("flux-schnell", "1:1", "png", 1)
	job.Route.Params = map[string]any{"1.unet_name": "flux1-schnell-fp8.safetensors", "7.steps": 6}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if node(t, f, "1")["unet_name"] != "flux1-schnell-fp8.safetensors" || node(t, f, "7")["steps"] != 6.0 {
		t.Errorf("overrides not applied: %v %v", node(t, f, "1"), node(t, f, "7"))
	}
	job.Route.Params = map[string]any{"42.steps": 6}
	if err := e.Validate(job); err == nil {
		t.Fatal("a param naming no node was accepted")
	}
}

func TestValidate(t *testing.T) {
	e := New(Config{})
	withOpts := enginetest.WithOptions
	named := enginetest.WithInputNames
	noAspect := func(j gengate.Job) gengate.Job { j.AspectRatio = ""; return j }
	cases := []struct {
		name  string
		job   gengate.Job
		field string // "" accepted
	}{
		{"flux 21:9 x4", imageJob("flux-schnell", "21:9", "png", 4), ""},
		{"flux 5 outputs", imageJob("flux-schnell", "1:1", "png", 5), "numOutputs"},
		{"flux webp", imageJob("flux-schnell", "1:1", "webp", 1), "outputFormat"},
		{"flux jpeg", imageJob("flux-schnell", "4:5", "jpeg", 1), ""},
		{"flux 8:1", imageJob("flux-schnell", "8:1", "png", 1), "aspectRatio"},
		{"flux seed", withOpts(imageJob("flux-schnell", "1:1", "png", 1), "seed", int64(7)), ""},
		{"flux quality", withOpts(imageJob("flux-schnell", "1:1", "png", 1), "quality", "high"), "quality"},
		{"flux resolution", withOpts(imageJob("flux-schnell", "1:1", "png", 1), "resolution", "2K"), "resolution"},
		{"flux image input", named(imageJob("flux-schnell", "1:1", "png", 1), "imageUrl"), "imageUrl"},
		{"sd3.5 9:21", imageJob("stable-diffusion-3-5-large", "9:21", "jpeg", 2), ""},
		{"z-image webp", imageJob("z-image-turbo", "1:1", "webp", 1), "outputFormat"},
		{"qwen edit", named(noAspect(imageJob("qwen-image-edit", "", "jpeg", 1)), "image"), ""},
		{"qwen edit without image", noAspect(imageJob("qwen-image-edit", "", "png", 1)), "image"},
		{"qwen edit 2 outputs", named(imageJob("qwen-image-edit", "", "png", 2), "image"), "numOutputs"},
		{"qwen edit aspect", named(imageJob("qwen-image-edit", "16:9", "png", 1), "image"), "aspectRatio"},
		{"wan 16:9 720p 5 s", withOpts(videoJob("16:9", nil), "duration", int64(5), "resolution", "720p"), ""},
		{"wan 1:1 480p", withOpts(videoJob("1:1", nil), "duration", int64(3), "resolution", "480p"), ""},
		{"wan 10 s", withOpts(videoJob("16:9", nil), "duration", int64(10)), "duration"},
		{"wan 1080p", withOpts(videoJob("16:9", nil), "resolution", "1080p"), "resolution"},
		{"wan 4:3", withOpts(videoJob("4:3", nil), "duration", int64(5)), "aspectRatio"},
		{"wan audio", withOpts(videoJob("16:9", nil), "generateAudio", true), "generateAudio"},
		{"wan no audio", withOpts(videoJob("16:9", nil), "generateAudio", false), ""},
		{"wan webm", func() gengate.Job { j := videoJob("16:9", nil); j.OutputFormat = "webm"; return j }(), "outputFormat"},
		{"wan first frame", named(videoJob("16:9", nil), "imageUrl"), "imageUrl"},
		{"image job on video template", func() gengate.Job { j := imageJob("wan-2-5-t2v", "16:9", "", 1); return j }(), "modelId"},
		{"unknown template", imageJob("my-own-workflow", "1:1", "png", 1), "modelId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.WantValidate(t, e.Validate(tc.job), tc.field)
		})
	}
}

// TestCatalogDefaults checks that each template accepts the default
// settings of the catalog model it is named after.
func TestCatalogDefaults(t *testing.T) {
	cat, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	e := New(Config{})
	for name := range templates {
		m, ok := cat.Model(name)
		if !ok {
			t.Errorf("template %s names no catalog model", name)
			continue
		}
		job := gengate.Job{TaskID: "x", Route: route(name), ModelID: m.ID, Type: m.Type, NumOutputs: 1, Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
		for _, f := range m.Inputs {
			if f.Name == "prompt" {
				job.Prompt = "x"
			} else {
				job.Inputs[f.Name] = gengate.Input{}
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
				if v, ok := f.Default.(float64); ok {
					job.Options[f.Name] = int64(v)
				} else if f.Default != nil {
					job.Options[f.Name] = f.Default
				}
			}
		}
		if err := e.Validate(job); err != nil {
			t.Errorf("%s with defaults: %v", name, err)
		}
	}
}

var placeholder = regexp.MustCompile(`"\{\{(\w+)\}\}"`)

// TestTemplates checks each template against its table entry: it uses
// only known placeholders, and those its spec implies.
func TestTemplates(t *testing.T) {
	known := map[string]bool{"prompt": true, "seed": true, "width": true, "height": true, "batch": true, "length": true, "fps": true, "prefix": true, "image": true}
	for name, s := range templates {
		data, err := templateFS.ReadFile("workflows/" + name + ".json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := loadTemplate(name); err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, m := range placeholder.FindAllStringSubmatch(string(data), -1) {
			if !known[m[1]] {
				t.Errorf("%s: unknown placeholder %s", name, m[1])
			}
			used[m[1]] = true
		}
		want := map[string]bool{"prompt": true, "seed": true, "prefix": true,
			"batch": s.maxOutputs > 1, "length": s.kind == "video", "fps": s.kind == "video",
			"width": len(s.inputs) == 0, "height": len(s.inputs) == 0, "image": len(s.inputs) > 0}
		for ph, w := range want {
			if used[ph] != w {
				t.Errorf("%s: placeholder %s used %v, want %v", name, ph, used[ph], w)
			}
		}
	}
	entries, _ := templateFS.ReadDir("workflows")
	if len(entries) != len(templates) {
		t.Errorf("%d template files for %d table entries", len(entries), len(templates))
	}
}

func TestImageSize(t *testing.T) {
	for _, aspect := range []string{"1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3", "4:5", "5:4", "21:9", "9:21"} {
		w, h, ok := imageSize(aspect)
		ws, hs, _ := strings.Cut(aspect, ":")
		a, _ := strconv.Atoi(ws)
		b, _ := strconv.Atoi(hs)
		r := float64(a) / float64(b)
		got := float64(w) / float64(h)
		if !ok || w%16 != 0 || h%16 != 0 || got < r*0.98 || got > r*1.02 || w*h < 900_000 || w*h > 1_200_000 {
			t.Errorf("%s: %dx%d", aspect, w, h)
		}
	}
	if w, h, _ := imageSize("1:1"); w != 1024 || h != 1024 {
		t.Errorf("1:1 is %dx%d", w, h)
	}
}

func TestExplain(t *testing.T) {
	cases := []struct {
		name, body, code, text string
	}{
		{"missing model file", `{"error":{"type":"prompt_outputs_failed_validation","message":"Prompt outputs failed validation","details":"","extra_info":{}},
			"node_errors":{"1":{"errors":[{"type":"value_not_in_list","message":"Value not in list","details":"unet_name: 'x.safetensors' not in []","extra_info":{"input_name":"unet_name"}}],"dependent_outputs":["9"],"class_type":"UNETLoader"}}}`,
			gengate.CodeUpstream, "unet_name"},
		{"missing node type", `{"error":{"type":"invalid_prompt","message":"Cannot execute because node Foo does not exist.","details":"Node ID '#3'","extra_info":{}},"node_errors":{}}`,
			gengate.CodeUpstream, "Foo does not exist"},
		{"bad input image", `{"error":{"type":"prompt_outputs_failed_validation","message":"Prompt outputs failed validation","details":"","extra_info":{}},
			"node_errors":{"4":{"errors":[{"type":"custom_validation_failed","message":"Custom validation failed for node","details":"image - Invalid image file: a.png","extra_info":{"input_name":"image"}}],"dependent_outputs":[],"class_type":"LoadImage"}}}`,
			gengate.CodeRejectedInput, "Invalid image file"},
		{"old server", `{"error":"no prompt","node_errors":[]}`, gengate.CodeRejectedInput, "no prompt"},
	}
	for _, tc := range cases {
		code, msg := explain(400, []byte(tc.body))
		if code != tc.code || !strings.Contains(msg, tc.text) {
			t.Errorf("%s: %s %q", tc.name, code, msg)
		}
	}
}

func TestSecretsNeverShown(t *testing.T) {
	const key = "comfy-superSecretToken42"
	// A proxy that echoes the credentials it got in every answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch {
		case r.URL.Path == "/queue":
			io.WriteString(w, `{"queue_running":[],"queue_pending":[]}`)
		case r.URL.Path == "/prompt":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"type":"invalid_prompt","message":"token `+auth+` may not queue","details":"","extra_info":{}},"node_errors":{}}`)
		default:
			io.WriteString(w, `{"t1":{"outputs":{},"status":{"status_str":"error","completed":false,"messages":[["execution_error",{"node_id":"7","node_type":"KSampler","exception_message":"worker saw `+key+` and crashed"}]]}}}`)
		}
	}))
	defer srv.Close()
	e := New(Config{APIKey: key, BaseURL: srv.URL})
	job := imageJob("flux-schnell", "1:1", "png", 1)
	job.TaskID = "t2"
	_, err1 := e.Submit(ctx, job)
	job.TaskID = "t1"
	_, err2 := e.Check(ctx, job, "t1")
	for _, err := range []error{err1, err2} {
		if err == nil || strings.Contains(err.Error(), key) {
			t.Fatalf("error %v shows the key", err)
		}
	}
}

func TestMalformedIDs(t *testing.T) {
	_, e := newEngine(t)
	job := imageJob("flux-schnell", "1:1", "png", 1)
	var ge *gengate.Error
	if _, err := e.Check(ctx, job, "../../prompt"); !errors.As(err, &ge) || ge.Code != gengate.EFailed {
		t.Fatalf("check: %v", err)
	}
	job.TaskID = ""
	if _, err := e.Submit(ctx, job); !errors.As(err, &ge) || ge.Code != gengate.EInvalid {
		t.Fatalf("submit: %v", err)
	}
}

func TestUpstream(t *testing.T) {
	video := videoJob("16:9", map[string]any{"duration": int64(4), "resolution": "480p"})
	enginetest.Upstream(t, enginetest.UpstreamCase{
		NewFake:   func(t *testing.T) enginetest.Fake { return comfyuitest.New(t) },
		NewEngine: func(key, url string) gengate.Engine { return New(Config{APIKey: key, BaseURL: url}) },
		Job:       imageJob("flux-schnell", "1:1", "png", 1),
		Refusals: []enginetest.Answer{
			{Status: 400, Code: gengate.CodeRejectedInput},
			{Status: 403, Code: gengate.CodeUpstream},
		},
		WrongKey:    "comfy-wrong-token-77aa",
		NoKeyStatus: http.StatusUnauthorized,
		// The prompt id is the task id: a reset submit is looked up by it.
		ResetResolves:   true,
		UpstreamID:      func(j gengate.Job) string { return j.TaskID },
		FailureText:     map[string]string{"error": "CUDA out of memory", "content_policy": "NSFW"},
		FreshJob:        &video,
		FreshRetryAfter: videoDelay,
		HoldCancel:      true,
	})
}

// TestVideo480p checks the latent of a 4 s 480p 16:9 video.
func TestVideo480p(t *testing.T) {
	f, e := newEngine(t)
	job := videoJob("16:9", map[string]any{"duration": int64(4), "resolution": "480p"})
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if in := node(t, f, "7"); in["width"] != 832.0 || in["length"] != 65.0 {
		t.Errorf("latent %v, want 832 wide, 65 frames", in)
	}
}

// TestCheckRegistry: a workflow that uses a node type the server lacks
// (GET /object_info/{class} answers {}) is unknown, naming the type; the
// others, and those sharing none of its missing types, are live; an
// unknown template is unknown; a server that does not answer is no answer.
func TestCheckRegistry(t *testing.T) {
	s, e := newEngine(t)
	s.RemoveNode("SaveVideo")
	got, err := e.CheckRegistry(ctx, []string{"flux-schnell", "wan-2-5-t2v", "no-such-workflow"})
	if err != nil {
		t.Fatal(err)
	}
	for id, st := range map[string]string{"flux-schnell": gengate.RouteLive, "wan-2-5-t2v": gengate.RouteUnknown, "no-such-workflow": gengate.RouteUnknown} {
		if got[id].State != st {
			t.Errorf("%s: %+v, want %s", id, got[id], st)
		}
	}
	if r := got["wan-2-5-t2v"].Reason; !strings.Contains(r, "SaveVideo") {
		t.Errorf("reason %q does not name the missing node type", r)
	}
	closed := New(Config{BaseURL: "http://127.0.0.1:1"})
	if _, err := closed.CheckRegistry(ctx, []string{"flux-schnell"}); err == nil {
		t.Error("an unreachable server gave an answer")
	}
}
