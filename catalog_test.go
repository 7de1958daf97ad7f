package gengate

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
)

// specModel is one row of the spec's model catalog (section 2.5).
type specModel struct {
	id      string
	typ     string
	credits int  // the current listing's default credits
	varies  bool // the listing says "varies"
	// required is the spec's Required column; nil where it says "-".
	required []string
}

// specModels is copied from the spec, section 2.5: the 25 image models of
// the current listing, face-swap from the older listing, and the 16 video
// models (for which the spec says prompt is required).
var specModels = []specModel{
	{"flux", "image", 4, true, []string{"prompt"}},
	{"flux-schnell", "image", 2, true, []string{"prompt"}},
	{"remove-bg", "image", 0, false, []string{"imageUrl"}},
	{"flux-2-pro", "image", 15, true, []string{"prompt"}},
	{"flux-kontext-pro", "image", 4, false, []string{"prompt"}},
	{"nano-banana", "image", 4, false, []string{"prompt"}},
	{"nano-banana-pro", "image", 15, false, []string{"prompt"}},
	{"nano-banana-2", "image", 7, false, nil},
	{"gpt-image-2", "image", 25, true, nil},
	{"gpt-image-2-5-flare", "image", 50, true, nil},
	{"gpt-image-2-5-sunburst", "image", 50, true, nil},
	{"z-image-turbo", "image", 1, false, []string{"prompt"}},
	{"imagen-4-ultra", "image", 6, false, []string{"prompt"}},
	{"image-4-fast", "image", 3, false, []string{"prompt"}},
	{"ideogram-v3-turbo", "image", 3, false, []string{"prompt"}},
	{"stable-diffusion-3-5-large", "image", 7, true, []string{"prompt"}},
	{"seedream-4-5", "image", 4, false, []string{"prompt"}},
	{"seedream-5-lite", "image", 4, false, nil},
	{"object-remover", "image", 3, false, []string{"image", "mask"}},
	{"image-upscaler", "image", 1, false, []string{"imageUrl", "scale"}},
	{"photo-restoration", "image", 4, false, []string{"imageUrl"}},
	{"qwen-image-edit", "image", 3, false, []string{"image", "prompt"}},
	{"qwen-image-edit-plus", "image", 3, false, []string{"image", "prompt"}},
	{"virtual-try-on", "image", 3, false, []string{"clothImage", "personImage"}},
	{"ai-background-generator", "image", 5, false, []string{"imageUrl"}},
	{"face-swap", "image", 3, false, []string{"swapImage", "inputImage"}}, // older listing

	{"openai-sora-2", "video", 50, true, []string{"prompt"}},
	{"google-veo-3-1", "video", 240, true, []string{"prompt"}},
	{"kling-2-1", "video", 9, false, []string{"prompt"}},
	{"minimax-hailuo-2-3", "video", 60, true, []string{"prompt"}},
	{"minimax-hailuo-2-3-fast", "video", 9, false, []string{"prompt"}},
	{"bytedance-seedance-1-pro-fast", "video", 40, true, []string{"prompt"}},
	{"google-veo-3-fast", "video", 110, true, []string{"prompt"}},
	{"google-veo-3", "video", 250, true, []string{"prompt"}},
	{"google-veo-3-1-fast", "video", 120, true, []string{"prompt"}},
	{"runway-gen4-turbo", "video", 30, true, []string{"prompt"}},
	{"pixverse-5", "video", 40, true, []string{"prompt"}},
	{"wan-2-5-i2v", "video", 60, true, []string{"prompt"}},
	{"wan-2-6-i2v", "video", 80, true, []string{"prompt"}},
	{"wan-2-5-t2v", "video", 9, false, []string{"prompt"}},
	{"wan-2-6-t2v", "video", 29, true, []string{"prompt"}},
	{"kling-v2-6-motion-control", "video", 70, true, []string{"prompt"}},
}

// gatewayRequired lists inputs gengate requires beyond the spec's column,
// each for a reason given in docs/models.md.
var gatewayRequired = map[string][]string{
	// The spec's column is "-": these are prompt-driven models.
	"nano-banana-2":          {"prompt"},
	"gpt-image-2":            {"prompt"},
	"gpt-image-2-5-flare":    {"prompt"},
	"gpt-image-2-5-sunburst": {"prompt"},
	"seedream-5-lite":        {"prompt"},
	// Image-to-video models animate a given first frame.
	"wan-2-5-i2v":             {"imageUrl"},
	"wan-2-6-i2v":             {"imageUrl"},
	"runway-gen4-turbo":       {"imageUrl"},
	"minimax-hailuo-2-3-fast": {"imageUrl"},
	// Motion control moves the character in imageUrl like the reference video.
	"kling-v2-6-motion-control": {"imageUrl", "inputs.videoUrl"},
}

func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatalf("DefaultCatalog: %v", err)
	}
	return c
}

func mustModel(t *testing.T, c *Catalog, id string) *Model {
	t.Helper()
	m, ok := c.Model(id)
	if !ok {
		t.Fatalf("model %q not in catalog", id)
	}
	return m
}

func TestCatalogListsSpecModels(t *testing.T) {
	c := testCatalog(t)
	count := map[string]int{}
	legacy := 0
	for _, m := range c.Models() {
		count[m.Type]++
		if m.Legacy {
			legacy++
		}
	}
	if count["image"] != 25+1 || count["video"] != 16 || legacy != 1 {
		t.Errorf("catalog has %d image (want 25 + face-swap), %d video (want 16), %d legacy (want 1)",
			count["image"], count["video"], legacy)
	}
	if len(c.Models()) != len(specModels) {
		t.Errorf("catalog has %d models, the spec lists %d", len(c.Models()), len(specModels))
	}
	for _, s := range specModels {
		t.Run(s.id, func(t *testing.T) {
			m, ok := c.Model(s.id)
			if !ok {
				t.Fatalf("missing")
			}
			if m.ID != s.id || m.Type != s.typ {
				t.Errorf("id, type = %q, %q; want %q, %q", m.ID, m.Type, s.id, s.typ)
			}
			if m.Credits != s.credits {
				t.Errorf("Credits = %d, want %d", m.Credits, s.credits)
			}
			if got := m.Quote(m.defaults()); got != s.credits {
				t.Errorf("Quote(defaults) = %d, want %d", got, s.credits)
			}
			if m.Legacy != (s.id == "face-swap") {
				t.Errorf("Legacy = %v", m.Legacy)
			}
			if m.Name == "" || m.Description == "" || m.LatencySeconds <= 0 || len(m.Routes) == 0 {
				t.Errorf("name %q, description %q, latency %d, %d routes: all must be set",
					m.Name, m.Description, m.LatencySeconds, len(m.Routes))
			}
		})
	}
}

func TestCatalogRequiredInputs(t *testing.T) {
	c := testCatalog(t)
	for _, s := range specModels {
		t.Run(s.id, func(t *testing.T) {
			m := mustModel(t, c, s.id)
			want := append(append([]string{}, s.required...), gatewayRequired[s.id]...)
			if m.Type == "video" {
				want = append(want, "prompt")
			}
			sort.Strings(want)
			want = slices.Compact(want)
			var got []string
			for _, f := range m.Fields() {
				if f.Required {
					got = append(got, f.Name)
				}
			}
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("required fields = %v, want %v", got, want)
			}
			if f, ok := m.Field("prompt"); ok && f.Kind != string(KindText) {
				t.Errorf("prompt kind %q", f.Kind)
			}
		})
	}
}

// editTools take input images only: no aspect ratio, no output count.
var editTools = []string{"remove-bg", "object-remover", "image-upscaler", "photo-restoration",
	"face-swap", "virtual-try-on", "ai-background-generator"}

func TestCatalogFields(t *testing.T) {
	c := testCatalog(t)
	for _, m := range c.Models() {
		t.Run(m.ID, func(t *testing.T) {
			for _, f := range m.Fields() {
				checkField(t, f)
			}
			ar, hasAR := m.Field("aspectRatio")
			if slices.Contains(editTools, m.ID) {
				if hasAR {
					t.Error("edit tool takes aspectRatio")
				}
				if _, ok := m.Field("numOutputs"); ok {
					t.Error("edit tool takes numOutputs")
				}
			}
			switch {
			case strings.HasPrefix(m.ID, "gpt-image-2"):
				// gpt-image-2 takes free-form sizes (openai-go): the three
				// standard ones and four more ratios; the 2.5 variants are
				// mapped the same way (docs/models.md).
				if !slices.Equal(valueKeys(ar.Values), []string{"1:1", "3:2", "2:3", "16:9", "9:16", "4:3", "3:4"}) {
					t.Errorf("aspectRatio values %v", ar.Values)
				}
			case strings.HasPrefix(m.ID, "gpt-image"):
				// Upstream sizes: 1024x1024, 1536x1024, 1024x1536 only.
				if !slices.Equal(valueKeys(ar.Values), []string{"1:1", "3:2", "2:3"}) {
					t.Errorf("aspectRatio values %v", ar.Values)
				}
			case m.ID == "openai-sora-2" || strings.HasPrefix(m.ID, "google-veo") || strings.HasPrefix(m.ID, "minimax-hailuo"):
				// Sora, Veo and Hailuo cannot make square videos.
				if hasAR && slices.Contains(valueKeys(ar.Values), "1:1") {
					t.Errorf("aspectRatio offers 1:1: %v", ar.Values)
				}
			case m.Type == "image" && hasAR:
				for _, r := range []string{"1:1", "16:9", "9:16"} {
					if !slices.Contains(valueKeys(ar.Values), r) {
						t.Errorf("aspectRatio lacks %s", r)
					}
				}
			}
			of, ok := m.Field("outputFormat")
			switch {
			case m.Type == "video":
				if !ok || !slices.Equal(valueKeys(of.Values), []string{"mp4"}) {
					t.Errorf("outputFormat = %+v, want [mp4]", of)
				}
			case m.ID == "remove-bg":
				if !slices.Equal(valueKeys(of.Values), []string{"png", "webp"}) {
					t.Errorf("outputFormat %v: remove-bg output needs transparency", of.Values)
				}
			}
			for i, r := range m.Routes {
				if r.Engine == "" || r.Upstream == "" {
					t.Errorf("route %d: %+v", i, r)
				}
				if r.Engine == "builtin" && i != 0 {
					t.Errorf("builtin route must come first")
				}
			}
			switch m.ID {
			case "remove-bg", "image-upscaler", "object-remover", "photo-restoration":
				if r := m.Routes[0]; r.Engine != "builtin" || r.Upstream != m.ID {
					t.Errorf("first route %+v, want builtin %s", m.Routes[0], m.ID)
				}
			}
		})
	}
}

// checkField checks that a field's default is one of its allowed values.
func checkField(t *testing.T, f Field) {
	t.Helper()
	if f.Required && f.Default != nil {
		t.Errorf("%s: required field with a default", f.Name)
	}
	if f.Default == nil {
		return
	}
	switch f.Kind {
	case KindEnum:
		if !allowed(f.Values, valueKey(f.Default)) {
			t.Errorf("%s: default %v not in %v", f.Name, f.Default, f.Values)
		}
	case KindInt, KindNumber:
		d, ok := toFloat(f.Default)
		if !ok || (f.Min != nil && d < *f.Min) || (f.Max != nil && d > *f.Max) {
			t.Errorf("%s: default %v outside [%v, %v]", f.Name, f.Default, f.Min, f.Max)
		}
		if len(f.Values) > 0 && !allowed(f.Values, valueKey(f.Default)) {
			t.Errorf("%s: default %v not in %v", f.Name, f.Default, f.Values)
		}
	case KindBool:
		if _, ok := f.Default.(bool); !ok {
			t.Errorf("%s: default %v is not a bool", f.Name, f.Default)
		}
	}
}

func valueKeys(values []any) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = valueKey(v)
	}
	return out
}

func TestCatalogPriceRules(t *testing.T) {
	c := testCatalog(t)
	for _, s := range specModels {
		t.Run(s.id, func(t *testing.T) {
			m := mustModel(t, c, s.id)
			if m.Varies() != s.varies {
				t.Fatalf("Varies() = %v, the spec says varies = %v", m.Varies(), s.varies)
			}
			if m.Pricing.Note == "" {
				t.Error("price rule has no note")
			}
			if !s.varies {
				if m.Pricing.Unit != PerRequest || len(m.Pricing.Multipliers) > 0 {
					t.Errorf("fixed-price model has rule %+v", m.Pricing)
				}
				if f, ok := m.Field("numOutputs"); ok && (f.Max == nil || *f.Max > 1) {
					t.Errorf("fixed-price model takes numOutputs up to %v", f.Max)
				}
				return
			}
			switch {
			case m.Type == "video":
				if m.Pricing.Unit != PerSecond || m.Pricing.DurationOption != "duration" {
					t.Errorf("video rule %+v, want per second of duration", m.Pricing)
				}
			default:
				f, ok := m.Field("numOutputs")
				if m.Pricing.Unit != PerOutput || !ok || f.Max == nil || *f.Max < 2 {
					t.Errorf("image rule %+v with numOutputs %+v, want per output", m.Pricing, f)
				}
			}
			// Every value an option allows has its own multiplier, so no
			// value is priced at 1x by omission.
			for name, table := range m.Pricing.Multipliers {
				f, _ := m.Field(name)
				values := valueKeys(f.Values)
				if f.Kind == KindBool {
					values = []string{"true", "false"}
				}
				if len(values) == 0 {
					t.Errorf("multiplier on %s, which has no list of values", name)
				}
				for _, v := range values {
					if x, ok := table[v]; !ok || x <= 0 {
						t.Errorf("multiplier %s=%s: %v, %v", name, v, x, ok)
					}
				}
				if len(table) != len(values) {
					t.Errorf("multiplier %s has entries for values the option does not allow: %v", name, table)
				}
			}
		})
	}
}

// TestQuoteVaries prices non-default settings of every "varies" model,
// through ParseRequest.
func TestQuoteVaries(t *testing.T) {
	c := testCatalog(t)
	cases := []struct {
		model string
		set   map[string]any
		want  int
	}{
		{"flux", map[string]any{"numOutputs": 3}, 12},
		{"flux-schnell", map[string]any{"numOutputs": 4}, 8},
		{"flux-2-pro", map[string]any{"numOutputs": 2}, 30},
		{"stable-diffusion-3-5-large", map[string]any{"numOutputs": 3}, 21},
		{"gpt-image-2", map[string]any{"quality": "high"}, 100},
		{"gpt-image-2", map[string]any{"quality": "low"}, 7}, // 6.25 rounds up
		{"gpt-image-2", map[string]any{"aspectRatio": "3:2", "numOutputs": 2}, 75},
		{"gpt-image-2", map[string]any{"aspectRatio": "2:3", "quality": "high", "numOutputs": 4}, 600},
		{"gpt-image-2-5-flare", map[string]any{"quality": "low"}, 13},
		{"gpt-image-2-5-sunburst", map[string]any{"quality": "high", "numOutputs": 2}, 400},
		{"openai-sora-2", map[string]any{"duration": 8}, 100},
		{"openai-sora-2", map[string]any{"duration": 12, "aspectRatio": "9:16"}, 150},
		{"google-veo-3-1", map[string]any{"generateAudio": false}, 120},
		{"google-veo-3-1", map[string]any{"resolution": "4k"}, 360},
		{"google-veo-3-1", map[string]any{"resolution": "1080p"}, 240},
		{"google-veo-3-1", map[string]any{"duration": 4, "resolution": "4k", "generateAudio": false}, 90},
		{"minimax-hailuo-2-3", map[string]any{"duration": 10}, 100},
		{"minimax-hailuo-2-3", map[string]any{"resolution": "1080p"}, 105},
		{"bytedance-seedance-1-pro-fast", map[string]any{"resolution": "480p"}, 8},
		{"bytedance-seedance-1-pro-fast", map[string]any{"duration": 12}, 96},
		{"bytedance-seedance-1-pro-fast", map[string]any{"duration": 10, "resolution": "720p"}, 36},
		{"google-veo-3-fast", map[string]any{"resolution": "1080p"}, 132},
		{"google-veo-3-fast", map[string]any{"duration": 4, "generateAudio": false}, 55},
		{"google-veo-3", map[string]any{"generateAudio": false}, 125},
		{"google-veo-3", map[string]any{"duration": 6}, 188}, // 187.5 rounds up
		{"google-veo-3-1-fast", map[string]any{"resolution": "4k"}, 360},
		{"google-veo-3-1-fast", map[string]any{"duration": 4, "resolution": "1080p"}, 72},
		{"runway-gen4-turbo", map[string]any{"duration": 10}, 60},
		{"pixverse-5", map[string]any{"duration": 8}, 80},
		{"pixverse-5", map[string]any{"resolution": "1080p"}, 80},
		{"pixverse-5", map[string]any{"resolution": "360p"}, 30},
		{"pixverse-5", map[string]any{"duration": 8, "resolution": "540p"}, 60},
		{"wan-2-5-i2v", map[string]any{"duration": 10}, 120},
		{"wan-2-5-i2v", map[string]any{"resolution": "1080p"}, 90},
		{"wan-2-5-i2v", map[string]any{"resolution": "480p"}, 30},
		{"wan-2-6-i2v", map[string]any{"duration": 15}, 240},
		{"wan-2-6-i2v", map[string]any{"resolution": "1080p"}, 120},
		{"wan-2-6-t2v", map[string]any{"duration": 10}, 58},
		{"wan-2-6-t2v", map[string]any{"resolution": "1080p"}, 44}, // 43.5 rounds up
		{"wan-2-6-t2v", map[string]any{"duration": 15, "resolution": "1080p"}, 131},
		{"kling-v2-6-motion-control", map[string]any{"duration": 10}, 140},
		{"kling-v2-6-motion-control", map[string]any{"duration": 3}, 42},
		// Settings that do not change the price.
		{"flux", map[string]any{"aspectRatio": "16:9", "outputFormat": "jpeg", "seed": 7}, 4},
		{"image-upscaler", map[string]any{"scale": 4}, 1},
		{"nano-banana-pro", map[string]any{"resolution": "2K"}, 15},
		{"google-veo-3-fast", map[string]any{"generateAudio": false}, 110},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		name := tc.model
		for _, k := range sortedKeys(tc.set) {
			b, _ := json.Marshal(tc.set[k])
			name += "/" + k + "=" + string(b)
		}
		t.Run(name, func(t *testing.T) {
			m := mustModel(t, c, tc.model)
			body := minimalBody(m)
			for k, v := range tc.set {
				body[k] = v
			}
			req, err := c.ParseRequest(mustJSON(t, body))
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			if got := m.Quote(req.Options); got != tc.want {
				t.Errorf("Quote = %d, want %d", got, tc.want)
			}
			if tc.want != m.Credits {
				covered[tc.model] = true
			}
		})
	}
	for _, m := range c.Models() {
		if m.Varies() && !covered[m.ID] {
			t.Errorf("%s varies, but no case shows a setting that changes its price", m.ID)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const (
	dataPNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	dataMP4 = "data:video/mp4;base64,AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE="
)

// minimalBody builds the smallest valid request for m from its required
// fields; fields named "inputs.x" go into the inputs object.
func minimalBody(m *Model) map[string]any {
	body := map[string]any{"type": m.Type, "modelId": m.ID}
	for _, f := range m.Fields() {
		if !f.Required {
			continue
		}
		var v any
		switch f.Kind {
		case string(KindText):
			v = "a red fox in fresh snow, morning light"
		case string(KindImage):
			v = dataPNG
		case string(KindVideo):
			v = dataMP4
		default:
			v = f.Values[0]
		}
		if name, ok := strings.CutPrefix(f.Name, "inputs."); ok {
			in, _ := body["inputs"].(map[string]any)
			if in == nil {
				in = map[string]any{}
				body["inputs"] = in
			}
			in[name] = v
		} else {
			body[f.Name] = v
		}
	}
	return body
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseRequestMinimalPerModel(t *testing.T) {
	c := testCatalog(t)
	for _, m := range c.Models() {
		t.Run(m.ID, func(t *testing.T) {
			body := minimalBody(m)
			req, err := c.ParseRequest(mustJSON(t, body))
			if err != nil {
				t.Fatalf("ParseRequest(%s): %v", mustJSON(t, body), err)
			}
			if req.Model != m {
				t.Errorf("Model = %v", req.Model.ID)
			}
			if f, ok := m.Field("prompt"); ok && f.Required && req.Prompt == "" {
				t.Error("Prompt not set")
			}
			for _, f := range m.Inputs {
				_, got := req.InputURLs[f.Name]
				if f.Kind != string(KindText) && got != f.Required {
					t.Errorf("InputURLs[%s] present = %v, want %v", f.Name, got, f.Required)
				}
			}
			// Every option with a default is filled in, normalized.
			for _, f := range m.Options {
				v, ok := req.Options[f.Name]
				if f.Default == nil {
					if !f.Required && ok {
						t.Errorf("option %s = %v without a default", f.Name, v)
					}
					continue
				}
				want := normalize(f.Default, f.Kind)
				if !ok || v != want {
					t.Errorf("option %s = %#v, want default %#v", f.Name, v, want)
				}
			}
			if len(req.Fingerprint) != 64 {
				t.Errorf("Fingerprint %q", req.Fingerprint)
			}
			if got := m.Quote(req.Options); got != m.Credits {
				t.Errorf("Quote = %d, want default credits %d", got, m.Credits)
			}
			if req.NumOutputs() != 1 {
				t.Errorf("NumOutputs = %d", req.NumOutputs())
			}
		})
	}
}

// TestNumOutputsOneOnEveryModel: numOutputs is a general optional field
// of the spec, so every model takes numOutputs: 1, with the cost and the
// outputs of a request without it.
func TestNumOutputsOneOnEveryModel(t *testing.T) {
	c := testCatalog(t)
	for _, m := range c.Models() {
		t.Run(m.ID, func(t *testing.T) {
			body := minimalBody(m)
			body["numOutputs"] = 1
			req, err := c.ParseRequest(mustJSON(t, body))
			if err != nil {
				t.Fatalf("ParseRequest(%s): %v", mustJSON(t, body), err)
			}
			if req.NumOutputs() != 1 || m.Quote(req.Options) != m.Credits {
				t.Errorf("numOutputs 1: NumOutputs %d, quote %d; want 1 and %d", req.NumOutputs(), m.Quote(req.Options), m.Credits)
			}
		})
	}
}

func TestParseRequestFull(t *testing.T) {
	c := testCatalog(t)
	body := `{"type":"video","modelId":"google-veo-3-1","prompt":"a lighthouse in a storm",
		"imageUrl":"https://example.com/first.png","inputs":{"lastFrameUrl":"https://example.com/last.png"},
		"aspectRatio":"9:16","duration":6,"resolution":"1080p","generateAudio":false,"seed":42,"outputFormat":"mp4"}`
	req, err := c.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wantOpts := map[string]any{"aspectRatio": "9:16", "duration": int64(6), "resolution": "1080p",
		"generateAudio": false, "seed": int64(42), "outputFormat": "mp4"}
	if len(req.Options) != len(wantOpts) {
		t.Errorf("Options = %v, want %v", req.Options, wantOpts)
	}
	for k, v := range wantOpts {
		if req.Options[k] != v {
			t.Errorf("Options[%s] = %#v, want %#v", k, req.Options[k], v)
		}
	}
	wantURLs := map[string]string{"imageUrl": "https://example.com/first.png", "inputs.lastFrameUrl": "https://example.com/last.png"}
	if len(req.InputURLs) != 2 || req.InputURLs["imageUrl"] != wantURLs["imageUrl"] || req.InputURLs["inputs.lastFrameUrl"] != wantURLs["inputs.lastFrameUrl"] {
		t.Errorf("InputURLs = %v, want %v", req.InputURLs, wantURLs)
	}
	if req.Prompt != "a lighthouse in a storm" || req.AspectRatio() != "9:16" || req.OutputFormat() != "mp4" {
		t.Errorf("Prompt %q, AspectRatio %q, OutputFormat %q", req.Prompt, req.AspectRatio(), req.OutputFormat())
	}
	if got := req.Model.Quote(req.Options); got != 90 { // 240 × 6/8 × 1080p 1 × no audio 0.5
		t.Errorf("Quote = %d, want 90", got)
	}

	// A gpt-image request with every option, and null meaning "absent".
	req, err = c.ParseRequest([]byte(`{"type":"image","modelId":"gpt-image-2","prompt":"a poster","quality":"high",
		"aspectRatio":"2:3","numOutputs":3,"outputFormat":"webp","imageUrl":null,"inputs":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.NumOutputs() != 3 || req.Options["quality"] != "high" || len(req.InputURLs) != 0 {
		t.Errorf("NumOutputs %d, Options %v, InputURLs %v", req.NumOutputs(), req.Options, req.InputURLs)
	}
	if got := req.Model.Quote(req.Options); got != 450 { // 25 × 3 × 4 × 1.5
		t.Errorf("Quote = %d, want 450", got)
	}
}

func TestParseRequestErrors(t *testing.T) {
	c := testCatalog(t)
	long := strings.Repeat("é", MaxPromptLength+1) // characters, not bytes
	cases := []struct {
		name   string
		body   string
		code   string
		fields []string // sorted field names in Error.Fields
		fcode  string   // code of the first field error, when set
	}{
		{"broken JSON", `{"type":"image",`, EInvalid, nil, ""},
		{"empty body", ``, EInvalid, nil, ""},
		{"array", `[{"type":"image","modelId":"flux","prompt":"x"}]`, EInvalid, nil, ""},
		{"string", `"flux"`, EInvalid, nil, ""},
		{"null", `null`, EInvalid, nil, ""},
		{"two objects", `{"type":"image","modelId":"flux","prompt":"x"} {}`, EInvalid, nil, ""},
		{"missing modelId", `{"type":"image","prompt":"x"}`, EInvalid, []string{"modelId"}, FieldRequired},
		{"null modelId", `{"type":"image","modelId":null,"prompt":"x"}`, EInvalid, []string{"modelId"}, FieldRequired},
		{"empty modelId", `{"type":"image","modelId":"","prompt":"x"}`, EInvalid, []string{"modelId"}, FieldRequired},
		{"modelId number", `{"type":"image","modelId":7,"prompt":"x"}`, EInvalid, []string{"modelId"}, FieldType},
		{"missing type and modelId", `{"prompt":"x"}`, EInvalid, []string{"modelId", "type"}, FieldRequired},
		{"unknown model", `{"type":"image","modelId":"dall-e-9","prompt":"x"}`, EInvalid, []string{"modelId"}, FieldValue},
		{"bad type", `{"type":"audio","modelId":"flux","prompt":"x"}`, EInvalid, []string{"type"}, FieldValue},
		{"type mismatch image model", `{"type":"video","modelId":"flux","prompt":"x"}`, EInvalid, []string{"type"}, FieldValue},
		{"type mismatch video model", `{"type":"image","modelId":"openai-sora-2","prompt":"x"}`, EInvalid, []string{"type"}, FieldValue},
		{"numOutputs string", `{"type":"image","modelId":"flux","prompt":"x","numOutputs":"2"}`, EInvalid, []string{"numOutputs"}, FieldType},
		{"numOutputs fraction", `{"type":"image","modelId":"flux","prompt":"x","numOutputs":2.5}`, EInvalid, []string{"numOutputs"}, FieldType},
		{"prompt number", `{"type":"image","modelId":"flux","prompt":5}`, EInvalid, []string{"prompt"}, FieldType},
		{"two wrong types", `{"type":"image","modelId":"flux","prompt":5,"numOutputs":"2"}`, EInvalid, []string{"numOutputs", "prompt"}, FieldType},
		{"unknown field", `{"type":"image","modelId":"flux","prompt":"x","colour":"red"}`, EInvalid, []string{"colour"}, FieldUnknown},
		{"unknown inputs field", `{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":{"foo":1}}`, EInvalid, []string{"inputs.foo"}, FieldUnknown},
		{"inputs not an object", `{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":"x"}`, EInvalid, []string{"inputs"}, FieldType},
		{"inputs array", `{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":[]}`, EInvalid, []string{"inputs"}, FieldType},
		{"prompt too long", `{"type":"image","modelId":"flux","prompt":"` + long + `"}`, EInvalid, []string{"prompt"}, FieldTooLong},
		{"empty prompt", `{"type":"image","modelId":"flux","prompt":""}`, EInvalid, []string{"prompt"}, FieldRequired},
		{"blank prompt", `{"type":"image","modelId":"flux","prompt":"  \n "}`, EInvalid, []string{"prompt"}, FieldRequired},
		{"missing prompt", `{"type":"image","modelId":"flux"}`, EInvalid, []string{"prompt"}, FieldRequired},
		{"missing prompt, gpt-image", `{"type":"image","modelId":"gpt-image-2"}`, EInvalid, []string{"prompt"}, FieldRequired},
		{"missing video prompt", `{"type":"video","modelId":"kling-2-1"}`, EInvalid, []string{"prompt"}, FieldRequired},
		{"missing mask", `{"type":"image","modelId":"object-remover","image":"` + dataPNG + `"}`, EInvalid, []string{"mask"}, FieldRequired},
		{"missing scale", `{"type":"image","modelId":"image-upscaler","imageUrl":"` + dataPNG + `"}`, EInvalid, []string{"scale"}, FieldRequired},
		{"missing try-on images", `{"type":"image","modelId":"virtual-try-on"}`, EInvalid, []string{"clothImage", "personImage"}, FieldRequired},
		{"missing face-swap images", `{"type":"image","modelId":"face-swap","swapImage":"` + dataPNG + `"}`, EInvalid, []string{"inputImage"}, FieldRequired},
		{"missing i2v image", `{"type":"video","modelId":"wan-2-5-i2v","prompt":"x"}`, EInvalid, []string{"imageUrl"}, FieldRequired},
		{"missing motion video", `{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"x","imageUrl":"` + dataPNG + `","inputs":{}}`, EInvalid, []string{"inputs.videoUrl"}, FieldRequired},
		{"image URL scheme", `{"type":"image","modelId":"remove-bg","imageUrl":"ftp://example.com/a.png"}`, EInvalid, []string{"imageUrl"}, FieldValue},
		{"image URL number", `{"type":"image","modelId":"remove-bg","imageUrl":5}`, EInvalid, []string{"imageUrl"}, FieldType},
		{"bool as string", `{"type":"video","modelId":"google-veo-3","prompt":"x","generateAudio":"no"}`, EInvalid, []string{"generateAudio"}, FieldType},
		{"enum as number", `{"type":"image","modelId":"flux","prompt":"x","aspectRatio":1}`, EInvalid, []string{"aspectRatio"}, FieldType},
		{"invalid beats unsupported", `{"type":"image","modelId":"flux","prompt":5,"aspectRatio":"7:1"}`, EInvalid, []string{"aspectRatio", "prompt"}, ""},

		{"square sora", `{"type":"video","modelId":"openai-sora-2","prompt":"x","aspectRatio":"1:1"}`, EUnsupportedOption, []string{"aspectRatio"}, FieldUnsupported},
		{"numOutputs on nano-banana", `{"type":"image","modelId":"nano-banana","prompt":"x","numOutputs":2}`, EUnsupportedOption, []string{"numOutputs"}, FieldUnsupported},
		{"numOutputs 0 on nano-banana", `{"type":"image","modelId":"nano-banana","prompt":"x","numOutputs":0}`, EUnsupportedOption, []string{"numOutputs"}, FieldUnsupported},
		{"numOutputs fraction on a video model", `{"type":"video","modelId":"kling-2-1","prompt":"x","numOutputs":1.5}`, EInvalid, []string{"numOutputs"}, FieldType},
		{"numOutputs 2 on a video model", `{"type":"video","modelId":"kling-2-1","prompt":"x","numOutputs":2}`, EUnsupportedOption, []string{"numOutputs"}, FieldUnsupported},
		{"too many outputs", `{"type":"image","modelId":"flux","prompt":"x","numOutputs":5}`, EUnsupportedOption, []string{"numOutputs"}, FieldUnsupported},
		{"zero outputs", `{"type":"image","modelId":"flux","prompt":"x","numOutputs":0}`, EUnsupportedOption, []string{"numOutputs"}, FieldUnsupported},
		{"wide gpt-image", `{"type":"image","modelId":"gpt-image-2-5-flare","prompt":"x","aspectRatio":"21:9"}`, EUnsupportedOption, []string{"aspectRatio"}, FieldUnsupported},
		{"sora 6 s", `{"type":"video","modelId":"openai-sora-2","prompt":"x","duration":6}`, EUnsupportedOption, []string{"duration"}, FieldUnsupported},
		{"kling 10 s", `{"type":"video","modelId":"kling-2-1","prompt":"x","duration":10}`, EUnsupportedOption, []string{"duration"}, FieldUnsupported},
		{"seedance 13 s", `{"type":"video","modelId":"bytedance-seedance-1-pro-fast","prompt":"x","duration":13}`, EUnsupportedOption, []string{"duration"}, FieldUnsupported},
		{"veo 3 at 4k", `{"type":"video","modelId":"google-veo-3","prompt":"x","resolution":"4k"}`, EUnsupportedOption, []string{"resolution"}, FieldUnsupported},
		{"aspect ratio on remove-bg", `{"type":"image","modelId":"remove-bg","imageUrl":"` + dataPNG + `","aspectRatio":"1:1"}`, EUnsupportedOption, []string{"aspectRatio"}, FieldUnsupported},
		{"jpeg from remove-bg", `{"type":"image","modelId":"remove-bg","imageUrl":"` + dataPNG + `","outputFormat":"jpeg"}`, EUnsupportedOption, []string{"outputFormat"}, FieldUnsupported},
		{"png video", `{"type":"video","modelId":"pixverse-5","prompt":"x","outputFormat":"png"}`, EUnsupportedOption, []string{"outputFormat"}, FieldUnsupported},
		{"upscale 3x", `{"type":"image","modelId":"image-upscaler","imageUrl":"` + dataPNG + `","scale":3}`, EUnsupportedOption, []string{"scale"}, FieldUnsupported},
		{"prompt on remove-bg", `{"type":"image","modelId":"remove-bg","imageUrl":"` + dataPNG + `","prompt":"x"}`, EUnsupportedOption, []string{"prompt"}, FieldUnsupported},
		{"last frame on sora", `{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":{"lastFrameUrl":"` + dataPNG + `"}}`, EUnsupportedOption, []string{"inputs.lastFrameUrl"}, FieldUnsupported},
		{"negative seed", `{"type":"image","modelId":"flux","prompt":"x","seed":-1}`, EUnsupportedOption, []string{"seed"}, FieldUnsupported},
		{"two unsupported", `{"type":"video","modelId":"openai-sora-2","prompt":"x","aspectRatio":"1:1","duration":5}`, EUnsupportedOption, []string{"aspectRatio", "duration"}, FieldUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := c.ParseRequest([]byte(tc.body))
			if err == nil {
				t.Fatalf("ParseRequest succeeded: %+v", req)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if e.Code != tc.code {
				t.Errorf("Code = %s, want %s (%v)", e.Code, tc.code, err)
			}
			var got []string
			for _, f := range e.Fields {
				got = append(got, f.Field)
				if f.Message == "" || f.Code == "" {
					t.Errorf("field error %+v lacks a code or message", f)
				}
			}
			sort.Strings(got)
			if !slices.Equal(got, tc.fields) {
				t.Errorf("Fields = %v, want %v (%v)", got, tc.fields, err)
			}
			if tc.fcode != "" && len(e.Fields) > 0 && e.Fields[0].Code != tc.fcode {
				t.Errorf("field code = %s, want %s", e.Fields[0].Code, tc.fcode)
			}
			if e.Message == "" {
				t.Error("no message")
			}
		})
	}
}

func TestParseRequestAccepts(t *testing.T) {
	c := testCatalog(t)
	maxPrompt := strings.Repeat("é", MaxPromptLength)
	for name, body := range map[string]string{
		"prompt at the limit":        `{"type":"image","modelId":"flux","prompt":"` + maxPrompt + `"}`,
		"empty inputs":               `{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":{}}`,
		"null inputs":                `{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":null}`,
		"optional prompt omitted":    `{"type":"image","modelId":"ai-background-generator","imageUrl":"https://example.com/a.jpg"}`,
		"optional prompt empty":      `{"type":"image","modelId":"ai-background-generator","imageUrl":"https://example.com/a.jpg","prompt":""}`,
		"start frame on t2v-capable": `{"type":"video","modelId":"kling-2-1","prompt":"x","imageUrl":"http://example.com/a.png"}`,
		"motion control with inputs": `{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"x","imageUrl":"` + dataPNG + `","inputs":{"videoUrl":"` + dataMP4 + `"},"duration":8}`,
		"edit image on nano-banana":  `{"type":"image","modelId":"nano-banana","prompt":"make it night","imageUrl":"` + dataPNG + `","aspectRatio":"21:9"}`,
		"upscale 2x":                 `{"type":"image","modelId":"image-upscaler","imageUrl":"` + dataPNG + `","scale":2}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := c.ParseRequest([]byte(body)); err != nil {
				t.Errorf("ParseRequest: %v", err)
			}
		})
	}
}

func TestParseRequestFingerprint(t *testing.T) {
	c := testCatalog(t)
	fp := func(body string) string {
		t.Helper()
		req, err := c.ParseRequest([]byte(body))
		if err != nil {
			t.Fatalf("ParseRequest(%s): %v", body, err)
		}
		return req.Fingerprint
	}
	a := fp(`{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"dance","imageUrl":"` + dataPNG + `","inputs":{"videoUrl":"` + dataMP4 + `","x":null},"duration":5}`)
	b := fp(` { "duration" : 5, "inputs": {"x":null, "videoUrl":"` + dataMP4 + `"},
		"imageUrl":"` + dataPNG + `", "prompt":"dance", "modelId":"kling-v2-6-motion-control", "type":"video" } `)
	if a != b {
		t.Errorf("reordered keys and whitespace changed the fingerprint: %s != %s", a, b)
	}
	for _, other := range []string{
		`{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"Dance","imageUrl":"` + dataPNG + `","inputs":{"videoUrl":"` + dataMP4 + `","x":null},"duration":5}`,
		`{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"dance","imageUrl":"` + dataPNG + `","inputs":{"videoUrl":"` + dataMP4 + `","x":null},"duration":6}`,
		`{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"dance","imageUrl":"https://example.com/b.png","inputs":{"videoUrl":"` + dataMP4 + `","x":null},"duration":5}`,
	} {
		if fp(other) == a {
			t.Errorf("a different body has the same fingerprint: %s", other)
		}
	}
}

func TestPriceOverride(t *testing.T) {
	c := testCatalog(t)
	if err := c.Override(PriceOverrides{"flux": 5, "google-veo-3": 200, "remove-bg": 1}); err != nil {
		t.Fatal(err)
	}
	flux := mustModel(t, c, "flux")
	veo := mustModel(t, c, "google-veo-3")
	cases := []struct {
		m    *Model
		set  map[string]any
		want int
	}{
		{flux, nil, 5},
		{flux, map[string]any{"numOutputs": 3}, 15},
		{veo, nil, 200},
		{veo, map[string]any{"duration": 4}, 100},
		{veo, map[string]any{"generateAudio": false}, 100},
		{mustModel(t, c, "remove-bg"), nil, 1},
		{mustModel(t, c, "flux-schnell"), map[string]any{"numOutputs": 2}, 4}, // not overridden
	}
	for _, tc := range cases {
		body := minimalBody(tc.m)
		for k, v := range tc.set {
			body[k] = v
		}
		req, err := c.ParseRequest(mustJSON(t, body))
		if err != nil {
			t.Fatalf("%s: %v", tc.m.ID, err)
		}
		if got := tc.m.Quote(req.Options); got != tc.want {
			t.Errorf("%s %v: Quote = %d, want %d", tc.m.ID, tc.set, got, tc.want)
		}
	}
	if flux.Credits != 5 {
		t.Errorf("flux Credits = %d after override", flux.Credits)
	}
	// Overrides apply to one Catalog, not to the embedded data.
	if m := mustModel(t, testCatalog(t), "flux"); m.Credits != 4 {
		t.Errorf("a fresh catalog has flux at %d credits", m.Credits)
	}
	if err := c.Override(PriceOverrides{"no-such-model": 3}); err == nil {
		t.Error("override of an unknown model accepted")
	}
	if err := c.Override(PriceOverrides{"flux": -1}); err == nil {
		t.Error("negative override accepted")
	}
}

func TestParseCatalogRejects(t *testing.T) {
	const prompt = `"inputs":[{"name":"prompt","kind":"text","required":true}]`
	cases := map[string]string{
		"not JSON":  `{"models":`,
		"no id":     `{"models":[{"type":"image","credits":1,"pricing":{"unit":"request"},` + prompt + `}]}`,
		"bad type":  `{"models":[{"id":"a","type":"audio","credits":1,"pricing":{"unit":"request"},` + prompt + `}]}`,
		"bad unit":  `{"models":[{"id":"a","type":"image","credits":1,"pricing":{"unit":"megapixel"},` + prompt + `}]}`,
		"negative":  `{"models":[{"id":"a","type":"image","credits":-1,"pricing":{"unit":"request"},` + prompt + `}]}`,
		"duplicate": `{"models":[{"id":"a","type":"image","credits":1,"pricing":{"unit":"request"},` + prompt + `},{"id":"a","type":"image","credits":1,"pricing":{"unit":"request"},` + prompt + `}]}`,
		"bad kind":  `{"models":[{"id":"a","type":"image","credits":1,"pricing":{"unit":"request"},"inputs":[{"name":"prompt","kind":"string"}]}]}`,
		"enum without values": `{"models":[{"id":"a","type":"image","credits":1,"pricing":{"unit":"request"},` + prompt +
			`,"options":[{"name":"aspectRatio","kind":"enum"}]}]}`,
		"per second without duration": `{"models":[{"id":"a","type":"video","credits":10,"pricing":{"unit":"second","durationOption":"duration"},` + prompt + `}]}`,
		"duration without default": `{"models":[{"id":"a","type":"video","credits":10,"pricing":{"unit":"second","durationOption":"duration"},` + prompt +
			`,"options":[{"name":"duration","kind":"int","values":[5,10]}]}]}`,
		"multiplier for unknown option": `{"models":[{"id":"a","type":"image","credits":4,"pricing":{"unit":"request","multipliers":{"quality":{"high":2}}},` + prompt + `}]}`,
		"multiplier without default": `{"models":[{"id":"a","type":"image","credits":4,"pricing":{"unit":"request","multipliers":{"quality":{"high":2}}},` + prompt +
			`,"options":[{"name":"quality","kind":"enum","values":["low","high"],"default":"low"}]}]}`,
		"defaults cost other than credits": `{"models":[{"id":"a","type":"image","credits":4,"pricing":{"unit":"request","multipliers":{"quality":{"low":0.5,"high":2}}},` + prompt +
			`,"options":[{"name":"quality","kind":"enum","values":["low","high"],"default":"low"}]}]}`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseCatalog([]byte(doc)); err == nil {
				t.Error("ParseCatalog accepted it")
			}
		})
	}
	ok := `{"models":[{"id":"a","type":"image","credits":4,"pricing":{"unit":"request","multipliers":{"quality":{"low":1,"high":2}}},` + prompt +
		`,"options":[{"name":"quality","kind":"enum","values":["low","high"],"default":"low"}]}]}`
	if _, err := ParseCatalog([]byte(ok)); err != nil {
		t.Errorf("ParseCatalog of a good catalog: %v", err)
	}
}
