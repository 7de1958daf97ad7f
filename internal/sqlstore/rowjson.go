package sqlstore

import (
	"slices"
	"strconv"

	"github.com/gengate/gengate"
)

// The JSON columns of a task row as the store writes them are, almost
// always, flat objects of plain values: options such as
// {"aspectRatio":"1:1","numOutputs":1}, inputs {}, a route
// {"engine":"fal","upstream":"fal-ai/flux/dev"}. Every claim decodes them
// for every claimed task (claimread.go), and encoding/json's reflection
// was 3 % of a busy server's CPU for it (and encoding the options at each
// creation 1.6 %). The functions below decode and encode that
// common form by hand and give up (ok false) on anything else: escapes,
// bytes outside printable ASCII, nested values, fractions and exponents,
// white space, a key a struct field would match only by case. The caller
// then uses encoding/json as before, so a value is the one encoding/json
// gives, or the error it gives, and the bytes written are json.Marshal's
// (TestFlatDecodeMatchesEncodingJSON, TestFlatEncodeMatchesEncodingJSON).

// flatValue is one value of a flat object: a string, an integer, a
// boolean or null.
type flatValue struct {
	kind byte // '"' string, '0' integer, 't' true, 'f' false, 'n' null
	str  string
	num  int64
}

// flatObject calls fn for each member of the JSON object s, in order,
// and reports whether s was a flat object of plain values in the form
// encoding/json writes (and fn accepted every member).
func flatObject(s string, fn func(key string, v flatValue) bool) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	i, end := 1, len(s)-1
	if i == end {
		return true
	}
	for {
		key, n := plainString(s[i:end])
		if n == 0 || i+n >= end || s[i+n] != ':' {
			return false
		}
		i += n + 1
		v, n := plainValue(s[i:end])
		if n == 0 || !fn(key, v) {
			return false
		}
		i += n
		switch {
		case i == end:
			return true
		case s[i] != ',':
			return false
		}
		i++
	}
}

// plainString reads a JSON string at the start of s made of printable
// ASCII without escapes, and returns it and the bytes it took (0: not
// one).
func plainString(s string) (string, int) {
	if len(s) < 2 || s[0] != '"' {
		return "", 0
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[1:i], i + 1
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", 0
		}
	}
	return "", 0
}

// plainValue reads a plain value at the start of s: a plain string, an
// integer that fits an int64 (JSON's form: no leading zero), true, false
// or null. It returns the bytes it took, 0 for anything else.
func plainValue(s string) (flatValue, int) {
	if s == "" {
		return flatValue{}, 0
	}
	switch c := s[0]; {
	case c == '"':
		str, n := plainString(s)
		return flatValue{kind: '"', str: str}, n
	case c == '-' || (c >= '0' && c <= '9'):
		n := 0
		if c == '-' {
			n++
		}
		digits := n
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == digits || (s[digits] == '0' && n > digits+1) {
			return flatValue{}, 0 // no digits, or a leading zero
		}
		if n < len(s) && (s[n] == '.' || s[n] == 'e' || s[n] == 'E') {
			return flatValue{}, 0 // a float: encoding/json's path
		}
		v, err := strconv.ParseInt(s[:n], 10, 64)
		if err != nil {
			return flatValue{}, 0 // out of int64's range: a float64 then
		}
		return flatValue{kind: '0', num: v}, n
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s) >= len(lit) && s[:len(lit)] == lit {
			return flatValue{kind: lit[0]}, len(lit)
		}
	}
	return flatValue{}, 0
}

// decodeOptions is the stored options' flat form decoded as
// taskRow.decode does (a json.Decoder with UseNumber, then
// normalizeOptions: int64 for integers); ok false when s is not in it.
func decodeOptions(s string) (opts map[string]any, ok bool) {
	if s == "null" {
		return nil, true
	}
	opts = map[string]any{}
	ok = flatObject(s, func(k string, v flatValue) bool {
		switch v.kind {
		case '"':
			opts[k] = v.str
		case '0':
			opts[k] = v.num
		case 't', 'f':
			opts[k] = v.kind == 't'
		default:
			opts[k] = nil
		}
		return true
	})
	return opts, ok
}

// decodeStrings is the flat form of a map of strings (inputs, input
// URLs) decoded as json.Unmarshal does; ok false when s is not in it.
func decodeStrings(s string) (m map[string]string, ok bool) {
	if s == "null" {
		return nil, true
	}
	m = map[string]string{}
	ok = flatObject(s, func(k string, v flatValue) bool {
		m[k] = v.str
		return v.kind == '"'
	})
	return m, ok
}

// decodeRoute is a route without params (encodeRoute's hand-written form)
// decoded as json.Unmarshal does; ok false for anything else.
func decodeRoute(s string) (r gengate.Route, ok bool) {
	ok = flatObject(s, func(k string, v flatValue) bool {
		switch {
		case k == "engine" && v.kind == '"':
			r.Engine = v.str
		case k == "upstream" && v.kind == '"':
			r.Upstream = v.str
		case k == "test" && (v.kind == 't' || v.kind == 'f'):
			r.Test = v.kind == 't'
		default:
			return false
		}
		return true
	})
	return r, ok
}

// encodeFlat writes a map of plain values (plain strings, int64, int,
// bool, nil) under plain keys as json.Marshal does: keys sorted, no
// space; ok false for anything else.
func encodeFlat[V any](m map[string]V) (string, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !plainJSON(k) {
			return "", false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 16+24*len(keys))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		switch v := any(m[k]).(type) {
		case string:
			if !plainJSON(v) {
				return "", false
			}
			b = append(b, '"')
			b = append(b, v...)
			b = append(b, '"')
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case bool:
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, "null"...)
		default:
			return "", false
		}
	}
	return string(append(b, '}')), true
}
