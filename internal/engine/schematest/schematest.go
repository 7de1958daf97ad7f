// Package schematest checks request bodies against a provider's published
// input schema, for the strict provider fakes (faltest, replicatetest,
// openaitest, googletest). A schema is data: a source (the repository and
// path, or the page, it was read from), the date it was read, and its fields
// in a one-line notation, plus the rules across fields that the provider
// states in prose. Each fake turns the problems into its provider's error
// answer (fal 422 {"detail": [...]}, Replicate 422 problem JSON, OpenAI 400
// {"error": {...}}, Google 400 {"error": {"status": "INVALID_ARGUMENT"}}).
//
// Field notation, fields separated by spaces:
//
//	name:type[range]!
//
// "!" marks a required field. Types: str, url (an http(s) URL or a base64
// data: URI), urls (a list of url), strs, int, num, bool, any,
// enum(a|b|c) (strings), ienum(4|8|12) (integers), size(p|q) (one of the
// presets or {"width","height"} integers). A range is [lo..hi] (either side
// may be empty): the value of a number, the length of a str, the item count
// of a list. An enum value with a space is written with "~" for the space.
package schematest

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Schema is one endpoint's (or model version's) published input schema.
type Schema struct {
	Source string // repository@commit path, or page URL
	Read   string // date read, YYYY-MM-DD
	Fields string // field notation (package doc)
	// Open accepts fields the schema does not name (providers that ignore
	// unknown fields where the schema says so); strict by default.
	Open  bool
	Rules []Rule

	once   sync.Once
	parsed map[string]field
	err    error
}

// Rule is a constraint across fields that the provider states in prose.
// Bad reports whether in breaks it.
type Rule struct {
	Field string // the field to blame
	Msg   string
	Bad   func(in map[string]any) bool
}

// Problem is one way a body breaks its schema.
type Problem struct {
	Field string
	Kind  string // missing, extra, type, enum, range, rule
	Msg   string
}

func (p Problem) String() string { return p.Field + ": " + p.Msg }

type field struct {
	typ      string
	values   []string
	lo, hi   *float64
	required bool
}

// Names returns the schema's field names, sorted.
func (s *Schema) Names() []string {
	fs, _ := s.fields()
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Required returns the names of the required fields, sorted.
func (s *Schema) Required() []string {
	var out []string
	for _, n := range s.Names() {
		if f, _ := s.fields(); f[n].required {
			out = append(out, n)
		}
	}
	return out
}

// Enum returns the values of an enum field, nil if it is not one.
func (s *Schema) Enum(name string) []string {
	fs, _ := s.fields()
	return fs[name].values
}

func (s *Schema) fields() (map[string]field, error) {
	s.once.Do(func() { s.parsed, s.err = parse(s.Fields) })
	return s.parsed, s.err
}

// Valid reports a schema that cannot be parsed, or lacks its source or date.
func (s *Schema) Valid() error {
	if _, err := s.fields(); err != nil {
		return err
	}
	if s.Source == "" || len(s.Read) != len("2006-01-02") {
		return fmt.Errorf("schematest: schema without source or read date")
	}
	return nil
}

func parse(text string) (map[string]field, error) {
	out := map[string]field{}
	for _, tok := range splitTop(text) {
		name, spec, ok := strings.Cut(tok, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("schematest: bad field %q", tok)
		}
		var f field
		spec, f.required = strings.CutSuffix(spec, "!")
		if i := strings.LastIndex(spec, "["); i >= 0 && strings.HasSuffix(spec, "]") {
			lo, hi, _ := strings.Cut(spec[i+1:len(spec)-1], "..")
			if lo != "" {
				v, err := strconv.ParseFloat(lo, 64)
				if err != nil {
					return nil, fmt.Errorf("schematest: %s: bad range", name)
				}
				f.lo = &v
			}
			if hi != "" {
				v, err := strconv.ParseFloat(hi, 64)
				if err != nil {
					return nil, fmt.Errorf("schematest: %s: bad range", name)
				}
				f.hi = &v
			}
			spec = spec[:i]
		}
		if i := strings.Index(spec, "("); i >= 0 && strings.HasSuffix(spec, ")") {
			f.values = strings.Split(spec[i+1:len(spec)-1], "|")
			for j, v := range f.values {
				f.values[j] = strings.ReplaceAll(v, "~", " ")
			}
			spec = spec[:i]
		}
		switch spec {
		case "str", "url", "urls", "strs", "int", "num", "bool", "any", "enum", "ienum", "size", "obj":
		default:
			return nil, fmt.Errorf("schematest: %s: unknown type %q", name, spec)
		}
		f.typ = spec
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("schematest: %s twice", name)
		}
		out[name] = f
	}
	return out, nil
}

// splitTop splits on spaces outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		}
		space := r == ' ' || r == '\n' || r == '\t'
		if space && depth == 0 {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// Check returns every way in breaks the schema, in field order.
func (s *Schema) Check(in map[string]any) []Problem {
	fs, err := s.fields()
	if err != nil {
		return []Problem{{Field: "(schema)", Kind: "schema", Msg: err.Error()}}
	}
	var ps []Problem
	for _, name := range sortedKeys(fs) {
		f := fs[name]
		v, ok := in[name]
		if !ok || v == nil {
			if f.required {
				ps = append(ps, Problem{name, "missing", "field required"})
			}
			continue
		}
		if p, bad := f.check(v); bad {
			p.Field = name
			ps = append(ps, p)
		}
	}
	if !s.Open {
		for _, name := range sortedKeys(in) {
			if _, ok := fs[name]; !ok {
				ps = append(ps, Problem{name, "extra", "extra inputs are not permitted"})
			}
		}
	}
	if len(ps) == 0 {
		for _, r := range s.Rules {
			if r.Bad(in) {
				ps = append(ps, Problem{r.Field, "rule", r.Msg})
			}
		}
	}
	return ps
}

func (f field) check(v any) (Problem, bool) {
	switch f.typ {
	case "any":
		return Problem{}, false
	case "str", "enum":
		s, ok := v.(string)
		if !ok {
			return Problem{Kind: "type", Msg: "input should be a valid string"}, true
		}
		if f.typ == "enum" && !slices.Contains(f.values, s) {
			return Problem{Kind: "enum", Msg: "input should be " + quoteList(f.values)}, true
		}
		return f.rangeOf(float64(len([]rune(s))), "length")
	case "url":
		if s, ok := v.(string); !ok || !isURL(s) {
			return Problem{Kind: "type", Msg: "input should be a valid URL"}, true
		}
	case "urls", "strs":
		l, ok := v.([]any)
		if !ok {
			return Problem{Kind: "type", Msg: "input should be a valid list"}, true
		}
		for _, x := range l {
			s, ok := x.(string)
			if !ok || (f.typ == "urls" && !isURL(s)) {
				return Problem{Kind: "type", Msg: "list items should be valid " + map[bool]string{true: "URLs", false: "strings"}[f.typ == "urls"]}, true
			}
		}
		return f.rangeOf(float64(len(l)), "item count")
	case "int", "ienum":
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) {
			return Problem{Kind: "type", Msg: "input should be a valid integer"}, true
		}
		if f.typ == "ienum" && !slices.Contains(f.values, strconv.FormatFloat(n, 'f', -1, 64)) {
			return Problem{Kind: "enum", Msg: "input should be " + strings.Join(f.values, ", ")}, true
		}
		return f.rangeOf(n, "value")
	case "num":
		n, ok := v.(float64)
		if !ok {
			return Problem{Kind: "type", Msg: "input should be a valid number"}, true
		}
		return f.rangeOf(n, "value")
	case "bool":
		if _, ok := v.(bool); !ok {
			return Problem{Kind: "type", Msg: "input should be a valid boolean"}, true
		}
	case "obj":
		if _, ok := v.(map[string]any); !ok {
			return Problem{Kind: "type", Msg: "input should be a valid object"}, true
		}
	case "size":
		if s, ok := v.(string); ok {
			if !slices.Contains(f.values, s) {
				return Problem{Kind: "enum", Msg: "input should be " + quoteList(f.values) + " or {width, height}"}, true
			}
			return Problem{}, false
		}
		m, ok := v.(map[string]any)
		if !ok {
			return Problem{Kind: "type", Msg: "input should be a preset name or {width, height}"}, true
		}
		for _, k := range []string{"width", "height"} {
			n, ok := m[k].(float64)
			if !ok || n != math.Trunc(n) || n <= 0 || n > 14142 {
				return Problem{Kind: "type", Msg: k + " should be an integer from 1 to 14142"}, true
			}
		}
		if len(m) != 2 {
			return Problem{Kind: "extra", Msg: "image size takes width and height only"}, true
		}
	}
	return Problem{}, false
}

func (f field) rangeOf(n float64, what string) (Problem, bool) {
	if f.lo != nil && n < *f.lo {
		return Problem{Kind: "range", Msg: fmt.Sprintf("%s should be at least %g", what, *f.lo)}, true
	}
	if f.hi != nil && n > *f.hi {
		return Problem{Kind: "range", Msg: fmt.Sprintf("%s should be at most %g", what, *f.hi)}, true
	}
	return Problem{}, false
}

func isURL(s string) bool {
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return len(s) > len("https://")
	}
	mime, _, ok := strings.Cut(strings.TrimPrefix(s, "data:"), ";base64,")
	return strings.HasPrefix(s, "data:") && ok && strings.Contains(mime, "/")
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Size reads an image_size value: a {width, height} object's sides.
func Size(v any) (w, h int, ok bool) {
	m, isObj := v.(map[string]any)
	if !isObj {
		return 0, 0, false
	}
	wf, ok1 := m["width"].(float64)
	hf, ok2 := m["height"].(float64)
	return int(wf), int(hf), ok1 && ok2
}
