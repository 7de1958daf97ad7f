package fal

import (
	"slices"
	"strings"
	"testing"

	"github.com/gengate/gengate"
)

// catalogJob builds a job for model m on route r with every option at its
// default and every input present, with only names as before fetching.
func catalogJob(m *gengate.Model, r gengate.Route) gengate.Job {
	job := gengate.Job{Route: r, ModelID: m.ID, Type: m.Type, NumOutputs: 1, Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
	for _, f := range m.Inputs {
		switch {
		case f.Kind == "text":
			job.Prompt = "x"
		case f.Required:
			job.Inputs[f.Name] = gengate.Input{}
		}
	}
	for _, f := range m.Options {
		if f.Default == nil {
			continue
		}
		switch f.Name {
		case "aspectRatio":
			job.AspectRatio = f.Default.(string)
		case "outputFormat":
			job.OutputFormat = f.Default.(string)
		case "numOutputs":
			n, _ := toInt(f.Default)
			job.NumOutputs = int(n)
		default:
			job.Options[f.Name] = f.Default
		}
	}
	return job
}

// TestCatalogRoutes checks that the table knows every fal route of the
// catalog and that each takes its model's defaults, and every declared
// value where the endpoint documents it.
func TestCatalogRoutes(t *testing.T) {
	cat, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range cat.Models() {
		for _, r := range m.Routes {
			if r.Engine != "fal" {
				continue
			}
			n++
			if _, ok := models[r.Upstream]; !ok {
				t.Errorf("%s: route %s is not in the table", m.ID, r.Upstream)
				continue
			}
			job := catalogJob(m, r)
			for _, name := range models[r.Upstream].need {
				job.Inputs[name] = gengate.Input{} // a route for image-to-X
			}
			if err := (&Engine{}).Validate(job); err != nil {
				t.Errorf("%s on %s with defaults: %v", m.ID, r.Upstream, err)
			}
			for _, f := range m.Inputs {
				if f.Kind != "text" {
					job.Inputs[f.Name] = gengate.Input{} // every variant the model's inputs pick
				}
			}
			if err := (&Engine{}).Validate(job); err != nil {
				t.Errorf("%s on %s with every input: %v", m.ID, r.Upstream, err)
			}
		}
	}
	if n < 35 { // 37 since six endpoints fal no longer lists left the defaults
		t.Errorf("only %d fal routes checked", n)
	}
}

func TestValidate(t *testing.T) {
	img := map[string]gengate.Input{"imageUrl": {}}
	cases := []struct {
		name   string
		route  string
		typ    string
		ar     string
		n      int
		format string
		opts   map[string]any
		inputs map[string]gengate.Input
		bad    []string // fields refused; nil accepts
	}{
		{"flux 4 outputs", "fal-ai/flux/dev", "image", "21:9", 4, "jpeg", nil, nil, nil},
		{"flux 5 outputs", "fal-ai/flux/dev", "image", "1:1", 5, "png", nil, nil, []string{"numOutputs"}},
		{"flux webp", "fal-ai/flux/dev", "image", "1:1", 1, "webp", nil, nil, []string{"outputFormat"}},
		{"nano-banana 9:21", "fal-ai/nano-banana", "image", "9:21", 1, "png", nil, nil, []string{"aspectRatio"}},
		{"nano-banana seed", "fal-ai/nano-banana", "image", "1:1", 1, "png", map[string]any{"seed": int64(1)}, nil, nil},
		{"nano-banana-pro 4K", "fal-ai/nano-banana-pro", "image", "1:1", 1, "png", map[string]any{"resolution": "4K"}, nil, nil},
		{"bria remove webp", "fal-ai/bria/background/remove", "image", "", 1, "webp", nil, img, []string{"outputFormat"}},
		{"birefnet webp", "fal-ai/birefnet/v2", "image", "", 1, "webp", nil, img, nil},
		{"esrgan 3x", "fal-ai/esrgan", "image", "", 1, "png", map[string]any{"scale": int64(3)}, img, []string{"scale"}},
		{"kling 7 s", "fal-ai/kling-video/v2.1/master/text-to-video", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(7)}, nil, []string{"duration"}},
		{"kling 4:3", "fal-ai/kling-video/v2.1/master/text-to-video", "video", "4:3", 1, "mp4", map[string]any{"duration": int64(5)}, nil, []string{"aspectRatio"}},
		{"kling standard without image", "fal-ai/kling-video/v2.1/standard/image-to-video", "video", "", 1, "mp4", map[string]any{"duration": int64(5)}, nil, []string{"imageUrl"}},
		{"veo 3 at 4k", "fal-ai/veo3", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(8), "resolution": "4k"}, nil, []string{"resolution"}},
		{"veo 3.1 at 4k", "fal-ai/veo3.1", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(8), "resolution": "4k"}, nil, nil},
		{"veo 3.1 last frame only", "fal-ai/veo3.1", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(8)}, map[string]gengate.Input{"inputs.lastFrameUrl": {}}, []string{"imageUrl"}},
		{"pixverse 1080p 8 s", "fal-ai/pixverse/v5/text-to-video", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(8), "resolution": "1080p"}, nil, []string{"duration"}},
		{"pixverse 1080p 5 s", "fal-ai/pixverse/v5/text-to-video", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(5), "resolution": "1080p"}, nil, nil},
		{"hailuo 1080p 10 s", "fal-ai/minimax/hailuo-2.3/standard/text-to-video", "video", "", 1, "mp4", map[string]any{"duration": int64(10), "resolution": "1080p"}, nil, []string{"duration"}},
		{"sora 1:1 and 5 s", "fal-ai/sora-2/text-to-video", "video", "1:1", 1, "mp4", map[string]any{"duration": int64(5)}, nil, []string{"aspectRatio", "duration"}},
		{"sora 16 s", "fal-ai/sora-2/text-to-video", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(16)}, nil, nil},
		{"seedream 5 lite 4K", "fal-ai/bytedance/seedream/v5/lite/text-to-image", "image", "1:1", 1, "png", map[string]any{"resolution": "4K"}, nil, []string{"resolution"}},
		{"seedream 5 lite seed", "fal-ai/bytedance/seedream/v5/lite/text-to-image", "image", "1:1", 1, "png", map[string]any{"seed": int64(3)}, nil, []string{"seed"}},
		{"imagen webp", "fal-ai/imagen4/preview/fast", "image", "1:1", 1, "webp", nil, nil, nil},
		{"veo 3.1 first-last frame 4k", "fal-ai/veo3.1", "video", "16:9", 1, "mp4", map[string]any{"duration": int64(8), "resolution": "4k"}, map[string]gengate.Input{"imageUrl": {}, "inputs.lastFrameUrl": {}}, nil},
		{"quality on flux", "fal-ai/flux/dev", "image", "1:1", 1, "png", map[string]any{"quality": "high"}, nil, []string{"quality"}},
		{"unknown endpoint", "someone/custom-model", "image", "7:5", 3, "webp", map[string]any{"quality": "high", "seed": int64(2)}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			if opts == nil {
				opts = map[string]any{}
			}
			job := gengate.Job{Route: gengate.Route{Engine: "fal", Upstream: c.route}, Type: c.typ, Prompt: "x",
				AspectRatio: c.ar, NumOutputs: c.n, OutputFormat: c.format, Options: opts, Inputs: c.inputs}
			if models[c.route].noPrompt {
				job.Prompt = ""
			}
			err := New(Config{}).Validate(job)
			if c.bad == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			ge, ok := err.(*gengate.Error)
			if !ok || ge.Code != gengate.EUnsupportedOption {
				t.Fatalf("error %v, want %s", err, gengate.EUnsupportedOption)
			}
			var fields []string
			for _, f := range ge.Fields {
				if f.Code != gengate.FieldUnsupported {
					t.Errorf("field %s code %s", f.Field, f.Code)
				}
				fields = append(fields, f.Field)
			}
			if !slices.Equal(fields, c.bad) {
				t.Errorf("fields %v, want %v (%v)", fields, c.bad, err)
			}
		})
	}
}

func TestHailuoTiers(t *testing.T) {
	job := gengate.Job{Route: gengate.Route{Upstream: "fal-ai/minimax/hailuo-2.3/standard/text-to-video"}, Type: "video", Prompt: "x",
		NumOutputs: 1, OutputFormat: "mp4", Options: map[string]any{"duration": int64(6), "resolution": "1080p"},
		Inputs: map[string]gengate.Input{"imageUrl": {Data: []byte("x")}}}
	req, err := plan(job)
	if err != nil {
		t.Fatal(err)
	}
	// The pro tier makes 6 s only and its schema has no duration field.
	if _, sent := req.body["duration"]; req.endpoint != "fal-ai/minimax/hailuo-2.3/pro/image-to-video" || sent {
		t.Errorf("endpoint %s body %v", req.endpoint, req.body)
	}
	if _, ok := req.body["resolution"]; ok || !strings.HasPrefix(req.body["image_url"].(string), "data:") {
		t.Errorf("body %v", req.body)
	}
}

func TestRouteParams(t *testing.T) {
	job := imageJob("fal-ai/flux/dev", "1:1", 1, "png")
	job.Route.Params = map[string]any{"num_inference_steps": 40, "enable_safety_checker": false}
	req, err := plan(job)
	if err != nil {
		t.Fatal(err)
	}
	if req.body["num_inference_steps"] != 40 || req.body["enable_safety_checker"] != false {
		t.Errorf("body %v", req.body)
	}
}
