package fal

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// sizeKind says how an endpoint takes the job's aspect ratio.
type sizeKind int

const (
	// sizeNone: the endpoint takes no size; with an input image the output
	// follows the image's shape.
	sizeNone sizeKind = iota
	// sizeImage: image_size, a preset name or {width,height} near 1 MP.
	sizeImage
	// sizeAspect: aspect_ratio as "16:9".
	sizeAspect
	// sizeSeedream: image_size {width,height} at the 2K, 3K or 4K
	// resolution option (Seedream wants at least about 3.7 MP; Seedream 5
	// Lite at most 3072x3072 pixels, hence its 3K).
	sizeSeedream
	// sizeSeedreamAuto: image_size "auto_2K" or "auto_4K" (Seedream edit:
	// the output follows the input image).
	sizeSeedreamAuto
)

// durKind says how an endpoint takes the duration.
type durKind int

const (
	durNone durKind = iota
	durInt          // 4
	durStr          // "5"
	durSecs         // "8s"
	// durNotSent: the endpoint makes one duration (durs) and has no
	// duration field.
	durNotSent
)

// spec is what one fal endpoint takes: the mapping of gengate's options to
// its parameters and the values it can do. The zero value takes only a
// prompt and sends one output.
type spec struct {
	size   sizeKind
	ratios []string // aspect ratios for sizeAspect; sizeImage takes any
	images int      // most outputs per request; > 0 sends num_images
	// formats are the output_format values it takes; without them out is
	// the one format it delivers ("" when undocumented: any is accepted).
	formats []string
	out     string
	seed    bool
	dur     durKind
	durs    []int64 // durations it takes
	// durFree: the duration follows an input (motion control) and is not sent.
	durFree bool
	res     []string // resolutions it takes
	// resParam names the resolution parameter; "" when the endpoint implies it.
	resParam string
	// maxDur caps the duration at a resolution (PixVerse 1080p: 5 s).
	maxDur map[string]int64
	audio  bool    // generate_audio
	scales []int64 // scale values it takes (upscalers)
	// in maps gengate input fields to parameters; a parameter ending in
	// "_urls" gets a list.
	in map[string]string
	// need lists the inputs it cannot run without.
	need []string
	// pick lists the variant endpoints taken when a condition holds.
	pick []pick
	// fixed parameters sent as given.
	fixed map[string]any
	// noPrompt: the endpoint's schema has no prompt field.
	noPrompt bool
	// defaultPrompt is sent when the job has no prompt: an endpoint that
	// needs one (or an input in its place) for a model whose prompt is
	// optional.
	defaultPrompt string
}

// studioBackdrop is the background ai-background-generator asks for when
// the job describes none (catalog: "a neutral studio backdrop when
// absent"): Bria's replace needs a prompt or a reference image.
const studioBackdrop = "a neutral, evenly lit seamless studio backdrop in soft light grey, with a gentle shadow under the subject"

// pick switches to another endpoint when an input is present ("imageUrl")
// or an option has a value ("resolution=1080p").
type pick struct{ when, to string }

var (
	ratiosFlux    = []string{"1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3", "4:5", "5:4", "21:9", "9:21"}
	ratiosNano    = []string{"21:9", "16:9", "3:2", "4:3", "5:4", "1:1", "4:5", "3:4", "2:3", "9:16"}
	ratiosKontext = []string{"21:9", "16:9", "4:3", "3:2", "1:1", "2:3", "3:4", "9:16", "9:21"}
	ratiosImagen  = []string{"1:1", "16:9", "9:16", "3:4", "4:3"}
	ratiosWide    = []string{"16:9", "9:16"}
	ratios3       = []string{"16:9", "9:16", "1:1"}
	ratios5       = []string{"16:9", "9:16", "1:1", "4:3", "3:4"}
	ratiosSeed    = []string{"21:9", "16:9", "4:3", "1:1", "3:4", "9:16"}
	jpegPNG       = []string{"jpeg", "png"}
	jpegPNGWebP   = []string{"jpeg", "png", "webp"}
	img           = map[string]string{"imageUrl": "image_url"}
	imgs          = map[string]string{"imageUrl": "image_urls"}
	needImg       = []string{"imageUrl"}
)

// models holds what gengate knows of each fal endpoint, by endpoint id. The
// parameter names come from the fal model pages and fal-js's generated
// types (see the package doc). Adding a model is one line.
var models = map[string]spec{
	// Text to image.
	"fal-ai/flux/dev":                                 {size: sizeImage, images: 4, formats: jpegPNG, seed: true},
	"fal-ai/flux/schnell":                             {size: sizeImage, images: 4, formats: jpegPNG, seed: true},
	"fal-ai/flux-2-pro":                               {size: sizeImage, formats: jpegPNG, seed: true, pick: []pick{{"imageUrl", "fal-ai/flux-2-pro/edit"}}},
	"fal-ai/flux-2-pro/edit":                          {formats: jpegPNG, seed: true, in: imgs, need: needImg},
	"fal-ai/flux-pro/kontext/text-to-image":           {size: sizeAspect, ratios: ratiosKontext, images: 4, formats: jpegPNG, seed: true, pick: []pick{{"imageUrl", "fal-ai/flux-pro/kontext"}}},
	"fal-ai/flux-pro/kontext":                         {images: 4, formats: jpegPNG, seed: true, in: img, need: needImg},
	"fal-ai/nano-banana":                              {size: sizeAspect, ratios: ratiosNano, images: 4, formats: jpegPNGWebP, seed: true, pick: []pick{{"imageUrl", "fal-ai/nano-banana/edit"}}},
	"fal-ai/nano-banana/edit":                         {images: 4, formats: jpegPNGWebP, seed: true, in: imgs, need: needImg},
	"fal-ai/nano-banana-pro":                          {size: sizeAspect, ratios: ratiosNano, images: 4, formats: jpegPNGWebP, seed: true, res: []string{"1K", "2K", "4K"}, resParam: "resolution", pick: []pick{{"imageUrl", "fal-ai/nano-banana-pro/edit"}}},
	"fal-ai/nano-banana-pro/edit":                     {images: 4, formats: jpegPNGWebP, seed: true, res: []string{"1K", "2K", "4K"}, resParam: "resolution", in: imgs, need: needImg},
	"fal-ai/nano-banana-2":                            {size: sizeAspect, ratios: ratiosNano, images: 4, formats: jpegPNGWebP, seed: true, res: []string{"0.5K", "1K", "2K", "4K"}, resParam: "resolution", pick: []pick{{"imageUrl", "fal-ai/nano-banana-2/edit"}}},
	"fal-ai/nano-banana-2/edit":                       {images: 4, formats: jpegPNGWebP, seed: true, res: []string{"0.5K", "1K", "2K", "4K"}, resParam: "resolution", in: imgs, need: needImg},
	"fal-ai/z-image/turbo":                            {size: sizeImage, images: 4, formats: jpegPNGWebP, seed: true},
	"fal-ai/imagen4/preview/ultra":                    {size: sizeAspect, ratios: ratiosImagen, images: 4, formats: jpegPNGWebP, seed: true, res: []string{"1K", "2K"}, resParam: "resolution"},
	"fal-ai/imagen4/preview/fast":                     {size: sizeAspect, ratios: ratiosImagen, images: 4, formats: jpegPNGWebP, seed: true},
	"fal-ai/ideogram/v3":                              {size: sizeImage, images: 4, out: "png", seed: true, fixed: map[string]any{"rendering_speed": "TURBO"}},
	"fal-ai/stable-diffusion-v35-large":               {size: sizeImage, images: 4, formats: jpegPNG, seed: true},
	"fal-ai/bytedance/seedream/v4.5/text-to-image":    {size: sizeSeedream, images: 6, seed: true, res: []string{"2K", "4K"}, pick: []pick{{"imageUrl", "fal-ai/bytedance/seedream/v4.5/edit"}}},
	"fal-ai/bytedance/seedream/v4.5/edit":             {size: sizeSeedreamAuto, images: 6, seed: true, res: []string{"2K", "4K"}, in: imgs, need: needImg},
	"fal-ai/bytedance/seedream/v5/lite/text-to-image": {size: sizeSeedream, images: 6, res: []string{"2K", "3K"}, pick: []pick{{"imageUrl", "fal-ai/bytedance/seedream/v5/lite/edit"}}},
	"fal-ai/bytedance/seedream/v5/lite/edit":          {size: sizeSeedreamAuto, images: 6, res: []string{"2K", "3K"}, in: imgs, need: needImg},
	// The same endpoints under the ids fal lists them by since 2026-08
	// (fal-js@381105e endpoints.ts), the catalog's route.
	"bytedance/seedream/v5/lite/text-to-image": {size: sizeSeedream, images: 6, res: []string{"2K", "3K"}, pick: []pick{{"imageUrl", "bytedance/seedream/v5/lite/edit"}}},
	"bytedance/seedream/v5/lite/edit":          {size: sizeSeedreamAuto, images: 6, res: []string{"2K", "3K"}, in: imgs, need: needImg},

	// Image operations.
	"fal-ai/birefnet/v2":                      {noPrompt: true, formats: []string{"png", "webp", "gif"}, in: img, need: needImg},
	"fal-ai/bria/background/remove":           {noPrompt: true, out: "png", in: img, need: needImg},
	"fal-ai/bria/background/replace":          {in: img, need: needImg, defaultPrompt: studioBackdrop},
	"fal-ai/object-removal/mask":              {noPrompt: true, in: map[string]string{"image": "image_url", "mask": "mask_url"}, need: []string{"image", "mask"}},
	"fal-ai/bria/eraser":                      {noPrompt: true, out: "png", in: map[string]string{"image": "image_url", "mask": "mask_url"}, need: []string{"image", "mask"}},
	"fal-ai/esrgan":                           {noPrompt: true, formats: jpegPNG, scales: []int64{2, 4}, in: img, need: needImg},
	"fal-ai/image-apps-v2/photo-restoration":  {noPrompt: true, in: img, need: needImg},
	"fal-ai/qwen-image-edit":                  {images: 4, formats: jpegPNG, seed: true, in: map[string]string{"image": "image_url"}, need: []string{"image"}},
	"fal-ai/qwen-image-edit-plus":             {images: 4, formats: jpegPNG, seed: true, in: map[string]string{"image": "image_urls"}, need: []string{"image"}},
	"fal-ai/image-apps-v2/virtual-try-on":     {noPrompt: true, in: map[string]string{"personImage": "person_image_url", "clothImage": "clothing_image_url"}, need: []string{"personImage", "clothImage"}},
	"fal-ai/kling/v1-5/kolors-virtual-try-on": {noPrompt: true, in: map[string]string{"personImage": "human_image_url", "clothImage": "garment_image_url"}, need: []string{"personImage", "clothImage"}},
	"fal-ai/fashn/tryon/v1.6":                 {noPrompt: true, formats: jpegPNG, in: map[string]string{"personImage": "model_image", "clothImage": "garment_image"}, need: []string{"personImage", "clothImage"}},
	"half-moon-ai/ai-face-swap/faceswapimage": {noPrompt: true, in: map[string]string{"swapImage": "source_face_url", "inputImage": "target_image_url"}, need: []string{"swapImage", "inputImage"}},

	// Video.
	"fal-ai/sora-2/text-to-video":                     {size: sizeAspect, ratios: ratiosWide, dur: durStr, durs: []int64{4, 8, 12, 16, 20}, pick: []pick{{"imageUrl", "fal-ai/sora-2/image-to-video"}}},
	"fal-ai/sora-2/image-to-video":                    {dur: durStr, durs: []int64{4, 8, 12, 16, 20}, in: img, need: needImg},
	"fal-ai/veo3.1":                                   {size: sizeAspect, ratios: ratiosWide, dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p", "4k"}, resParam: "resolution", audio: true, seed: true, pick: []pick{{"inputs.lastFrameUrl", "fal-ai/veo3.1/first-last-frame-to-video"}, {"imageUrl", "fal-ai/veo3.1/image-to-video"}}},
	"fal-ai/veo3.1/image-to-video":                    {dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p", "4k"}, resParam: "resolution", audio: true, seed: true, in: img, need: needImg},
	"fal-ai/veo3.1/first-last-frame-to-video":         {dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p", "4k"}, resParam: "resolution", audio: true, seed: true, in: map[string]string{"imageUrl": "first_frame_url", "inputs.lastFrameUrl": "last_frame_url"}, need: []string{"imageUrl", "inputs.lastFrameUrl"}},
	"fal-ai/veo3.1/fast":                              {size: sizeAspect, ratios: ratiosWide, dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p", "4k"}, resParam: "resolution", audio: true, seed: true, pick: []pick{{"inputs.lastFrameUrl", "fal-ai/veo3.1/fast/first-last-frame-to-video"}, {"imageUrl", "fal-ai/veo3.1/fast/image-to-video"}}},
	"fal-ai/veo3.1/fast/image-to-video":               {dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p", "4k"}, resParam: "resolution", audio: true, seed: true, in: img, need: needImg},
	"fal-ai/veo3.1/fast/first-last-frame-to-video":    {dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p", "4k"}, resParam: "resolution", audio: true, seed: true, in: map[string]string{"imageUrl": "first_frame_url", "inputs.lastFrameUrl": "last_frame_url"}, need: []string{"imageUrl", "inputs.lastFrameUrl"}},
	"fal-ai/veo3":                                     {size: sizeAspect, ratios: ratiosWide, dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p"}, resParam: "resolution", audio: true, seed: true, pick: []pick{{"imageUrl", "fal-ai/veo3/image-to-video"}}},
	"fal-ai/veo3/image-to-video":                      {dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p"}, resParam: "resolution", audio: true, seed: true, in: img, need: needImg},
	"fal-ai/veo3/fast":                                {size: sizeAspect, ratios: ratiosWide, dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p"}, resParam: "resolution", audio: true, seed: true, pick: []pick{{"imageUrl", "fal-ai/veo3/fast/image-to-video"}}},
	"fal-ai/veo3/fast/image-to-video":                 {dur: durSecs, durs: []int64{4, 6, 8}, res: []string{"720p", "1080p"}, resParam: "resolution", audio: true, seed: true, in: img, need: needImg},
	"fal-ai/kling-video/v2.1/standard/image-to-video": {dur: durStr, durs: []int64{5, 10}, in: img, need: needImg},
	"fal-ai/kling-video/v2.1/master/text-to-video":    {size: sizeAspect, ratios: ratios3, dur: durStr, durs: []int64{5, 10}, pick: []pick{{"imageUrl", "fal-ai/kling-video/v2.1/master/image-to-video"}}},
	"fal-ai/kling-video/v2.1/master/image-to-video":   {dur: durStr, durs: []int64{5, 10}, in: img, need: needImg},
	"fal-ai/kling-video/v2.6/standard/motion-control": {durFree: true, in: map[string]string{"imageUrl": "image_url", "inputs.videoUrl": "video_url"}, need: []string{"imageUrl", "inputs.videoUrl"}, fixed: map[string]any{"character_orientation": "image"}},
	// Hailuo's standard tier is 768p and its pro tier 1080p (6 s only).
	"fal-ai/minimax/hailuo-2.3/standard/text-to-video":       {dur: durStr, durs: []int64{6, 10}, res: []string{"768p"}, pick: []pick{{"resolution=1080p", "fal-ai/minimax/hailuo-2.3/pro/text-to-video"}, {"imageUrl", "fal-ai/minimax/hailuo-2.3/standard/image-to-video"}}},
	"fal-ai/minimax/hailuo-2.3/standard/image-to-video":      {dur: durStr, durs: []int64{6, 10}, res: []string{"768p"}, in: img, need: needImg, pick: []pick{{"resolution=1080p", "fal-ai/minimax/hailuo-2.3/pro/image-to-video"}}},
	"fal-ai/minimax/hailuo-2.3/pro/text-to-video":            {dur: durNotSent, durs: []int64{6}, res: []string{"1080p"}, pick: []pick{{"imageUrl", "fal-ai/minimax/hailuo-2.3/pro/image-to-video"}}},
	"fal-ai/minimax/hailuo-2.3/pro/image-to-video":           {dur: durNotSent, durs: []int64{6}, res: []string{"1080p"}, in: img, need: needImg},
	"fal-ai/minimax/hailuo-2.3-fast/standard/image-to-video": {dur: durStr, durs: []int64{6, 10}, res: []string{"768p"}, in: img, need: needImg},
	"fal-ai/bytedance/seedance/v1/pro/fast/text-to-video":    {size: sizeAspect, ratios: ratiosSeed, dur: durStr, durs: []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, res: []string{"480p", "720p", "1080p"}, resParam: "resolution", seed: true, pick: []pick{{"imageUrl", "fal-ai/bytedance/seedance/v1/pro/fast/image-to-video"}}},
	"fal-ai/bytedance/seedance/v1/pro/fast/image-to-video":   {dur: durStr, durs: []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, res: []string{"480p", "720p", "1080p"}, resParam: "resolution", seed: true, in: img, need: needImg},
	"fal-ai/pixverse/v5/text-to-video":                       {size: sizeAspect, ratios: ratios5, dur: durStr, durs: []int64{5, 8}, res: []string{"360p", "540p", "720p", "1080p"}, resParam: "resolution", maxDur: map[string]int64{"1080p": 5}, seed: true, pick: []pick{{"imageUrl", "fal-ai/pixverse/v5/image-to-video"}}},
	"fal-ai/pixverse/v5/image-to-video":                      {dur: durStr, durs: []int64{5, 8}, res: []string{"360p", "540p", "720p", "1080p"}, resParam: "resolution", maxDur: map[string]int64{"1080p": 5}, seed: true, in: img, need: needImg},
	"fal-ai/wan-25-preview/text-to-video":                    {size: sizeAspect, ratios: ratios3, dur: durStr, durs: []int64{5, 10}, res: []string{"480p", "720p", "1080p"}, resParam: "resolution", seed: true, pick: []pick{{"imageUrl", "fal-ai/wan-25-preview/image-to-video"}}},
	"fal-ai/wan-25-preview/image-to-video":                   {dur: durStr, durs: []int64{5, 10}, res: []string{"480p", "720p", "1080p"}, resParam: "resolution", seed: true, in: img, need: needImg},
	"wan/v2.6/text-to-video":                                 {size: sizeAspect, ratios: ratios5, dur: durStr, durs: []int64{5, 10, 15}, res: []string{"720p", "1080p"}, resParam: "resolution", seed: true, pick: []pick{{"imageUrl", "wan/v2.6/image-to-video"}}},
	"wan/v2.6/image-to-video":                                {dur: durStr, durs: []int64{5, 10, 15}, res: []string{"720p", "1080p"}, resParam: "resolution", seed: true, in: img, need: needImg},
}

// generic is the mapping for an endpoint the table does not know (an
// operator's own route): it sends everything under fal's usual names and
// refuses nothing it could express.
var generic = spec{size: sizeAspect, images: 8, seed: true, dur: durInt, durFree: true, audio: true,
	resParam: "resolution", in: map[string]string{"imageUrl": "image_url", "image": "image_url", "mask": "mask_url",
		"inputs.lastFrameUrl": "last_frame_url", "inputs.videoUrl": "video_url", "personImage": "person_image_url",
		"clothImage": "clothing_image_url", "swapImage": "source_face_url", "inputImage": "target_image_url"}}

// request is one planned submit: the endpoint and its JSON body.
type request struct {
	endpoint string
	body     map[string]any
}

// plan maps job to the fal endpoint and request body for its route. Validate
// and Submit both call it, so they never disagree. The error is an
// UNSUPPORTED_MODEL_OPTION *gengate.Error naming every field the endpoint
// cannot do.
func plan(job gengate.Job) (request, error) {
	endpoint := strings.Trim(job.Route.Upstream, "/")
	if endpoint == "" {
		return request{}, gengate.Errorf(gengate.EInvalid, "fal: the route names no endpoint")
	}
	sp, known := models[endpoint]
	for range 4 { // variants chain at most a few steps (hailuo: tier, then image)
		next := ""
		for _, p := range sp.pick {
			if holds(job, p.when) {
				next = p.to
				break
			}
		}
		if next == "" {
			break
		}
		endpoint, sp = next, models[next]
	}
	if !known {
		sp = generic
	}
	p := &planner{job: job, sp: sp, known: known, body: map[string]any{}}
	p.build()
	if len(p.bad) > 0 {
		names := make([]string, len(p.bad))
		for i, f := range p.bad {
			names[i] = f.Field
		}
		return request{}, &gengate.Error{Code: gengate.EUnsupportedOption, Fields: p.bad,
			Message: fmt.Sprintf("fal endpoint %s cannot do the requested %s", endpoint, strings.Join(names, ", "))}
	}
	for k, v := range job.Route.Params {
		p.body[k] = v
	}
	return request{endpoint: endpoint, body: p.body}, nil
}

// holds reports whether a pick condition holds for job.
func holds(job gengate.Job, when string) bool {
	if name, value, ok := strings.Cut(when, "="); ok {
		return fmt.Sprint(job.Options[name]) == value
	}
	_, ok := job.Inputs[when]
	return ok
}

// planner builds one request body, collecting the fields it cannot map.
type planner struct {
	job   gengate.Job
	sp    spec
	known bool
	body  map[string]any
	bad   []gengate.FieldError
}

func (p *planner) refuse(field, format string, args ...any) {
	p.bad = append(p.bad, gengate.FieldError{Field: field, Code: gengate.FieldUnsupported, Message: fmt.Sprintf(format, args...)})
}

func (p *planner) build() {
	job, sp := p.job, p.sp
	switch {
	case job.Prompt == "" && sp.defaultPrompt != "":
		p.body["prompt"] = sp.defaultPrompt
	case job.Prompt == "":
	case sp.noPrompt:
		p.refuse("prompt", "this endpoint takes no prompt")
	default:
		p.body["prompt"] = job.Prompt
	}
	p.inputs()
	p.aspect()
	if n := max(job.NumOutputs, 1); sp.images > 0 {
		if n > sp.images {
			p.refuse("numOutputs", "this endpoint makes at most %d outputs", sp.images)
		}
		p.body["num_images"] = n
	} else if n > 1 {
		p.refuse("numOutputs", "this endpoint makes one output")
	}
	p.format()
	handled := map[string]bool{"aspectRatio": true, "numOutputs": true, "outputFormat": true}
	for _, name := range sortedKeys(job.Options) {
		if handled[name] {
			continue
		}
		p.option(name, job.Options[name])
	}
	if sp.maxDur != nil {
		res, _ := job.Options["resolution"].(string)
		if d, ok := toInt(job.Options["duration"]); ok && sp.maxDur[res] > 0 && d > sp.maxDur[res] {
			p.refuse("duration", "at %s this endpoint makes at most %d s", res, sp.maxDur[res])
		}
	}
	for k, v := range sp.fixed {
		p.body[k] = v
	}
}

// inputs sends every input file as a data: URI under its parameter name.
func (p *planner) inputs() {
	for _, name := range p.sp.need {
		if _, ok := p.job.Inputs[name]; !ok {
			p.refuse(name, "this endpoint needs %s", name)
		}
	}
	for _, name := range sortedKeys(p.job.Inputs) {
		param, ok := p.sp.in[name]
		if !ok {
			if p.known {
				p.refuse(name, "this endpoint takes no %s", name)
			}
			continue
		}
		uri := upstream.DataURI(p.job.Inputs[name])
		if strings.HasSuffix(param, "_urls") {
			p.body[param] = append(asList(p.body[param]), uri)
		} else {
			p.body[param] = uri
		}
	}
}

func asList(v any) []string {
	l, _ := v.([]string)
	return l
}

// aspect maps the aspect ratio.
func (p *planner) aspect() {
	ar := p.job.AspectRatio
	if ar == "" {
		return
	}
	switch p.sp.size {
	case sizeImage:
		p.body["image_size"] = imageSize(ar)
	case sizeAspect:
		if p.sp.ratios != nil && !slices.Contains(p.sp.ratios, ar) {
			p.refuse("aspectRatio", "this endpoint takes the aspect ratios %s", strings.Join(p.sp.ratios, ", "))
			return
		}
		p.body["aspect_ratio"] = ar
	case sizeSeedream:
		area := 2048 * 2048
		switch p.job.Options["resolution"] {
		case "3K":
			area = 3072 * 3072
		case "4K":
			area = 4096 * 4096
		}
		w, h, ok := sides(ar, area)
		if !ok {
			p.refuse("aspectRatio", "not a ratio")
			return
		}
		p.body["image_size"] = map[string]any{"width": w, "height": h}
	case sizeSeedreamAuto:
		// The output follows the input image; resolution picks the preset.
	case sizeNone:
		// With an input image the output follows the image's shape; with
		// none the endpoint has one shape.
		if len(p.job.Inputs) == 0 && len(p.sp.need) == 0 {
			p.refuse("aspectRatio", "this endpoint takes no aspect ratio")
		}
	}
}

// imageSize names fal's image_size preset for a ratio, or a custom size
// near 1 MP with sides multiple of 16.
func imageSize(ar string) any {
	presets := map[string]string{"1:1": "square_hd", "4:3": "landscape_4_3", "3:4": "portrait_4_3",
		"16:9": "landscape_16_9", "9:16": "portrait_16_9"}
	if s, ok := presets[ar]; ok {
		return s
	}
	w, h, ok := sides(ar, 1024*1024)
	if !ok {
		return "square_hd"
	}
	return map[string]any{"width": w, "height": h}
}

// sides returns a width and height with ratio ar ("21:9") and at most
// about area pixels, each a multiple of 16.
func sides(ar string, area int) (w, h int, ok bool) {
	a, b, found := strings.Cut(ar, ":")
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if !found || err1 != nil || err2 != nil || x <= 0 || y <= 0 {
		return 0, 0, false
	}
	w = max(int(math.Sqrt(float64(area)*x/y)/16)*16, 16)
	h = max(int(math.Round(float64(w)*y/x/16))*16, 16)
	if w*h > area && h > 16 {
		h -= 16
	}
	return w, h, true
}

// format maps the output format.
func (p *planner) format() {
	f := p.job.OutputFormat
	if f == "" || p.job.Type == "video" {
		if f != "" && f != "mp4" {
			p.refuse("outputFormat", "fal videos are mp4")
		}
		return
	}
	switch {
	case p.sp.formats != nil:
		if !slices.Contains(p.sp.formats, f) {
			p.refuse("outputFormat", "this endpoint delivers %s", strings.Join(p.sp.formats, ", "))
			return
		}
		p.body["output_format"] = f
	case !p.known:
		p.body["output_format"] = f
	case p.sp.out != "" && p.sp.out != f:
		p.refuse("outputFormat", "this endpoint delivers %s only", p.sp.out)
	}
}

// option maps one of the model's other options.
func (p *planner) option(name string, v any) {
	sp := p.sp
	switch name {
	case "duration":
		d, ok := toInt(v)
		switch {
		case !ok:
			p.refuse(name, "not a whole number of seconds")
		case !p.known:
			p.body["duration"] = d
		case sp.durFree:
			// The duration follows an input (the reference video).
		case !slices.Contains(sp.durs, d):
			p.refuse(name, "this endpoint makes %s s videos", joinInts(sp.durs))
		case sp.dur == durInt:
			p.body["duration"] = d
		case sp.dur == durStr:
			p.body["duration"] = strconv.FormatInt(d, 10)
		case sp.dur == durSecs:
			p.body["duration"] = strconv.FormatInt(d, 10) + "s"
		case sp.dur == durNotSent:
			// The endpoint's one duration; it has no field for it.
		}
	case "resolution":
		r := fmt.Sprint(v)
		switch {
		case !p.known:
			p.body["resolution"] = r
		case !slices.Contains(sp.res, r):
			if sp.res == nil {
				p.refuse(name, "this endpoint has no resolution setting")
			} else {
				p.refuse(name, "this endpoint makes %s", strings.Join(sp.res, ", "))
			}
		case sp.size == sizeSeedreamAuto:
			p.body["image_size"] = "auto_" + r
		case sp.resParam != "":
			p.body[sp.resParam] = r
		}
	case "generateAudio":
		b, ok := v.(bool)
		switch {
		case sp.audio && ok:
			p.body["generate_audio"] = b
		case ok && !b:
			// Silence is what an endpoint without audio makes anyway.
		default:
			p.refuse(name, "this endpoint has no audio setting")
		}
	case "seed":
		s, ok := toInt(v)
		if !sp.seed || !ok {
			p.refuse(name, "this endpoint takes no seed")
			return
		}
		p.body["seed"] = s
	case "scale":
		s, ok := toInt(v)
		switch {
		case !p.known && ok:
			p.body["scale"] = s
		case !ok || !slices.Contains(sp.scales, s):
			p.refuse(name, "this endpoint scales by %s", joinInts(sp.scales))
		default:
			p.body["scale"] = s
		}
	case "removeScratches":
		// photo-restoration: an AI restorer repairs the damage it sees
		// whatever this says; the option switches the built-in engine's
		// scratch filling (docs/models.md)
	default:
		if p.known {
			p.refuse(name, "fal has no mapping for %s", name)
		}
	}
}

// toInt reads a whole number from an option value (int64 from the
// catalog, float64 from JSON).
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) {
			return int64(n), true
		}
	}
	return 0, false
}

func joinInts(ns []int64) string {
	if len(ns) == 0 {
		return "no"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.FormatInt(n, 10)
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
