package fal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gengate/gengate"
)

// Inverse maps the input of a queue submit to endpoint (a catalog route's
// endpoint, or a variant it switches to), written in the endpoint's fal
// names, onto gengate's generate fields: the inverse of plan, read from
// the same table, so that the fal-compatible queue (internal/httpapi)
// takes what fal's endpoint takes. names maps each gengate field it set
// back to the fal parameter it came from, for errors. A parameter the
// endpoint's mapping does not know is refused (INVALID_REQUEST,
// UNKNOWN_FIELD, naming the parameter).
//
// A custom image_size ({width, height}) comes back as its exact ratio
// ("1200:800" reduced to "3:2"); the caller picks the model's nearest.
func Inverse(endpoint string, input map[string]any) (fields map[string]any, names map[string]string, err error) {
	sp, known := models[strings.Trim(endpoint, "/")]
	if !known {
		sp = generic
	}
	fields, names = map[string]any{}, map[string]string{}
	var bad []gengate.FieldError
	refuse := func(param, code, format string, args ...any) {
		bad = append(bad, gengate.FieldError{Field: param, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	set := func(ours, theirs string, v any) {
		if _, dup := fields[ours]; dup {
			refuse(theirs, gengate.FieldValue, "%s and %s both set %s", names[ours], theirs, ours)
			return
		}
		fields[ours], names[ours] = v, theirs
	}
	inputs := map[string]string{} // fal parameter → gengate field
	for _, ours := range sortedKeys(sp.in) {
		if _, taken := inputs[sp.in[ours]]; !taken {
			inputs[sp.in[ours]] = ours
		}
	}
	for _, k := range sortedKeys(input) {
		v := input[k]
		if v == nil {
			continue // null counts as absent, as on gengate's own API
		}
		field, isInput := inputs[k]
		fixed, isFixed := sp.fixed[k]
		switch {
		case k == "prompt" && !sp.noPrompt:
			set("prompt", k, v)
		case k == "image_size" && (sp.size == sizeImage || sp.size == sizeSeedream):
			ar, ok := sizeRatio(v)
			if !ok {
				refuse(k, gengate.FieldValue, "image_size must be square_hd, square, landscape_4_3, portrait_4_3, landscape_16_9, portrait_16_9 or {width, height}")
				continue
			}
			set("aspectRatio", k, ar)
			if sp.size == sizeSeedream {
				if res := seedreamResolution(v, sp.res); res != "" {
					set("resolution", k, res)
				}
			}
		case k == "image_size" && sp.size == sizeSeedreamAuto:
			s, _ := v.(string)
			res, ok := strings.CutPrefix(s, "auto_")
			if !ok {
				refuse(k, gengate.FieldValue, "image_size here is auto_%s", strings.Join(sp.res, " or auto_"))
				continue
			}
			set("resolution", k, res)
		case k == "aspect_ratio" && sp.size == sizeAspect:
			set("aspectRatio", k, v)
		case k == "num_images" && sp.images > 0:
			set("numOutputs", k, v)
		case k == "output_format" && (sp.formats != nil || !known):
			set("outputFormat", k, v)
		case k == "duration" && (sp.dur != durNone && sp.dur != durNotSent || !known):
			d, ok := seconds(v)
			if !ok {
				refuse(k, gengate.FieldValue, "duration must be a whole number of seconds")
				continue
			}
			set("duration", k, d)
		case sp.resParam != "" && k == sp.resParam:
			set("resolution", k, v)
		case k == "generate_audio" && sp.audio:
			set("generateAudio", k, v)
		case k == "seed" && sp.seed:
			set("seed", k, v)
		case k == "scale" && (sp.scales != nil || !known):
			set("scale", k, v)
		case isInput:
			if strings.HasSuffix(k, "_urls") {
				l, ok := v.([]any)
				if !ok || len(l) > 1 {
					refuse(k, gengate.FieldValue, "%s takes a list of one file here", k)
					continue
				}
				if len(l) == 0 {
					continue
				}
				v = l[0]
			}
			set(field, k, v)
		case isFixed:
			if fmt.Sprint(v) != fmt.Sprint(fixed) {
				refuse(k, gengate.FieldUnsupported, "%s is always %v here", k, fixed)
			}
		default:
			refuse(k, gengate.FieldUnknown, "this endpoint takes no %q here", k)
		}
	}
	if len(bad) > 0 {
		return nil, nil, &gengate.Error{Code: gengate.EInvalid, Fields: bad, Message: "input " + bad[0].Field + ": " + bad[0].Message}
	}
	return fields, names, nil
}

// Variants returns endpoint and the variant endpoints its table switches
// to (an edit or image-to-video endpoint when an image is given), each
// once: a queue submit to any of them runs the model whose route names
// endpoint.
func Variants(endpoint string) []string {
	out := []string{endpoint}
	for i := 0; i < len(out) && i < 16; i++ {
		for _, p := range models[out[i]].pick {
			if !slices.Contains(out, p.to) {
				out = append(out, p.to)
			}
		}
	}
	return out
}

// sizeRatio reads image_size as an aspect ratio: a preset's, or a custom
// size's reduced ratio.
func sizeRatio(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		r, ok := map[string]string{"square_hd": "1:1", "square": "1:1", "landscape_4_3": "4:3", "portrait_4_3": "3:4",
			"landscape_16_9": "16:9", "portrait_16_9": "9:16"}[s]
		return r, ok
	case map[string]any:
		w, okW := toInt(s["width"])
		h, okH := toInt(s["height"])
		if !okW || !okH || w <= 0 || h <= 0 {
			return "", false
		}
		g := gcd(w, h)
		return strconv.FormatInt(w/g, 10) + ":" + strconv.FormatInt(h/g, 10), true
	}
	return "", false
}

// seedreamResolution is the resolution whose area a custom Seedream size
// is nearest to, among those the endpoint takes.
func seedreamResolution(v any, res []string) string {
	m, _ := v.(map[string]any)
	w, _ := toInt(m["width"])
	h, _ := toInt(m["height"])
	area := w * h
	best, bestD := "", int64(-1)
	for _, r := range res {
		side := map[string]int64{"2K": 2048, "3K": 3072, "4K": 4096}[r]
		d := side*side - area
		if d < 0 {
			d = -d
		}
		if side > 0 && (bestD < 0 || d < bestD) {
			best, bestD = r, d
		}
	}
	return best
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// seconds reads a fal duration: 5, "5" or "5s".
func seconds(v any) (int64, bool) {
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "s"), 10, 64)
		return n, err == nil
	}
	return toInt(v)
}
