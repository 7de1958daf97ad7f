package google

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gengate/gengate"
)

// method is the Gemini API method a model is called through.
type method int

const (
	// generateContent: Gemini image models ("nano-banana"), synchronous.
	generateContent method = iota + 1
	// predict: Imagen, synchronous.
	predict
	// predictLongRunning: Veo, a long-running operation.
	predictLongRunning
)

func (m method) String() string {
	return map[method]string{generateContent: "generateContent", predict: "predict", predictLongRunning: "predictLongRunning"}[m]
}

// spec is what one upstream model takes. Nil lists accept any value (the
// generic specs of upstream ids this package does not know); an empty
// non-nil list accepts none.
type spec struct {
	method  method
	aspects []string // aspectRatio values
	// sizes are the values of the size option, from gengate's
	// "resolution": imageConfig.imageSize (Gemini), sampleImageSize
	// (Imagen) or resolution (Veo).
	sizes     []string
	maxN      int      // most outputs one request makes
	formats   []string // output formats this engine can deliver
	durations []int64  // Veo durationSeconds
	// hiResAt8 says 1080p and 4k videos must be 8 seconds long.
	hiResAt8 bool
	// inputs maps gengate's input fields to where they go: "image" (a
	// Gemini inlineData part, or Veo's first frame) or "lastFrame" (Veo).
	inputs map[string]string
	// audioAlways says the model (Veo 3) makes sound: the Gemini API takes
	// no generateAudio, so a job asking for silence is refused there;
	// Vertex AI requires generateAudio, sent true unless the job says.
	audioAlways bool
	// noSeed says the Gemini API refuses a seed for this model (Vertex AI
	// takes one).
	noSeed bool
	// generic marks a spec for an upstream id this package does not know:
	// options it cannot map are passed or dropped, not refused.
	generic bool
}

// Value lists shared by model families.
var (
	geminiAspects = []string{"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"}
	imagenAspects = []string{"1:1", "3:4", "4:3", "9:16", "16:9"}
	veoAspects    = []string{"16:9", "9:16"}
	veoDurations  = []int64{4, 6, 8}
	// Gemini image models deliver PNG or JPEG; the engine transcodes
	// between the two with the standard library, but cannot write WebP.
	pngJPEG = []string{"png", "jpeg"}

	firstFrame     = map[string]string{"imageUrl": "image"}
	firstLastFrame = map[string]string{"imageUrl": "image", "inputs.lastFrameUrl": "lastFrame"}
)

// specs maps an upstream model id, or an id prefix, to what it takes: the
// longest matching key wins, so "veo-3.1-fast-generate-001" and the Gemini
// API's "veo-3.1-fast-generate-preview" share one line. Adding a model is
// one line.
var specs = map[string]spec{
	// Gemini image models: generateContent, one image per call.
	"gemini-2.5-flash-image":    {method: generateContent, aspects: geminiAspects, sizes: []string{}, maxN: 1, formats: pngJPEG, inputs: firstFrame},
	"gemini-3-pro-image":        {method: generateContent, aspects: geminiAspects, sizes: []string{"1K", "2K", "4K"}, maxN: 1, formats: pngJPEG, inputs: firstFrame},
	"gemini-3.1-flash-image":    {method: generateContent, aspects: geminiAspects, sizes: []string{"1K", "2K", "4K"}, maxN: 1, formats: pngJPEG, inputs: firstFrame},
	"imagen-4.0-generate":       {method: predict, aspects: imagenAspects, sizes: []string{"1K", "2K"}, maxN: 4, formats: pngJPEG, inputs: map[string]string{}, noSeed: true},
	"imagen-4.0-ultra-generate": {method: predict, aspects: imagenAspects, sizes: []string{"1K", "2K"}, maxN: 4, formats: pngJPEG, inputs: map[string]string{}, noSeed: true},
	"imagen-4.0-fast-generate":  {method: predict, aspects: imagenAspects, sizes: []string{}, maxN: 4, formats: pngJPEG, inputs: map[string]string{}, noSeed: true},
	// Veo: predictLongRunning. Resolutions 720p and 1080p only, as
	// go-genai's GenerateVideosConfig.Resolution says for both backends
	// ("720p and 1080p are supported"; 6fd3e65, 2026-08-21): a 4k job is
	// refused here before any charge and goes to a route that takes 4k
	// (fal's veo3.1 endpoints list it).
	"veo-3.1-generate":      {method: predictLongRunning, aspects: veoAspects, sizes: []string{"720p", "1080p"}, maxN: 1, durations: veoDurations, hiResAt8: true, inputs: firstLastFrame, audioAlways: true, noSeed: true},
	"veo-3.1-fast-generate": {method: predictLongRunning, aspects: veoAspects, sizes: []string{"720p", "1080p"}, maxN: 1, durations: veoDurations, hiResAt8: true, inputs: firstLastFrame, audioAlways: true, noSeed: true},
	"veo-3.1-lite-generate": {method: predictLongRunning, aspects: veoAspects, sizes: []string{"720p", "1080p"}, maxN: 1, durations: veoDurations, hiResAt8: true, inputs: firstLastFrame, audioAlways: true, noSeed: true},
	"veo-3.0-generate":      {method: predictLongRunning, aspects: veoAspects, sizes: []string{"720p", "1080p"}, maxN: 1, durations: veoDurations, hiResAt8: true, inputs: firstFrame, audioAlways: true, noSeed: true},
	"veo-3.0-fast-generate": {method: predictLongRunning, aspects: veoAspects, sizes: []string{"720p", "1080p"}, maxN: 1, durations: veoDurations, hiResAt8: true, inputs: firstFrame, audioAlways: true, noSeed: true},
}

// Generic specs, for upstream ids this package does not know. The method
// is guessed from the id ("imagen", "veo") or the job's type.
var (
	genericContent = spec{method: generateContent, maxN: 1, formats: pngJPEG,
		inputs: map[string]string{"imageUrl": "image", "image": "image", "personImage": "image", "clothImage": "image", "inputImage": "image", "swapImage": "image"}, generic: true}
	genericPredict = spec{method: predict, formats: pngJPEG, inputs: map[string]string{}, generic: true}
	genericVideo   = spec{method: predictLongRunning, maxN: 1, inputs: firstLastFrame, generic: true}
)

// specFor returns the spec of an upstream id and whether it is known.
func specFor(upstreamID, jobType string) (spec, bool) {
	best := ""
	for k := range specs {
		if strings.HasPrefix(upstreamID, k) && len(k) > len(best) {
			best = k
		}
	}
	if best != "" {
		return specs[best], true
	}
	switch {
	case strings.HasPrefix(upstreamID, "veo"), jobType == "video":
		return genericVideo, false
	case strings.HasPrefix(upstreamID, "imagen"):
		return genericPredict, false
	}
	return genericContent, false
}

// platform is where the engine sends a job: the Gemini API (an API key)
// or Vertex AI (OAuth, a project and a location). Both take the same
// request bodies, but Vertex AI also takes what go-genai's converters call
// "only supported in … Agent Platform mode": a seed and generateAudio for
// Veo, a seed for Imagen (on images without a watermark), and an output
// format for Gemini image models (imageConfig.imageOutputOptions).
type platform struct {
	name   string // "the Gemini API", "Vertex AI"
	vertex bool
}

var (
	geminiAPI = platform{name: "the Gemini API"}
	vertexAI  = platform{name: "Vertex AI", vertex: true}
)

// request is a job mapped onto its upstream: the method, the body to send
// and the output format to deliver.
type request struct {
	on     platform
	method method
	body   map[string]any
	format string // "png" or "jpeg" for images, "" for videos
	// fields are the options the upstream cannot do.
	fields []gengate.FieldError
}

func (r *request) refuse(field, format string, args ...any) {
	r.fields = append(r.fields, gengate.FieldError{Field: field, Code: gengate.FieldUnsupported, Message: fmt.Sprintf(format, args...)})
}

func (r *request) err(model string) error {
	if len(r.fields) == 0 {
		return nil
	}
	return &gengate.Error{Code: gengate.EUnsupportedOption,
		Message: fmt.Sprintf("%s on %s cannot do %s", model, r.on.name, r.fields[0].Field), Fields: r.fields}
}

// topLevel names the request fields a route's params set at the top of
// the body; every other param goes into generationConfig (Gemini) or
// parameters (Imagen, Veo).
var topLevel = map[string]bool{"safetySettings": true, "systemInstruction": true, "tools": true, "toolConfig": true,
	"cachedContent": true, "generationConfig": true, "contents": true, "instances": true, "parameters": true}

// plan maps job onto the request its route's upstream takes on platform
// on. With withData false it reads only the names of the inputs (Validate
// runs before they are fetched); Submit calls it with the data, and with
// the Files API files of the inputs it uploaded (files.go), which go as
// fileData parts instead of inline bytes.
func plan(job gengate.Job, withData bool, on platform, files map[string]fileObject) *request {
	sp, _ := specFor(job.Route.Upstream, job.Type)
	name := job.Route.Upstream
	if name == "" {
		name = "the model"
	}
	r := &request{method: sp.method, on: on}
	params := map[string]any{} // generationConfig.imageConfig, or parameters
	extra := map[string]any{}  // generationConfig beyond imageConfig (Gemini)

	video := sp.method == predictLongRunning
	switch {
	case video && job.Type == "image":
		r.refuse("type", "%s makes videos, not images", name)
	case !video && job.Type == "video":
		r.refuse("type", "%s makes images, not videos", name)
	}

	if a := job.AspectRatio; a != "" {
		if sp.aspects != nil && !slices.Contains(sp.aspects, a) {
			r.refuse("aspectRatio", "%s takes aspect ratios %s, not %s", name, strings.Join(sp.aspects, ", "), a)
		} else {
			params["aspectRatio"] = a
		}
	}

	n := max(job.NumOutputs, 1)
	switch {
	case sp.maxN == 1 && n > 1:
		r.refuse("numOutputs", "%s makes one output per request", name)
	case sp.maxN > 0 && n > sp.maxN:
		r.refuse("numOutputs", "%s makes at most %d outputs per request", name, sp.maxN)
	case sp.method == predict:
		params["sampleCount"] = n
	}

	if f := job.OutputFormat; video {
		if f != "" && f != "mp4" {
			r.refuse("outputFormat", "%s makes MP4 videos, not %s", name, f)
		}
	} else {
		if f == "" {
			f = "png"
		}
		if sp.formats != nil && !slices.Contains(sp.formats, f) {
			r.refuse("outputFormat", "%s delivers %s, not %s", name, strings.Join(sp.formats, " or "), f)
		}
		r.format = f
		switch {
		case sp.method == predict:
			params["outputOptions"] = map[string]any{"mimeType": "image/" + f}
		case on.vertex && slices.Contains(pngJPEG, f):
			// Vertex AI's generateContent writes the format itself.
			params["imageOutputOptions"] = map[string]any{"mimeType": "image/" + f}
		}
	}

	for _, key := range sortedKeys(job.Options) {
		v := job.Options[key]
		if v == nil {
			continue
		}
		switch key {
		case "aspectRatio", "numOutputs", "outputFormat", "prompt":
			continue // the Job's own fields, mapped above
		case "resolution":
			s := fmt.Sprint(v)
			if sp.sizes != nil && !slices.Contains(sp.sizes, s) {
				if len(sp.sizes) == 0 {
					r.refuse(key, "%s has no resolution option", name)
				} else {
					r.refuse(key, "%s takes resolutions %s, not %s", name, strings.Join(sp.sizes, ", "), s)
				}
				continue
			}
			params[map[method]string{generateContent: "imageSize", predict: "sampleImageSize", predictLongRunning: "resolution"}[sp.method]] = s
		case "duration":
			d, ok := v.(int64)
			switch {
			case !video:
				r.refuse(key, "%s makes images, which have no duration", name)
			case !ok:
				r.refuse(key, "duration %v is not a whole number of seconds", v)
			case sp.durations != nil && !slices.Contains(sp.durations, d):
				r.refuse(key, "%s makes videos of %s seconds, not %d", name, joinInts(sp.durations), d)
			default:
				params["durationSeconds"] = d
			}
		case "generateAudio":
			b, _ := v.(bool)
			switch {
			case !video:
				if b {
					r.refuse(key, "%s makes images, which have no sound", name)
				}
			case on.vertex:
				params["generateAudio"] = b
			case sp.audioAlways && !b:
				r.refuse(key, "%s on the Gemini API always generates audio", name)
			}
			// Not sent to the Gemini API, which takes no generateAudio.
		case "seed":
			switch {
			case on.vertex && sp.method == predict && job.Route.Params["addWatermark"] != false:
				// Imagen on Vertex AI: "seed is not available when
				// addWatermark is true" (the default); the operator
				// decides to drop the SynthID watermark, not a job.
				r.refuse(key, "%s on Vertex AI takes a seed only on unwatermarked images (the route's params must set addWatermark: false)", name)
			case sp.noSeed && !on.vertex:
				r.refuse(key, "the Gemini API takes no seed for %s", name)
			case sp.method == generateContent:
				extra["seed"] = v
			default:
				params["seed"] = v
			}
		default:
			if !sp.generic {
				r.refuse(key, "%s on %s has no %s option", name, on.name, key)
			}
			// An operator's own model: options that do not map are left
			// out; the route's params can set the upstream's own names.
		}
	}
	if _, set := job.Options["generateAudio"]; on.vertex && video && sp.audioAlways && !set {
		// Veo 3 on Vertex AI requires generateAudio; the catalog's default
		// is sound.
		params["generateAudio"] = true
	}
	if sp.hiResAt8 {
		res, _ := job.Options["resolution"].(string)
		if d, ok := job.Options["duration"].(int64); ok && d != 8 && res == "1080p" {
			r.refuse("duration", "%s makes %s videos of 8 seconds only, not %d", name, res, d)
		}
	}

	// Inputs.
	var parts []any
	if job.Prompt != "" {
		parts = append(parts, map[string]any{"text": job.Prompt})
	}
	instance := map[string]any{"prompt": job.Prompt}
	for _, field := range sortedKeys(job.Inputs) {
		to, ok := sp.inputs[field]
		if !ok {
			r.refuse(field, "%s on %s takes no %s input", name, on.name, field)
			continue
		}
		in := job.Inputs[field]
		if f, ok := files[field]; ok && sp.method == generateContent {
			parts = append(parts, map[string]any{"fileData": map[string]any{"mimeType": f.MIMEType, "fileUri": f.URI}})
			continue
		}
		var mime, data string
		if withData {
			mime = in.ContentType
			if mime == "" {
				mime = http.DetectContentType(in.Data)
			}
			data = base64.StdEncoding.EncodeToString(in.Data)
		}
		if sp.method == generateContent {
			parts = append(parts, map[string]any{"inlineData": map[string]any{"mimeType": mime, "data": data}})
			continue
		}
		instance[to] = map[string]any{"bytesBase64Encoded": data, "mimeType": mime}
	}
	if _, last := instance["lastFrame"]; last && instance["image"] == nil && !sp.generic {
		r.refuse("inputs.lastFrameUrl", "%s takes a last frame only with a first frame (imageUrl)", name)
	}
	if job.Prompt == "" && len(parts) == 0 {
		r.refuse("prompt", "%s needs a prompt", name)
	}

	// The body, with the route's params merged last.
	switch sp.method {
	case generateContent:
		gen := map[string]any{"responseModalities": []any{"IMAGE"}}
		for k, v := range extra {
			gen[k] = v
		}
		if len(params) > 0 {
			gen["imageConfig"] = params
		}
		r.body = map[string]any{"contents": []any{map[string]any{"role": "user", "parts": parts}}, "generationConfig": gen}
		params = gen
	case predict:
		params["includeRaiReason"] = true
		r.body = map[string]any{"instances": []any{map[string]any{"prompt": job.Prompt}}, "parameters": params}
	case predictLongRunning:
		r.body = map[string]any{"instances": []any{instance}, "parameters": params}
	}
	for k, v := range job.Route.Params {
		if !topLevel[k] {
			params[k] = v
			continue
		}
		// An object merges into the engine's own (generationConfig,
		// parameters); anything else replaces it.
		mine, ok1 := r.body[k].(map[string]any)
		theirs, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			r.body[k] = v
			continue
		}
		for kk, vv := range theirs {
			mine[kk] = vv
		}
	}
	return r
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
