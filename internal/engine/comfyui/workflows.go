package comfyui

import (
	"embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gengate/gengate"
)

// templateFS holds the workflow templates, one ComfyUI API-format graph
// per upstream id: workflows/<upstream>.json.
//
//go:embed workflows/*.json
var templateFS embed.FS

// spec says what one workflow template can do. Its graph marks the values
// a job fills in with whole-string placeholders ("{{prompt}}"), replaced by
// typed values (numbers stay numbers):
//
//	{{prompt}}  the prompt               {{seed}}   the seed
//	{{width}}   output width (pixels)    {{height}} output height
//	{{batch}}   images per run           {{length}} video frames
//	{{fps}}     video frame rate         {{prefix}} SaveImage/SaveVideo filename_prefix
//	{{image}}   an uploaded input image's name (LoadImage), one per input field
type spec struct {
	kind string // "image" or "video"
	// maxOutputs caps numOutputs (the latent batch size); 1 for templates
	// without {{batch}}.
	maxOutputs int
	// sizes, for video, maps "aspect/resolution" to "WxH"; image
	// templates take any aspect ratio, sized to about one megapixel.
	sizes map[string]string
	// durations is the range of video seconds ("1..5"), fps the frame rate.
	durations string
	fps       int
	// inputs maps API input fields to their placeholders; every listed
	// input is required. With an input image the output follows its shape,
	// so no aspect ratio is taken.
	inputs map[string]string
}

// wanSizes are Wan's text-to-video sizes (multiples of 16).
var wanSizes = map[string]string{
	"16:9/480p": "832x480", "9:16/480p": "480x832", "1:1/480p": "624x624",
	"16:9/720p": "1280x720", "9:16/720p": "720x1280", "1:1/720p": "960x960",
}

// templates holds the workflows this engine runs, by route upstream id.
// Adding a model is one line here and one JSON file in workflows/.
var templates = map[string]spec{
	"flux-schnell":               {kind: "image", maxOutputs: 4},
	"stable-diffusion-3-5-large": {kind: "image", maxOutputs: 4},
	"z-image-turbo":              {kind: "image", maxOutputs: 4},
	"qwen-image-edit":            {kind: "image", maxOutputs: 1, inputs: map[string]string{"image": "image"}},
	"wan-2-5-t2v":                {kind: "video", maxOutputs: 1, sizes: wanSizes, durations: "1..5", fps: 16},
}

// loadTemplate returns the graph of the named template.
func loadTemplate(name string) (map[string]any, error) {
	data, err := templateFS.ReadFile("workflows/" + name + ".json")
	if err != nil {
		return nil, err
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("comfyui: template %s: %w", name, err)
	}
	return g, nil
}

// plan is a job mapped onto its route's template: the placeholder values
// and the route's node input overrides, or the fields the template cannot do.
type plan struct {
	name   string
	spec   spec
	values map[string]any
	// uploads maps placeholders to the input fields whose files fill them
	// (after POST /upload/image).
	uploads   map[string]string
	overrides map[string]any // "node.input" → value
	fields    []gengate.FieldError
}

func (p *plan) refuse(field, format string, args ...any) {
	p.fields = append(p.fields, gengate.FieldError{Field: field, Code: gengate.FieldUnsupported, Message: fmt.Sprintf(format, args...)})
}

// planJob maps job onto the template its route names. Validate and Submit
// both call it, so they never disagree; it reads only input names.
func planJob(job gengate.Job) plan {
	name := job.Route.Upstream
	p := plan{name: name, values: map[string]any{}, uploads: map[string]string{}, overrides: map[string]any{}}
	s, ok := templates[name]
	if !ok {
		p.refuse("modelId", "the ComfyUI server has no workflow template %q", name)
		return p
	}
	p.spec = s
	label := "the ComfyUI workflow " + name
	if job.Type != "" && job.Type != s.kind {
		p.refuse("modelId", "%s makes %s, not %s", label, s.kind, job.Type)
	}
	p.values["prompt"] = job.Prompt
	p.values["prefix"] = "gengate/" + safeName(job.TaskID)
	p.values["seed"] = seedFor(job)

	// Size: video from the sizes table, images from the aspect ratio,
	// edits from the input image.
	res, _ := job.Options["resolution"].(string)
	switch {
	case s.sizes != nil:
		aspect := job.AspectRatio
		if aspect == "" {
			aspect = "16:9"
		}
		if res == "" {
			res = "720p"
		}
		size, ok := s.sizes[aspect+"/"+res]
		if !ok {
			field := "aspectRatio"
			if !hasKeyPrefix(s.sizes, aspect+"/") {
				p.refuse(field, "%s cannot make %s video", label, aspect)
			} else {
				p.refuse("resolution", "%s cannot make %s at %s", label, aspect, res)
			}
			break
		}
		w, h, _ := strings.Cut(size, "x")
		p.values["width"], _ = strconv.Atoi(w)
		p.values["height"], _ = strconv.Atoi(h)
	case len(s.inputs) > 0:
		if job.AspectRatio != "" {
			p.refuse("aspectRatio", "%s keeps the input image's shape", label)
		}
	default:
		aspect := job.AspectRatio
		if aspect == "" {
			aspect = "1:1"
		}
		w, h, ok := imageSize(aspect)
		if !ok {
			p.refuse("aspectRatio", "%s cannot make aspect ratio %s", label, aspect)
			break
		}
		p.values["width"], p.values["height"] = w, h
	}
	if res != "" && s.sizes == nil {
		p.refuse("resolution", "%s has no resolution option", label)
	}

	n := max(job.NumOutputs, 1)
	if s.kind == "video" {
		n = 1
	}
	if n > s.maxOutputs {
		if s.maxOutputs == 1 {
			p.refuse("numOutputs", "%s makes one output per run", label)
		} else {
			p.refuse("numOutputs", "%s makes at most %d outputs", label, s.maxOutputs)
		}
	}
	p.values["batch"] = n

	switch f := job.OutputFormat; {
	case f == "":
	case s.kind == "video" && f != "mp4":
		p.refuse("outputFormat", "%s saves mp4 video, not %s", label, f)
	case s.kind == "image" && f != "png" && f != "jpeg":
		p.refuse("outputFormat", "%s saves png (or jpeg, converted here), not %s", label, f)
	}

	for _, key := range sortedKeys(job.Options) {
		v := job.Options[key]
		switch key {
		case "seed", "resolution", "aspectRatio", "outputFormat", "numOutputs":
			// Read above (the service also copies the job's aspect ratio,
			// output format and output count into Options).
		case "duration":
			secs, ok := toInt(v)
			lo, hi := rangeOf(s.durations)
			if s.kind != "video" || !ok || secs < lo || secs > hi {
				if s.kind != "video" {
					p.refuse(key, "%s makes images", label)
				} else {
					p.refuse(key, "%s makes videos of %d to %d seconds, not %v", label, lo, hi, v)
				}
				continue
			}
			p.values["length"] = int(secs)*s.fps + 1 // Wan's 4k+1 frames
			p.values["fps"] = s.fps
		case "generateAudio":
			if b, _ := v.(bool); b {
				p.refuse(key, "%s makes no audio", label)
			}
		default:
			if v != nil {
				p.refuse(key, "%s has no %s option", label, key)
			}
		}
	}
	if s.kind == "video" {
		if _, ok := p.values["length"]; !ok {
			_, hi := rangeOf(s.durations)
			p.values["length"], p.values["fps"] = int(hi)*s.fps+1, s.fps
		}
	}

	for _, field := range sortedKeys(job.Inputs) {
		ph, ok := s.inputs[field]
		if !ok {
			p.refuse(field, "%s takes no %s input", label, field)
			continue
		}
		p.uploads[ph] = field
	}
	for _, field := range sortedKeys(s.inputs) {
		if _, ok := job.Inputs[field]; !ok {
			p.refuse(field, "%s requires %s", label, field)
		}
	}

	if len(job.Route.Params) > 0 {
		graph, err := loadTemplate(name)
		if err != nil {
			p.refuse("modelId", "%s cannot be read", label)
			return p
		}
		for _, key := range sortedKeys(job.Route.Params) {
			node, input, ok := strings.Cut(key, ".")
			if _, exists := graph[node]; !ok || input == "" || !exists {
				p.refuse("modelId", "the route's parameter %q names no node input of %s (want \"<node id>.<input>\")", key, label)
				continue
			}
			p.overrides[key] = job.Route.Params[key]
		}
	}
	return p
}

// graph fills the template with the plan's values (names maps input
// placeholders to the uploaded files' names) and the route's overrides.
func (p plan) graph(names map[string]string) (map[string]any, error) {
	g, err := loadTemplate(p.name)
	if err != nil {
		return nil, err
	}
	var missing []string
	var fill func(v any) any
	fill = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				v[k] = fill(x)
			}
		case []any:
			for i, x := range v {
				v[i] = fill(x)
			}
		case string:
			name, ok := strings.CutPrefix(v, "{{")
			if name, ok2 := strings.CutSuffix(name, "}}"); ok && ok2 {
				if val, ok := p.values[name]; ok {
					return val
				}
				if val, ok := names[name]; ok {
					return val
				}
				missing = append(missing, name)
			}
		}
		return v
	}
	fill(g)
	if len(missing) > 0 {
		return nil, gengate.Errorf(gengate.EInvalid, "comfyui: template %s: no value for %s", p.name, strings.Join(missing, ", "))
	}
	for key, v := range p.overrides {
		node, input, _ := strings.Cut(key, ".")
		n, _ := g[node].(map[string]any)
		inputs, _ := n["inputs"].(map[string]any)
		if inputs == nil {
			inputs = map[string]any{}
			n["inputs"] = inputs
		}
		inputs[input] = v
	}
	return g, nil
}

// imageSize returns a size of about one megapixel with the aspect ratio
// "W:H", both sides multiples of 16 (what Flux, SD3 and Z-Image latents
// need), or false for an unreadable or extreme ratio.
func imageSize(aspect string) (int, int, bool) {
	ws, hs, ok := strings.Cut(aspect, ":")
	a, err1 := strconv.Atoi(ws)
	b, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || a <= 0 || b <= 0 {
		return 0, 0, false
	}
	r := float64(a) / float64(b)
	if r > 4 || r < 0.25 {
		return 0, 0, false
	}
	const pixels = 1024 * 1024
	w := int(math.Round(math.Sqrt(pixels*r)/16)) * 16
	h := int(math.Round(float64(w)/r/16)) * 16
	return w, h, true
}

// seedFor returns the job's seed, or one derived from the task id, so a
// task's graph is the same every time it is built.
func seedFor(job gengate.Job) int64 {
	if v, ok := toInt(job.Options["seed"]); ok {
		return v
	}
	h := fnv.New32a()
	h.Write([]byte(job.TaskID))
	return int64(h.Sum32() & 0x7fffffff)
}

func toInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		if v == math.Trunc(v) {
			return int64(v), true
		}
	}
	return 0, false
}

func rangeOf(s string) (lo, hi int64) {
	a, b, _ := strings.Cut(s, "..")
	lo, _ = strconv.ParseInt(a, 10, 64)
	hi, _ = strconv.ParseInt(b, 10, 64)
	return lo, hi
}

func hasKeyPrefix(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// safeName keeps letters, digits, '-' and '_' of s, for file names.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "task"
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
