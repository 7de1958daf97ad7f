package replicate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gengate/gengate"
)

// Inverse maps a prediction's input, written in the Replicate model's own
// names (upstream: a route's owner/name[:version]), onto gengate's generate
// fields: the inverse of mapJob, read from the same table, so that the
// Replicate-compatible API (internal/httpapi) takes what Replicate's model
// takes. names maps each gengate field it set back to the Replicate input
// it came from, for errors. An input the model's mapping does not know is
// refused (INVALID_REQUEST, UNKNOWN_FIELD, naming the Replicate input).
func Inverse(upstream string, input map[string]any) (fields map[string]any, names map[string]string, err error) {
	s, _ := specFor(upstream)
	fields, names = map[string]any{}, map[string]string{}
	var bad []gengate.FieldError
	set := func(ours, theirs string, v any) {
		if _, dup := fields[ours]; dup {
			bad = append(bad, gengate.FieldError{Field: theirs, Code: gengate.FieldValue,
				Message: fmt.Sprintf("%s and %s both set %s", names[ours], theirs, ours)})
			return
		}
		fields[ours], names[ours] = v, theirs
	}
	// options: Replicate input name → gengate option and the spec field.
	type option struct{ ours, field string }
	options := map[string]option{}
	for _, o := range []option{{"aspectRatio", s.aspect}, {"outputFormat", s.format}, {"duration", s.duration},
		{"resolution", s.resolution}, {"scale", s.scale}} {
		if o.ours == "aspectRatio" && s.sizes != nil {
			continue
		}
		if p, ok := parseOpt(o.field); ok && p.param != "-" {
			options[p.param] = o
		}
	}
	outputs, _, _ := strings.Cut(s.outputs, "=")
	ins := parseInputs(s.in)
	inputs := map[string]string{} // Replicate input → gengate field
	for ours, in := range ins {
		inputs[in.param] = ours
	}
	width, height, _ := strings.Cut(s.sizeParam, ",")
	for _, k := range sortedKeys(input) {
		v := input[k]
		if v == nil {
			continue // null counts as absent, as on gengate's own API
		}
		o, isOption := options[k]
		field, isInput := inputs[k]
		switch {
		case k == "prompt" && !s.noPrompt:
			set("prompt", k, v)
		case isOption:
			p, _ := parseOpt(o.field)
			set(o.ours, k, p.ours(o.ours, v))
		case outputs != "" && k == outputs:
			set("numOutputs", k, v)
		case s.seed != "" && k == s.seed:
			set("seed", k, v)
		case s.audio != "" && k == s.audio:
			set("generateAudio", k, v)
		case s.sizes != nil && s.sizeParam == "size" && k == "size":
			key, ok := sizeKey(s.sizes, fmt.Sprint(v))
			if !ok {
				bad = append(bad, gengate.FieldError{Field: k, Code: gengate.FieldValue,
					Message: "size must be one of " + strings.Join(sortedValues(s.sizes), ", ")})
				continue
			}
			ar, res, hasRes := strings.Cut(key, "/")
			set("aspectRatio", k, ar)
			if hasRes {
				set("resolution", k, res)
			}
		case s.sizes != nil && k == width:
			w, okW := wholeNumber(v)
			h, okH := wholeNumber(input[height])
			key, ok := sizeKey(s.sizes, strconv.FormatInt(w, 10)+"*"+strconv.FormatInt(h, 10))
			if !okW || !okH || !ok {
				bad = append(bad, gengate.FieldError{Field: k, Code: gengate.FieldValue,
					Message: fmt.Sprintf("%s and %s must be one of the sizes %s", width, height, strings.Join(sortedValues(s.sizes), ", "))})
				continue
			}
			set("aspectRatio", k, key)
		case s.sizes != nil && k == height:
			// read with the width
		case isInput:
			if ins[field].list {
				l, ok := v.([]any)
				if !ok || len(l) > 1 {
					bad = append(bad, gengate.FieldError{Field: k, Code: gengate.FieldValue,
						Message: fmt.Sprintf("%s takes a list of one file here", k)})
					continue
				}
				if len(l) == 0 {
					continue
				}
				v = l[0]
			}
			set(field, k, v)
		default:
			bad = append(bad, gengate.FieldError{Field: k, Code: gengate.FieldUnknown,
				Message: fmt.Sprintf("this model takes no input %q here", k)})
		}
	}
	if len(bad) > 0 {
		return nil, nil, &gengate.Error{Code: gengate.EInvalid, Fields: bad,
			Message: "input " + bad[0].Field + ": " + bad[0].Message}
	}
	return fields, names, nil
}

// ours is the gengate value for the value v the model takes: a renamed
// value ("landscape") back to its gengate form ("16:9"), Replicate's "jpg"
// back to "jpeg"; anything else as given (gengate's validation judges it).
func (o opt) ours(name string, v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	for ours, theirs := range o.values {
		if theirs == s && ours != theirs {
			return ours
		}
	}
	if name == "outputFormat" && s == "jpg" {
		return "jpeg"
	}
	return s
}

// sizeKey finds the table key ("16:9" or "16:9/720p") of a size.
func sizeKey(sizes map[string]string, size string) (string, bool) {
	for _, k := range sortedKeys(sizes) {
		if sizes[k] == size {
			return k, true
		}
	}
	return "", false
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) {
			return int64(n), true
		}
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// Version returns the model (owner/name) and the version a route's
// upstream runs: its own version if it names one, else the pin of the
// engine's table ("" for an official model run by name).
func Version(upstream string) (name, version string) { return upstreamModel(upstream) }
