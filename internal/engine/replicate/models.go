package replicate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// spec says how one Replicate model takes gengate's options. Each option
// field is written "param=values": param is the model's input name ("-"
// when the option is accepted but not sent, because the model decides it
// itself, e.g. from its input image), values a comma-separated list of the
// gengate values it can do ("*" any; "2..12" an integer range), each
// optionally renamed for the upstream as "ours>theirs". An empty field means
// the model has no such option: a job that sets it is refused.
type spec struct {
	aspect     string // AspectRatio
	outputs    string // NumOutputs: "num_outputs=4" (up to 4); "" makes one
	format     string // OutputFormat; "jpeg" goes as "jpg" unless renamed
	duration   string // Options["duration"], seconds
	resolution string // Options["resolution"]
	audio      string // Options["generateAudio"]
	seed       string // Options["seed"]
	scale      string // Options["scale"]
	// sizes, when set, sends the aspect ratio (and resolution) as pixel
	// dimensions instead: sizeParam "size" takes "W*H", "width,height" two
	// integers; the table is keyed "aspect" or "aspect/resolution".
	sizeParam string
	sizes     map[string]string
	// in maps input fields: "imageUrl=start_image! mask=mask"; a "[]"
	// suffix sends a list of one, "!" marks an input the model requires.
	in string
	// noPrompt marks models that take no prompt.
	noPrompt bool
	// maxDur caps the duration at a resolution: "1080p=6" (Hailuo 2.3:
	// 1080p only at 6 s, 10 s only at 768p).
	maxDur string
	// version pins a community model: Replicate runs only its official
	// models by name (POST /v1/models/{owner}/{name}/predictions); any
	// other model needs owner/name:version on POST /v1/predictions
	// (Replicate changelog, 2025-08-05). A route naming its own version
	// (--config) overrides the pin.
	version string
}

// Aspect-ratio lists shared by model families.
const (
	fluxAspects   = "1:1,16:9,21:9,3:2,2:3,4:5,5:4,3:4,4:3,9:16,9:21"
	flux2Aspects  = "1:1,16:9,9:16,3:2,2:3,4:5,5:4,3:4,4:3"
	geminiAspects = "1:1,2:3,3:2,3:4,4:3,4:5,5:4,9:16,16:9,21:9"
	imagenAspects = "1:1,9:16,16:9,3:4,4:3"
	veoVideo      = "aspect_ratio=16:9,9:16"
)

// zImageSizes are the pixel sizes sent to models that take width and height.
var zImageSizes = map[string]string{
	"1:1": "1024*1024", "16:9": "1280*720", "9:16": "720*1280", "4:3": "1152*864", "3:4": "864*1152",
}

// wan25Sizes and wan26Sizes are the sizes Replicate's Wan text-to-video
// versions take, by aspect ratio and resolution: their size enums list
// 16:9 and 9:16 only (Wan 2.6 at 720p and 1080p only), though Alibaba's own
// API makes square and 4:3 too (replicatetest.Schemas).
var wan25Sizes = map[string]string{
	"16:9/480p": "832*480", "9:16/480p": "480*832",
	"16:9/720p": "1280*720", "9:16/720p": "720*1280",
	"16:9/1080p": "1920*1080", "9:16/1080p": "1080*1920",
}

var wan26Sizes = map[string]string{
	"16:9/720p": "1280*720", "9:16/720p": "720*1280",
	"16:9/1080p": "1920*1080", "9:16/1080p": "1080*1920",
}

// specs holds what this engine knows of each Replicate model, by its
// owner/name (a route's "owner/name:version" uses the entry of owner/name).
// Adding a model is one line. Models not listed get the generic mapping.
var specs = map[string]spec{
	// Images.
	"black-forest-labs/flux-dev":              {aspect: "aspect_ratio=1:1,16:9,21:9,3:2,2:3,4:5,5:4,9:16,9:21", outputs: "num_outputs=4", format: "output_format=png,jpeg,webp", seed: "seed", in: "imageUrl=image"},
	"black-forest-labs/flux-schnell":          {aspect: "aspect_ratio=" + fluxAspects, outputs: "num_outputs=4", format: "output_format=png,jpeg,webp", seed: "seed"},
	"black-forest-labs/flux-2-pro":            {aspect: "aspect_ratio=" + flux2Aspects, format: "output_format=png,jpeg,webp", seed: "seed", in: "imageUrl=input_images[]"},
	"black-forest-labs/flux-kontext-pro":      {aspect: "aspect_ratio=" + fluxAspects, format: "output_format=png,jpeg", seed: "seed", in: "imageUrl=input_image"},
	"google/nano-banana":                      {aspect: "aspect_ratio=" + geminiAspects, format: "output_format=png,jpeg", in: "imageUrl=image_input[]"},
	"google/nano-banana-pro":                  {aspect: "aspect_ratio=" + geminiAspects, resolution: "resolution=1K,2K,4K", format: "output_format=png,jpeg", in: "imageUrl=image_input[]"},
	"prunaai/z-image-turbo":                   {sizeParam: "width,height", sizes: zImageSizes, format: "output_format=png,jpeg,webp", seed: "seed"},
	"google/imagen-4-ultra":                   {aspect: "aspect_ratio=" + imagenAspects, resolution: "-=1K", format: "output_format=png,jpeg"},
	"google/imagen-4-fast":                    {aspect: "aspect_ratio=" + imagenAspects, format: "output_format=png,jpeg"},
	"ideogram-ai/ideogram-v3-turbo":           {aspect: "aspect_ratio=1:1,16:9,9:16,4:3,3:4,3:2,2:3,4:5,5:4,16:10,10:16,2:1,1:2,3:1,1:3", format: "-=png", seed: "seed"},
	"stability-ai/stable-diffusion-3.5-large": {aspect: "aspect_ratio=1:1,16:9,21:9,3:2,2:3,4:5,5:4,9:16,9:21", format: "output_format=png,jpeg,webp", seed: "seed", in: "imageUrl=image"},
	"bytedance/seedream-4.5":                  {aspect: "aspect_ratio=1:1,4:3,3:4,16:9,9:16,3:2,2:3,21:9", resolution: "size=2K,4K", format: "-=png,jpeg", in: "imageUrl=image_input[]"},
	"bria/eraser":                             {format: "-=png", in: "image=image! mask=mask!", noPrompt: true},
	"nightmareai/real-esrgan":                 {scale: "scale=2,4", format: "-=png", in: "imageUrl=image!", noPrompt: true, version: "42fed1c4974146d4d2414e2be2c5277c7fcf05fcc3a73abf41610695738c1d7b"},
	"flux-kontext-apps/restore-image":         {format: "output_format=png,jpeg", in: "imageUrl=input_image!", noPrompt: true},
	"851-labs/background-remover":             {format: "format=png,jpeg,webp", in: "imageUrl=image!", noPrompt: true, version: "a029dff38972b5fda4ec5d75d7d1cd25aeff621d2cf4946a41055d7db66b80bc"},
	"qwen/qwen-image-edit":                    {format: "output_format=png,jpeg,webp", seed: "seed", in: "image=image!"},
	"qwen/qwen-image-edit-plus":               {format: "output_format=png,jpeg,webp", seed: "seed", in: "image=image[]!"},
	"codeplugtech/face-swap":                  {format: "-=png", in: "inputImage=input_image! swapImage=swap_image!", noPrompt: true, version: "278a81e7ebb22db98bcba54de985d22cc1abeead2754eb1f2af717247be69b34"},

	// Videos.
	"openai/sora-2":                     {aspect: "aspect_ratio=16:9>landscape,9:16>portrait", duration: "seconds=4,8,12", in: "imageUrl=input_reference"},
	"google/veo-3.1":                    {aspect: veoVideo, duration: "duration=4,6,8", resolution: "resolution=720p,1080p", audio: "generate_audio", seed: "seed", in: "imageUrl=image inputs.lastFrameUrl=last_frame"},
	"google/veo-3.1-fast":               {aspect: veoVideo, duration: "duration=4,6,8", resolution: "resolution=720p,1080p", audio: "generate_audio", seed: "seed", in: "imageUrl=image inputs.lastFrameUrl=last_frame"},
	"google/veo-3":                      {aspect: veoVideo, duration: "duration=4,6,8", resolution: "resolution=720p,1080p", audio: "generate_audio", seed: "seed", in: "imageUrl=image"},
	"google/veo-3-fast":                 {aspect: veoVideo, duration: "duration=4,6,8", resolution: "resolution=720p,1080p", audio: "generate_audio", seed: "seed", in: "imageUrl=image"},
	"kwaivgi/kling-v2.1":                {aspect: "-=*", duration: "duration=5,10", in: "imageUrl=start_image!"},
	"kwaivgi/kling-v2.6-motion-control": {duration: "-=*", in: "imageUrl=image! inputs.videoUrl=video!"},
	"minimax/hailuo-2.3":                {duration: "duration=6,10", resolution: "resolution=768p,1080p", maxDur: "1080p=6", in: "imageUrl=first_frame_image"},
	"minimax/hailuo-2.3-fast":           {duration: "duration=6,10", resolution: "resolution=768p,1080p", maxDur: "1080p=6", in: "imageUrl=first_frame_image!"},
	"bytedance/seedance-1-pro-fast":     {aspect: "aspect_ratio=16:9,4:3,1:1,3:4,9:16,21:9,9:21", duration: "duration=2..12", resolution: "resolution=480p,720p,1080p", seed: "seed", in: "imageUrl=image"},
	"runwayml/gen4-turbo":               {aspect: "aspect_ratio=16:9,9:16,4:3,3:4,1:1,21:9", duration: "duration=5,10", seed: "seed", in: "imageUrl=image!"},
	"pixverse/pixverse-v5":              {aspect: "aspect_ratio=16:9,9:16,1:1", duration: "duration=5,8", resolution: "quality=360p,540p,720p,1080p", seed: "seed", in: "imageUrl=image"},
	"wan-video/wan-2.5-i2v":             {duration: "duration=5,10", resolution: "resolution=480p,720p,1080p", seed: "seed", in: "imageUrl=image!"},
	"wan-video/wan-2.6-i2v":             {duration: "duration=5,10,15", resolution: "resolution=720p,1080p", seed: "seed", in: "imageUrl=image!"},
	"wan-video/wan-2.5-t2v":             {sizeParam: "size", sizes: wan25Sizes, duration: "duration=5,10", seed: "seed"},
	"wan-video/wan-2.6-t2v":             {sizeParam: "size", sizes: wan26Sizes, duration: "duration=5,10,15", seed: "seed"},
}

// generic is the mapping for models this engine does not know: the usual
// Replicate input names, every value passed through, nothing refused.
var generic = spec{
	aspect: "aspect_ratio=*", outputs: "num_outputs=*", format: "output_format=*", duration: "duration=*",
	resolution: "resolution=*", audio: "generate_audio", seed: "seed", scale: "scale=*",
	in: "imageUrl=image image=image mask=mask inputs.lastFrameUrl=last_frame_image inputs.videoUrl=video " +
		"personImage=person_image clothImage=cloth_image inputImage=input_image swapImage=swap_image",
}

// model splits a route's upstream into the model (owner/name) and the
// version, if any.
func model(upstream string) (name, version string) {
	name, version, _ = strings.Cut(upstream, ":")
	return name, version
}

// specFor returns the spec of the route's model and whether it is known.
func specFor(upstream string) (spec, bool) {
	name, _ := model(upstream)
	s, ok := specs[name]
	if !ok {
		return generic, false
	}
	return s, true
}

// opt is one parsed option field.
type opt struct {
	param  string
	any    bool
	lo, hi int64 // an integer range when hi > 0
	values map[string]string
	order  []string
}

func parseOpt(field string) (opt, bool) {
	if field == "" {
		return opt{}, false
	}
	param, list, _ := strings.Cut(field, "=")
	o := opt{param: param, values: map[string]string{}}
	if list == "*" || list == "" {
		o.any = true
		return o, true
	}
	if lo, hi, ok := strings.Cut(list, ".."); ok {
		o.lo, _ = strconv.ParseInt(lo, 10, 64)
		o.hi, _ = strconv.ParseInt(hi, 10, 64)
		return o, true
	}
	for _, v := range strings.Split(list, ",") {
		ours, theirs, ok := strings.Cut(v, ">")
		if !ok {
			theirs = ours
		}
		o.values[ours] = theirs
		o.order = append(o.order, ours)
	}
	return o, true
}

// value returns what to send for ours and whether the option can take it.
func (o opt) value(ours string) (string, bool) {
	switch {
	case o.any:
		return ours, true
	case o.hi > 0:
		n, err := strconv.ParseInt(ours, 10, 64)
		return ours, err == nil && n >= o.lo && n <= o.hi
	}
	v, ok := o.values[ours]
	return v, ok
}

func (o opt) describe() string {
	if o.hi > 0 {
		return fmt.Sprintf("%d to %d", o.lo, o.hi)
	}
	return strings.Join(o.order, ", ")
}

// inputSpec is one input field's upstream name.
type inputSpec struct {
	param    string
	list     bool
	required bool
}

func parseInputs(s string) map[string]inputSpec {
	m := map[string]inputSpec{}
	for _, f := range strings.Fields(s) {
		ours, theirs, _ := strings.Cut(f, "=")
		in := inputSpec{}
		theirs, in.required = strings.CutSuffix(theirs, "!")
		in.param, in.list = strings.CutSuffix(theirs, "[]")
		m[ours] = in
	}
	return m
}

// mapping is the outcome of mapping a job onto its route's model: the
// input to send, or the fields the model cannot do.
type mapping struct {
	input  map[string]any
	fields []gengate.FieldError
}

func (m *mapping) refuse(field, format string, args ...any) {
	m.fields = append(m.fields, gengate.FieldError{Field: field, Code: gengate.FieldUnsupported, Message: fmt.Sprintf(format, args...)})
}

// set maps one option: field is its API name, ours its value as text, typed
// the value to send when the upstream takes it unrenamed.
func (m *mapping) set(name, field, specField, ours string, typed any) {
	o, ok := parseOpt(specField)
	if !ok {
		m.refuse(field, "%s cannot set %s on Replicate", name, field)
		return
	}
	theirs, ok := o.value(ours)
	if !ok {
		m.refuse(field, "%s on Replicate takes %s %s, not %s", name, field, o.describe(), ours)
		return
	}
	if o.param == "-" {
		return
	}
	if theirs == ours {
		m.input[o.param] = typed
	} else {
		m.input[o.param] = theirs
	}
}

// mapJob maps job onto the input of its route's model. It reads only
// names from job.Inputs unless withData, so Validate can run before the
// inputs are fetched.
func mapJob(job gengate.Job, withData bool) mapping {
	s, known := specFor(job.Route.Upstream)
	name, _ := model(job.Route.Upstream)
	if name == "" {
		name = "the model"
	}
	m := mapping{input: map[string]any{}}

	if job.Prompt != "" {
		if s.noPrompt {
			m.refuse("prompt", "%s takes no prompt", name)
		} else {
			m.input["prompt"] = job.Prompt
		}
	}

	switch {
	case job.AspectRatio == "":
	case s.sizes != nil:
		key := job.AspectRatio
		if res, ok := job.Options["resolution"].(string); ok {
			key += "/" + res
		}
		size, ok := s.sizes[key]
		if !ok {
			size, ok = s.sizes[job.AspectRatio]
		}
		if !ok {
			m.refuse("aspectRatio", "%s on Replicate cannot make %s", name, strings.ReplaceAll(key, "/", " at "))
			break
		}
		w, h, _ := strings.Cut(size, "*")
		if s.sizeParam == "size" {
			m.input["size"] = size
		} else {
			pw, ph, _ := strings.Cut(s.sizeParam, ",")
			wi, _ := strconv.Atoi(w)
			hi, _ := strconv.Atoi(h)
			m.input[pw], m.input[ph] = wi, hi
		}
	default:
		m.set(name, "aspectRatio", s.aspect, job.AspectRatio, job.AspectRatio)
	}

	if job.NumOutputs > 1 {
		param, max, ok := strings.Cut(s.outputs, "=")
		n, _ := strconv.Atoi(max)
		switch {
		case !ok:
			m.refuse("numOutputs", "%s on Replicate makes one output per request", name)
		case max != "*" && job.NumOutputs > n:
			m.refuse("numOutputs", "%s on Replicate makes at most %d outputs", name, n)
		default:
			m.input[param] = job.NumOutputs
		}
	}

	if f := job.OutputFormat; f != "" && job.Type != "video" {
		send := f
		if f == "jpeg" {
			send = "jpg" // Replicate's models spell JPEG "jpg"
		}
		m.set(name, "outputFormat", s.format, f, send)
	}

	for _, key := range sortedKeys(job.Options) {
		v := job.Options[key]
		switch key {
		case "aspectRatio", "numOutputs", "outputFormat":
			continue // the Job's own fields, mapped above
		case "duration":
			m.set(name, key, s.duration, fmt.Sprint(v), v)
		case "resolution":
			if s.sizes != nil {
				continue // sent as the size
			}
			m.set(name, key, s.resolution, fmt.Sprint(v), v)
		case "generateAudio":
			if b, _ := v.(bool); !b && s.audio == "" {
				continue // no audio is what a model without audio makes
			}
			if s.audio == "" {
				m.refuse(key, "%s on Replicate cannot generate audio", name)
				continue
			}
			m.input[s.audio] = v
		case "seed":
			if v == nil {
				continue
			}
			if s.seed == "" {
				m.refuse(key, "%s on Replicate takes no seed", name)
				continue
			}
			m.input[s.seed] = v
		case "scale":
			if v == nil {
				continue
			}
			m.set(name, key, s.scale, fmt.Sprint(v), v)
		case "removeScratches":
			// photo-restoration: an AI restorer repairs the damage it
			// sees whatever this says; the option switches the built-in
			// engine's scratch filling (docs/models.md)
			continue
		default:
			if !known {
				m.input[gengate.SnakeName(key)] = v // an operator's own model: pass it on
				continue
			}
			m.refuse(key, "%s on Replicate has no %s option", name, key)
		}
	}

	if res, cap, ok := strings.Cut(s.maxDur, "="); ok && fmt.Sprint(job.Options["resolution"]) == res {
		if d, err := strconv.Atoi(fmt.Sprint(job.Options["duration"])); err == nil && d > atoi(cap) {
			m.refuse("duration", "%s on Replicate makes %s only in %s s", name, res, cap)
		}
	}

	ins := parseInputs(s.in)
	for _, field := range sortedKeys(job.Inputs) {
		in, ok := ins[field]
		if !ok {
			m.refuse(field, "%s on Replicate takes no %s input", name, field)
			continue
		}
		var v any = ""
		if withData {
			v = upstream.DataURI(job.Inputs[field])
		}
		if in.list {
			v = []any{v}
		}
		m.input[in.param] = v
	}
	for _, field := range sortedKeys(ins) {
		if _, given := job.Inputs[field]; ins[field].required && !given {
			m.refuse(field, "%s on Replicate requires %s", name, field)
		}
	}
	return m
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// upstreamModel returns the model and version to run for a route's
// upstream: its own version if it names one, else the table's pin.
func upstreamModel(upstream string) (name, version string) {
	name, version = model(upstream)
	if version == "" {
		version = specs[name].version
	}
	return name, version
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
