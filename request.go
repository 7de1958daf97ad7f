package gengate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
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
	// WebhookURL is the optional webhookUrl member: where the task's
	// final-state event is delivered (webhook.go).
	WebhookURL string
	// WebhookEvents, set by the Replicate-compatible API (not a member of
	// the body), makes WebhookURL get these prediction events instead
	// (Task.WebhookEvents); set to FalWebhookEvents by the fal-compatible
	// queue, its fal event.
	WebhookEvents []string
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

// MaxFieldErrors caps the field errors one refusal lists; the others are
// only counted (the problem body's omittedErrors member), so that a body of
// millions of unknown fields answers with a small problem.
const MaxFieldErrors = 20

// ParseRequest decodes and validates the JSON body of a generate call held
// in memory; see DecodeRequest.
func (c *Catalog) ParseRequest(body []byte) (*Request, error) {
	return c.DecodeRequest(bytes.NewReader(body))
}

// DecodeRequest decodes and validates the JSON body of a generate call as
// it is read. Every problem found is reported at once (up to
// MaxFieldErrors, with a count of the rest), in one *Error: INVALID_REQUEST
// for malformed or missing fields, UNSUPPORTED_MODEL_OPTION when the request
// is well formed but asks the model for something it cannot do.
//
// The body is never held whole: members the catalog knows are kept (their
// raw JSON scalars), unknown ones are skipped as they stream past, and only
// the MaxFieldErrors first of their names (in sorted order) are kept for
// the report. Memory stays bounded by the known fields, whatever the size
// or shape of the body. A read error of r is reported as INVALID_REQUEST;
// the caller that needs its cause (a body over its size limit) keeps it.
func (c *Catalog) DecodeRequest(r io.Reader) (*Request, error) {
	b, err := c.decodeBody(r)
	if err != nil {
		return nil, err
	}
	return c.request(b)
}

// RequestOf validates a generate call given as decoded values, as
// DecodeRequest does its body: top holds the top-level members (as
// encoding/json decodes them; "inputs" a map[string]any), for a caller
// that decoded a body of its own (the provider-compatible APIs), so that
// the values are not written out and decoded again. The fingerprint is
// the one of the same members sent as a body.
func (c *Catalog) RequestOf(top map[string]any) (*Request, error) {
	b := &body{top: map[string]any{}}
	for _, k := range sortedKeysOf(top) {
		v := top[k]
		switch {
		case v == nil:
		case k == "inputs":
			in, ok := v.(map[string]any)
			if !ok {
				b.inputs = inputsWrongType
				continue
			}
			b.inputs, b.in = inputsObject, map[string]any{}
			for _, ik := range sortedKeysOf(in) {
				switch {
				case in[ik] == nil:
				case c.fields["inputs."+ik]:
					b.in[ik] = canonScalar(in[ik])
				default:
					b.noteUnknown([]byte("inputs." + ik))
				}
			}
		case k == "type" || k == "modelId" || k == WebhookURLField || c.fields[k]:
			b.top[k] = canonScalar(v)
		default:
			b.noteUnknown([]byte(k))
		}
	}
	return c.request(b)
}

func sortedKeysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// request validates a decoded body.
func (c *Catalog) request(b *body) (*Request, error) {
	v := validator{}
	typ := v.str(b.top, "type")
	modelID := v.str(b.top, "modelId")
	if len(v.invalid) > 0 {
		return nil, v.err(0)
	}
	if typ != "image" && typ != "video" {
		v.bad("type", FieldValue, `must be "image" or "video"`)
	}
	m, ok := c.byID[modelID]
	if !ok {
		v.bad("modelId", FieldValue, fmt.Sprintf("unknown model %q; GET /api/v1/models lists them", modelID))
		return nil, v.err(0)
	}
	if len(v.invalid) == 0 && m.Type != typ {
		v.bad("type", FieldValue, fmt.Sprintf("model %q makes %ss, not %ss", m.ID, m.Type, typ))
	}

	webhookURL := ""
	if raw, ok := b.top[WebhookURLField]; ok {
		webhookURL = v.webhookURL(raw)
	}
	// Flatten the optional "inputs" object into "inputs.<name>" fields.
	fields := map[string]any{}
	for k, val := range b.top {
		if k != "type" && k != "modelId" && k != WebhookURLField {
			fields[k] = val
		}
	}
	switch b.inputs {
	case inputsWrongType:
		v.bad("inputs", FieldType, "must be an object")
	case inputsObject:
		for ik, iv := range b.in {
			fields["inputs."+ik] = iv
		}
	}
	// Unknown names are checked with the known ones, in one sorted order.
	names := make([]string, 0, len(fields)+len(b.unknown))
	for k := range fields {
		names = append(names, k)
	}
	names = append(names, b.unknown...)
	sort.Strings(names)

	req := &Request{Model: m, Options: map[string]any{}, InputURLs: map[string]string{}, Fingerprint: b.fingerprint(),
		WebhookURL: webhookURL}
	for _, name := range names {
		f, ok := m.Field(name)
		if !ok && name == "numOutputs" {
			v.singleOutput(m, fields[name]) // the spec's general field: 1 on every model
			continue
		}
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
	for _, all := range [2][]Field{m.Inputs, m.Options} {
		for i := range all {
			f := &all[i]
			if _, given := fields[f.Name]; given {
				continue
			}
			if f.Required {
				v.bad(f.Name, FieldRequired, "is required")
			} else if f.Default != nil {
				req.Options[f.Name] = normalize(f.Default, f.Kind)
			}
		}
	}
	if len(v.invalid)+len(v.unsupp)+b.moreUnknown > 0 {
		return nil, v.err(b.moreUnknown)
	}
	return req, nil
}

// body is what DecodeRequest keeps of a request body: the members the
// catalog knows, decoded (null members dropped, a later duplicate replacing
// an earlier one), and the names of the first unknown ones.
type body struct {
	top    map[string]any // top-level members but "inputs"
	inputs int            // inputsAbsent, inputsObject or inputsWrongType
	in     map[string]any // the members of "inputs"
	// unknown holds the MaxFieldErrors smallest unknown member names
	// (nested ones as "inputs.<name>"), sorted and distinct; moreUnknown
	// counts the unknown members left out.
	unknown     []string
	moreUnknown int
}

const (
	inputsAbsent = iota
	inputsObject
	inputsWrongType
)

// fingerprint is the SHA-256 of the canonical body: keys sorted (maps
// marshal that way) and null members dropped, since null means absent. It
// matters only for an accepted body, whose members are all known scalars.
//
// The canonical bytes are those json.Marshal gives for the map of the
// members (fingerprints are stored, so they must not change), written by
// hand: marshalling a map through reflection was a third of the
// allocations of decoding a body.
func (b *body) fingerprint() string {
	buf := make([]byte, 0, 256)
	buf = appendCanonObject(buf, b.top, b.inputs != inputsAbsent, b.in)
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// appendCanonObject appends the JSON json.Marshal gives for the map of
// members m, plus "inputs": in when withInputs (in nil marshals as null).
func appendCanonObject(buf []byte, m map[string]any, withInputs bool, in map[string]any) []byte {
	keys := make([]string, 0, len(m)+1)
	for k := range m {
		if k != "inputs" || !withInputs {
			keys = append(keys, k)
		}
	}
	if withInputs {
		keys = append(keys, "inputs")
	}
	sort.Strings(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendCanonValue(buf, k)
		buf = append(buf, ':')
		if withInputs && k == "inputs" {
			if in == nil {
				buf = append(buf, "null"...)
			} else {
				buf = appendCanonObject(buf, in, false, nil)
			}
			continue
		}
		buf = appendCanonValue(buf, m[k])
	}
	return append(buf, '}')
}

// appendCanonValue appends v as json.Marshal writes it: by hand for a
// boolean and a string of plain printable ASCII (nothing json escapes),
// through json.Marshal for the rest.
func appendCanonValue(buf []byte, v any) []byte {
	switch v := v.(type) {
	case bool:
		return strconv.AppendBool(buf, v)
	case string:
		plain := true
		for i := 0; i < len(v) && plain; i++ {
			c := v[i]
			plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
		}
		if plain {
			buf = append(buf, '"')
			buf = append(buf, v...)
			return append(buf, '"')
		}
	}
	out, _ := json.Marshal(v)
	return append(buf, out...)
}

// noteUnknown records an unknown member's full name ("inputs.x" for a
// member of inputs), keeping only the smallest MaxFieldErrors distinct ones.
// It allocates only for a name it keeps.
func (b *body) noteUnknown(name []byte) {
	if len(b.unknown) == MaxFieldErrors && string(name) >= b.unknown[MaxFieldErrors-1] {
		if string(name) != b.unknown[MaxFieldErrors-1] {
			b.moreUnknown++
		}
		return
	}
	full := string(name)
	i, found := slices.BinarySearch(b.unknown, full)
	switch {
	case found:
	case len(b.unknown) < MaxFieldErrors:
		b.unknown = slices.Insert(b.unknown, i, full)
	default:
		b.unknown = slices.Insert(b.unknown[:MaxFieldErrors-1], i, full)
		b.moreUnknown++
	}
}

// decodeBody streams the JSON object in r into a body.
func (c *Catalog) decodeBody(r io.Reader) (*body, error) {
	s := newJSONScanner(r)
	defer s.release()
	b := &body{top: map[string]any{}}
	if err := s.bodyObject(); err != nil {
		return nil, err
	}
	err := s.object(0, func(name []byte) error {
		switch {
		case string(name) == "inputs":
			return c.decodeInputs(s, b)
		case string(name) == "type" || string(name) == "modelId" || string(name) == WebhookURLField || c.fields[string(name)]:
			v, null, err := s.scalar(1)
			if null {
				delete(b.top, string(name))
			} else if err == nil {
				b.top[string(name)] = v
			}
			return err
		}
		null, err := s.skip(1)
		if err == nil && !null {
			b.noteUnknown(name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeInputs streams the value of the "inputs" member into b.
func (c *Catalog) decodeInputs(s *jsonScanner, b *body) error {
	first, err := s.next()
	if err != nil {
		return err
	}
	if first != '{' {
		null, err := s.skip(1)
		b.inputs, b.in = inputsWrongType, nil
		if null {
			b.inputs = inputsAbsent
		}
		return err
	}
	b.inputs, b.in = inputsObject, map[string]any{}
	var full []byte
	return s.object(1, func(name []byte) error {
		full = append(append(full[:0], "inputs."...), name...)
		if !c.fields[string(full)] {
			null, err := s.skip(2)
			if err == nil && !null {
				b.noteUnknown(full)
			}
			return err
		}
		v, null, err := s.scalar(2)
		if null {
			delete(b.in, string(name))
		} else if err == nil {
			b.in[string(name)] = v
		}
		return err
	})
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

// err is the refusal for the errors found, listing at most MaxFieldErrors;
// more counts field errors found but not kept.
func (v *validator) err(more int) error {
	e := &Error{Code: EUnsupportedOption, Fields: v.unsupp}
	if len(v.invalid) > 0 {
		e.Code, e.Fields = EInvalid, append(v.invalid, v.unsupp...)
	}
	if n := len(e.Fields) - MaxFieldErrors; n > 0 {
		more += n
		e.Fields = e.Fields[:MaxFieldErrors:MaxFieldErrors]
	}
	first := e.Fields[0]
	if e.Code == EInvalid {
		e.Message = "invalid request: " + first.Field + " " + first.Message
	} else {
		e.Message = first.Field + ": " + first.Message
	}
	if more > 0 {
		e.Message += fmt.Sprintf(" (and %d more errors)", more)
		e.Extra = map[string]any{"omittedErrors": more}
	}
	return e
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
// singleOutput checks numOutputs on a model that makes one output per
// request: the spec makes numOutputs a general optional field, so 1 is
// accepted (and changes nothing); more is an option the model cannot do.
func (v *validator) singleOutput(m *Model, val any) {
	n, ok := val.(json.Number)
	if !ok {
		v.bad("numOutputs", FieldType, "must be a number")
		return
	}
	if i, err := n.Int64(); err != nil {
		v.bad("numOutputs", FieldType, "must be a whole number")
	} else if i != 1 {
		v.unsupported("numOutputs", FieldUnsupported, fmt.Sprintf("model %q makes one output per request; numOutputs can only be 1", m.ID))
	}
}

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
