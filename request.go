package gengate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxPromptLength is the longest prompt accepted, in characters.
const MaxPromptLength = 32000

// Request is a validated generation request: the model, its settings with
// defaults filled in, the URLs of its input files and the fingerprint that
// Idempotency-Key replays are compared by.
type Request struct {
	Model  *Model
	Prompt string
	// Options holds every option of the model with its value or default,
	// keyed by API name, normalized to string, int64, float64 or bool.
	Options map[string]any
	// InputURLs maps an input-file field ("imageUrl", "inputs.videoUrl") to
	// the URL the caller gave.
	InputURLs map[string]string
	// Fingerprint is the SHA-256 of the canonical JSON body.
	Fingerprint string
}

// AspectRatio returns the aspectRatio option, or "".
func (r *Request) AspectRatio() string { s, _ := r.Options["aspectRatio"].(string); return s }

// OutputFormat returns the outputFormat option, or "".
func (r *Request) OutputFormat() string { s, _ := r.Options["outputFormat"].(string); return s }

// NumOutputs returns the numOutputs option, 1 when the model has none.
func (r *Request) NumOutputs() int {
	if n, ok := r.Options["numOutputs"].(int64); ok && n > 0 {
		return int(n)
	}
	return 1
}

// ParseRequest decodes and validates the JSON body of a generate call.
// Every problem found is reported at once, in one *Error: INVALID_REQUEST
// for malformed or missing fields, UNSUPPORTED_MODEL_OPTION when the request
// is well formed but asks the model for something it cannot do.
func (c *Catalog) ParseRequest(body []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, Errorf(EInvalid, "request body is not valid JSON: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(EInvalid, "request body has data after the JSON object")
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, Errorf(EInvalid, "request body must be a JSON object")
	}
	// The fingerprint is taken over the canonical body: keys sorted (maps
	// marshal that way) and null members dropped, since null means absent.
	canon, _ := json.Marshal(dropNulls(obj))
	sum := sha256.Sum256(canon)

	v := validator{}
	typ := v.str(obj, "type")
	modelID := v.str(obj, "modelId")
	if len(v.invalid) > 0 {
		return nil, v.err()
	}
	if typ != "image" && typ != "video" {
		v.bad("type", FieldValue, `must be "image" or "video"`)
	}
	m, ok := c.byID[modelID]
	if !ok {
		v.bad("modelId", FieldValue, fmt.Sprintf("unknown model %q; GET /api/v1/models lists them", modelID))
		return nil, v.err()
	}
	if len(v.invalid) == 0 && m.Type != typ {
		v.bad("type", FieldValue, fmt.Sprintf("model %q makes %ss, not %ss", m.ID, m.Type, typ))
	}

	// Flatten the optional "inputs" object into "inputs.<name>" fields.
	fields := map[string]any{}
	for k, val := range obj {
		if k == "type" || k == "modelId" || val == nil {
			continue
		}
		if k == "inputs" {
			in, ok := val.(map[string]any)
			if !ok {
				v.bad("inputs", FieldType, "must be an object")
				continue
			}
			for ik, iv := range in {
				if iv != nil {
					fields["inputs."+ik] = iv
				}
			}
			continue
		}
		fields[k] = val
	}

	req := &Request{Model: m, Options: map[string]any{}, InputURLs: map[string]string{}, Fingerprint: hex.EncodeToString(sum[:])}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := m.Field(name)
		if !ok {
			if c.fields[name] {
				v.unsupported(name, FieldUnsupported, fmt.Sprintf("model %q does not take %s", m.ID, name))
			} else {
				v.bad(name, FieldUnknown, "unknown field")
			}
			continue
		}
		val, ok := v.check(f, fields[name])
		if !ok {
			continue
		}
		switch Kind := InputKind(f.Kind); Kind {
		case KindText:
			if name == "prompt" {
				req.Prompt = val.(string)
			} else {
				req.Options[name] = val
			}
		case KindImage, KindVideo:
			req.InputURLs[name] = val.(string)
		default:
			req.Options[name] = val
		}
	}
	for _, f := range m.Fields() {
		if _, given := fields[f.Name]; given {
			continue
		}
		if f.Required {
			v.bad(f.Name, FieldRequired, "is required")
		} else if f.Default != nil {
			req.Options[f.Name] = normalize(f.Default, f.Kind)
		}
	}
	if len(v.invalid)+len(v.unsupp) > 0 {
		return nil, v.err()
	}
	return req, nil
}

// dropNulls returns v without null object members, at any depth.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if val != nil {
				out[k] = dropNulls(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = dropNulls(val)
		}
		return out
	}
	return v
}

// validator collects field errors.
type validator struct {
	invalid []FieldError // malformed: INVALID_REQUEST
	unsupp  []FieldError // well formed, but not for this model
}

func (v *validator) bad(field, code, msg string) {
	v.invalid = append(v.invalid, FieldError{Field: field, Code: code, Message: msg})
}

func (v *validator) unsupported(field, code, msg string) {
	v.unsupp = append(v.unsupp, FieldError{Field: field, Code: code, Message: msg})
}

func (v *validator) err() error {
	if len(v.invalid) > 0 {
		fe := append(v.invalid, v.unsupp...)
		return &Error{Code: EInvalid, Message: "invalid request: " + fe[0].Field + " " + fe[0].Message, Fields: fe}
	}
	return &Error{Code: EUnsupportedOption, Message: v.unsupp[0].Field + ": " + v.unsupp[0].Message, Fields: v.unsupp}
}

// str reads a required string field.
func (v *validator) str(obj map[string]any, name string) string {
	val, ok := obj[name]
	if !ok || val == nil {
		v.bad(name, FieldRequired, "is required")
		return ""
	}
	s, ok := val.(string)
	if !ok {
		v.bad(name, FieldType, "must be a string")
		return ""
	}
	if s == "" {
		v.bad(name, FieldRequired, "must not be empty")
	}
	return s
}

// check validates one field's value and returns it normalized.
func (v *validator) check(f Field, val any) (any, bool) {
	switch f.Kind {
	case string(KindText):
		s, ok := val.(string)
		if !ok {
			v.bad(f.Name, FieldType, "must be a string")
			return nil, false
		}
		max := f.MaxLength
		if max == 0 {
			max = MaxPromptLength
		}
		if n := utf8.RuneCountInString(s); n > max {
			v.bad(f.Name, FieldTooLong, fmt.Sprintf("is %d characters; at most %d are allowed", n, max))
			return nil, false
		}
		if f.Required && strings.TrimSpace(s) == "" {
			v.bad(f.Name, FieldRequired, "must not be empty")
			return nil, false
		}
		return s, true
	case string(KindImage), string(KindVideo):
		s, ok := val.(string)
		if !ok {
			v.bad(f.Name, FieldType, "must be a URL string")
			return nil, false
		}
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "data:") {
			v.bad(f.Name, FieldValue, "must be an http(s) or data: URL")
			return nil, false
		}
		return s, true
	case KindEnum:
		s, ok := val.(string)
		if !ok {
			v.bad(f.Name, FieldType, "must be a string")
			return nil, false
		}
		if !allowed(f.Values, s) {
			v.unsupported(f.Name, FieldUnsupported, fmt.Sprintf("%q is not available; allowed: %s", s, listValues(f.Values)))
			return nil, false
		}
		return s, true
	case KindBool:
		b, ok := val.(bool)
		if !ok {
			v.bad(f.Name, FieldType, "must be true or false")
			return nil, false
		}
		return b, true
	case KindInt, KindNumber:
		n, ok := val.(json.Number)
		if !ok {
			v.bad(f.Name, FieldType, "must be a number")
			return nil, false
		}
		fl, err := n.Float64()
		if err != nil {
			v.bad(f.Name, FieldType, "must be a number")
			return nil, false
		}
		if f.Kind == KindInt {
			if _, err := n.Int64(); err != nil {
				v.bad(f.Name, FieldType, "must be a whole number")
				return nil, false
			}
		}
		if len(f.Values) > 0 && !allowed(f.Values, valueKey(normalize(n, f.Kind))) {
			v.unsupported(f.Name, FieldUnsupported, fmt.Sprintf("%s is not available; allowed: %s", n, listValues(f.Values)))
			return nil, false
		}
		if (f.Min != nil && fl < *f.Min) || (f.Max != nil && fl > *f.Max) {
			v.unsupported(f.Name, FieldUnsupported, fmt.Sprintf("%s is out of range %s", n, rangeText(f)))
			return nil, false
		}
		return normalize(n, f.Kind), true
	}
	v.bad(f.Name, FieldValue, "cannot be set")
	return nil, false
}

func allowed(values []any, s string) bool {
	for _, a := range values {
		if valueKey(a) == s {
			return true
		}
	}
	return false
}

func listValues(values []any) string {
	parts := make([]string, len(values))
	for i, a := range values {
		parts[i] = valueKey(a)
	}
	return strings.Join(parts, ", ")
}

func rangeText(f Field) string {
	lo, hi := "-∞", "∞"
	if f.Min != nil {
		lo = valueKey(*f.Min)
	}
	if f.Max != nil {
		hi = valueKey(*f.Max)
	}
	return "[" + lo + ", " + hi + "]"
}

// jsonProblem turns a decoder error into a short client message.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	return err.Error()
}

func asSyntax(err error, target **json.SyntaxError) bool {
	se, ok := err.(*json.SyntaxError)
	if ok {
		*target = se
	}
	return ok
}
