package gengate

import (
	"encoding/json"
	"io"
	"strconv"
)

// DecodeJSONObject decodes the JSON object read from r into the values
// encoding/json gives for map[string]any (strings, float64 numbers,
// booleans, []any, map[string]any; null as nil), as it is read: a member
// that keep refuses is skipped as it streams past, never held, and nothing
// but the kept values stays in memory (a long string is read once into
// its value, not into a buffer of the whole body first). keep is asked
// about each top-level member (parent "") and each member of a top-level
// object (parent its name); nil keeps everything.
// It is the decoder of the provider-compatible APIs' bodies, whose caps
// are generate's (a data: URI input), held to what generate holds. Its
// errors are *Error values of code INVALID_REQUEST; a read error of r is
// reported as one too, so a caller that needs its cause keeps it.
func DecodeJSONObject(r io.Reader, keep func(parent, name string) bool) (map[string]any, error) {
	s := newJSONScanner(r)
	defer s.release()
	if err := s.bodyObject(); err != nil {
		return nil, err
	}
	out := map[string]any{}
	err := s.object(0, func(name []byte) error {
		if keep != nil && !keep("", string(name)) {
			_, err := s.skip(1)
			return err
		}
		if c, err := s.next(); err != nil || c != '{' || keep == nil {
			v, err := s.value(1)
			if err == nil {
				out[string(name)] = v
			}
			return err
		}
		parent := string(name)
		m := map[string]any{}
		err := s.object(1, func(name []byte) error {
			if !keep(parent, string(name)) {
				_, err := s.skip(2)
				return err
			}
			v, err := s.value(2)
			if err == nil {
				m[string(name)] = v
			}
			return err
		})
		if err == nil {
			out[parent] = m
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// value reads any value as encoding/json decodes it into an any.
func (s *jsonScanner) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, Errorf(EInvalid, "request body nests more than %d levels deep", maxJSONDepth)
	}
	c, err := s.next()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '{':
		m := map[string]any{}
		err := s.object(depth, func(name []byte) error {
			v, err := s.value(depth + 1)
			if err == nil {
				m[string(name)] = v
			}
			return err
		})
		return m, err
	case c == '[':
		l := []any{}
		err := s.array(depth, func() error {
			v, err := s.value(depth + 1)
			if err == nil {
				l = append(l, v)
			}
			return err
		})
		return l, err
	case c == '"':
		_, _ = s.byte()
		b, err := s.str(nil)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	case c == '-' || '0' <= c && c <= '9':
		s.raw, s.rec = s.raw[:0], true
		err := s.number()
		s.rec = false
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(string(s.raw), 64)
		if err != nil {
			// Out of float64's range: encoding/json refuses it too.
			return nil, s.syntax("number %s out of range", s.raw)
		}
		return f, nil
	}
	null, err := s.skip(depth) // a literal
	if err != nil || null {
		return nil, err
	}
	return c == 't', nil
}

// canonScalar is a value as the generate decoder keeps it (a string,
// json.Number or bool; composite for an object or array), for a request
// given as decoded values (RequestOf).
func canonScalar(v any) any {
	switch v := v.(type) {
	case string, bool, json.Number:
		return v
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		out, _ := json.Marshal(v) // as the body marshalled and read back had it
		return json.Number(out)
	}
	return composite{}
}
