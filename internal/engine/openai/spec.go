package openai

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gengate/gengate"
)

// spec is what one upstream model takes: its sizes by aspect ratio, its
// limits and the values it accepts. Nil lists accept anything.
type spec struct {
	video bool
	// sizes maps an aspect ratio to the upstream's size; nil picks the
	// nearest of the fallback sizes.
	sizes map[string]string
	// fallback lists the sizes the nearest one is picked from when sizes
	// is nil.
	fallback []string
	maxN     int      // most outputs per request; 0 knows no limit
	quality  []string // accepted quality values
	formats  []string // accepted output formats
	seconds  []int64  // accepted video durations
	mask     bool     // takes a mask with the input image
	// strict refuses options the spec does not name; generic specs (for
	// upstream ids this package does not know) send what maps instead.
	strict bool
}

var (
	gptImage = spec{
		sizes:   map[string]string{"1:1": "1024x1024", "3:2": "1536x1024", "2:3": "1024x1536"},
		maxN:    10,
		quality: []string{"low", "medium", "high", "auto"},
		formats: []string{"png", "jpeg", "webp"},
		mask:    true,
		strict:  true,
	}
	// gptImage2 is gpt-image-2, which takes free-form WIDTHxHEIGHT sizes
	// (sides multiples of 16, ratio between 1:3 and 3:1, at most
	// 3840x2160: openai-go@4e5a07a image.go, ImageGenerateParams.Size,
	// read 2026-11-23): gengate offers the usual ratios at about the
	// pixel count of 1536x1024, priced like it (docs/models.md). The GPT
	// Image 2.5 variants, gpt-image-2's successors, are mapped the same
	// way: no client type names them yet (openai-go of 2026-08 lists
	// gpt-image-2 as the newest), and docs/models.md promises gpt-image-2's
	// mapping for them.
	gptImage2 = spec{
		sizes: map[string]string{"1:1": "1024x1024", "3:2": "1536x1024", "2:3": "1024x1536",
			"16:9": "1536x864", "9:16": "864x1536", "4:3": "1344x1008", "3:4": "1008x1344"},
		maxN:    10,
		quality: []string{"low", "medium", "high", "auto"},
		formats: []string{"png", "jpeg", "webp"},
		mask:    true,
		strict:  true,
	}
	sora2 = spec{
		video:   true,
		sizes:   map[string]string{"16:9": "1280x720", "9:16": "720x1280"},
		maxN:    1,
		formats: []string{"mp4"},
		seconds: []int64{4, 8, 12},
		strict:  true,
	}
	// genericImage serves compatible servers and unknown image model ids.
	genericImage = spec{fallback: []string{"1024x1024", "1792x1024", "1024x1792"}, mask: true}
	// genericVideo serves unknown video model ids: the Videos API has no
	// square size.
	genericVideo = spec{video: true, fallback: []string{"1280x720", "720x1280"}, maxN: 1, formats: []string{"mp4"}}
)

// specs maps an upstream model id, or an id prefix, to what it takes: the
// longest matching key wins. Adding a model is one line.
var specs = map[string]*spec{
	"gpt-image-":             &gptImage,  // gpt-image-1, -1.5, -1-mini, -2, ...
	"gpt-image-2":            &gptImage2, // and its snapshots, gpt-image-2-2026-04-21
	"gpt-image-2.5-flare":    &gptImage2, // gpt-image-2's sizes: see gptImage2
	"gpt-image-2.5-sunburst": &gptImage2,
	"sora-2":                 &sora2,
	"sora-2-pro":             &sora2, // also 1792x1024; gengate asks for 720p
}

// specFor returns the spec for an upstream id on an engine.
func (e *Engine) specFor(upstreamID string, video bool) *spec {
	if !e.compatible {
		best := ""
		for k := range specs {
			if strings.HasPrefix(upstreamID, k) && len(k) > len(best) && specs[k].video == video {
				best = k
			}
		}
		if best != "" {
			return specs[best]
		}
	}
	if video {
		return &genericVideo
	}
	return &genericImage
}

// request is a job mapped to the upstream's names and values.
type request struct {
	video bool
	// fields are the request's parameters other than files, in the
	// upstream's names; params from the route are merged in last.
	fields map[string]any
	image  string // input field to send as the image file ("" for none)
	mask   string // input field to send as the mask ("" for none)
}

// plan maps job to the upstream's request, or says which field the routed
// upstream cannot do. It needs only the names of the inputs, so Validate
// and Submit share it.
func (e *Engine) plan(job gengate.Job) (*request, error) {
	video := job.Type == "video"
	if job.Type != "image" && !video {
		return nil, unsupported("type", fmt.Sprintf("type %q is not an image or a video", job.Type))
	}
	if video && e.compatible {
		return nil, unsupported("type", e.name+" serves only OpenAI's Images API, not videos")
	}
	sp := e.specFor(job.Route.Upstream, video)
	r := &request{video: video, fields: map[string]any{"prompt": job.Prompt}}
	if job.Route.Upstream != "" {
		r.fields["model"] = job.Route.Upstream
	}

	aspect := job.AspectRatio
	if aspect == "" {
		aspect, _ = job.Options["aspectRatio"].(string)
	}
	if aspect != "" {
		size, ok := sp.size(aspect)
		if !ok {
			return nil, unsupported("aspectRatio", fmt.Sprintf("%s cannot make aspect ratio %s", e.model(job), aspect))
		}
		r.fields["size"] = size
	}

	n := max(job.NumOutputs, 1)
	if v, ok := intOption(job.Options, "numOutputs"); ok && v > 0 {
		n = int(v)
	}
	if sp.maxN > 0 && n > sp.maxN {
		return nil, unsupported("numOutputs", fmt.Sprintf("%s makes at most %d outputs per request", e.model(job), sp.maxN))
	}
	if !video {
		r.fields["n"] = n
	}

	format := job.OutputFormat
	if format == "" {
		format, _ = job.Options["outputFormat"].(string)
	}
	if format != "" {
		if sp.formats != nil && !slices.Contains(sp.formats, format) {
			return nil, unsupported("outputFormat", fmt.Sprintf("%s cannot deliver %s", e.model(job), format))
		}
		if !video {
			r.fields["output_format"] = format
		}
	}

	for name, v := range job.Options {
		switch name {
		case "aspectRatio", "numOutputs", "outputFormat":
			// Mapped above from the job's own fields.
		case "quality":
			q, _ := v.(string)
			if video || (sp.quality != nil && !slices.Contains(sp.quality, q)) {
				if sp.strict {
					return nil, unsupported(name, fmt.Sprintf("%s has no quality %q", e.model(job), q))
				}
				continue
			}
			r.fields["quality"] = q
		case "duration":
			d, ok := intOption(job.Options, name)
			if !video || !ok {
				if sp.strict {
					return nil, unsupported(name, fmt.Sprintf("%s takes no duration", e.model(job)))
				}
				continue
			}
			if sp.seconds != nil && !slices.Contains(sp.seconds, d) {
				return nil, unsupported(name, fmt.Sprintf("%s makes videos of %s seconds, not %d", e.model(job), joinInts(sp.seconds), d))
			}
			r.fields["seconds"] = strconv.FormatInt(d, 10)
		default:
			if sp.strict {
				return nil, unsupported(name, fmt.Sprintf("%s has no option %s", e.model(job), name))
			}
		}
	}

	for name := range job.Inputs {
		switch {
		case name == "imageUrl" || name == "image":
			r.image = name
		case name == "mask" && !video && sp.mask:
			r.mask = name
		default:
			return nil, unsupported(name, fmt.Sprintf("%s takes no %s input", e.model(job), name))
		}
	}
	if r.mask != "" && r.image == "" {
		return nil, unsupported(r.mask, "a mask needs an image to edit")
	}

	for k, v := range job.Route.Params {
		r.fields[k] = v
	}
	return r, nil
}

// size returns the upstream size for an aspect ratio ("16:9").
func (sp *spec) size(aspect string) (string, bool) {
	if sp.sizes != nil {
		s, ok := sp.sizes[aspect]
		return s, ok
	}
	want, ok := ratio(aspect, ":")
	if !ok {
		return "", false
	}
	best, bestDist := "", math.Inf(1)
	for _, s := range sp.fallback {
		r, _ := ratio(s, "x")
		if d := math.Abs(math.Log(want / r)); d < bestDist {
			best, bestDist = s, d
		}
	}
	// A size of the other orientation is no answer (a square video).
	if bestDist > math.Log(1.5) {
		return "", false
	}
	return best, true
}

// ratio reads "16:9" or "1280x720" as width over height.
func ratio(s, sep string) (float64, bool) {
	w, h, ok := strings.Cut(s, sep)
	if !ok {
		return 0, false
	}
	wf, err1 := strconv.ParseFloat(w, 64)
	hf, err2 := strconv.ParseFloat(h, 64)
	if err1 != nil || err2 != nil || wf <= 0 || hf <= 0 {
		return 0, false
	}
	return wf / hf, true
}

// intOption reads an integer option whatever numeric type it arrived as.
func intOption(opts map[string]any, name string) (int64, bool) {
	switch v := opts[name].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		if v == math.Trunc(v) {
			return int64(v), true
		}
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

func (e *Engine) model(job gengate.Job) string {
	if job.Route.Upstream == "" {
		return e.name
	}
	return e.name + " " + job.Route.Upstream
}

func unsupported(field, msg string) *gengate.Error {
	return &gengate.Error{Code: gengate.EUnsupportedOption, Message: msg,
		Fields: []gengate.FieldError{{Field: field, Code: gengate.FieldUnsupported, Message: msg}}}
}
