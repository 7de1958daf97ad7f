package gengate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// maxJSONDepth is how deeply a request body's arrays and objects may nest.
const maxJSONDepth = 1000

// jsonScanner reads a JSON text from a stream a member at a time, for a
// decoder that keeps only what it needs: it skips values without keeping
// them, reads member names into one reused buffer, and hands out the raw
// bytes of scalars only when asked. It checks the syntax of everything it
// reads. Its errors are *Error values of code INVALID_REQUEST.
type jsonScanner struct {
	r   *bufio.Reader
	off int64  // bytes consumed
	raw []byte // the bytes of the value being recorded, if recording
	rec bool
}

// scanBuffers keeps the scanners' read buffers between requests: a
// burst of thousands of generate calls would otherwise allocate 32 KB of
// garbage each, which the heap carries until the next collection.
var scanBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// newJSONScanner returns a scanner of r; release gives its buffer back.
func newJSONScanner(r io.Reader) *jsonScanner {
	br := scanBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &jsonScanner{r: br}
}

// release returns the scanner's buffer to the pool; s is unusable after.
func (s *jsonScanner) release() {
	s.r.Reset(nil)
	scanBuffers.Put(s.r)
	s.r = nil
}

func (s *jsonScanner) syntax(format string, args ...any) error {
	return Errorf(EInvalid, "request body is not valid JSON: %s at byte %d", fmt.Sprintf(format, args...), s.off)
}

// readErr turns a read error into a client error.
func (s *jsonScanner) readErr(err error) error {
	if errors.Is(err, io.EOF) {
		return Errorf(EInvalid, "request body is not valid JSON: it ends too early")
	}
	return Errorf(EInvalid, "the request body could not be read")
}

// byte reads one byte.
func (s *jsonScanner) byte() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, s.readErr(err)
	}
	s.off++
	if s.rec {
		s.raw = append(s.raw, c)
	}
	return c, nil
}

// peek returns the next byte after white space without reading it; io.EOF
// at the end of the body.
func (s *jsonScanner) peek() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			return 0, io.EOF
		}
		if err != nil {
			return 0, s.readErr(err)
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			s.off++
			continue
		}
		_ = s.r.UnreadByte()
		return c, nil
	}
}

// next is peek for a value that must come: the end of the body is an
// error.
func (s *jsonScanner) next() (byte, error) {
	c, err := s.peek()
	if err == io.EOF {
		return 0, s.readErr(err)
	}
	return c, err
}

// expect reads the next byte after white space, which must be want.
func (s *jsonScanner) expect(want byte) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return s.syntax("want %q, found %q", want, c)
	}
	_, err = s.byte()
	return err
}

// bodyObject checks that a request body is a JSON object before its
// object is read: a body that is valid JSON but not an object is refused
// as "not an object", and what is not JSON at all by its syntax error.
func (s *jsonScanner) bodyObject() error {
	first, err := s.next()
	if err != nil {
		return err
	}
	if first == '{' {
		return nil
	}
	if _, err := s.skip(0); err != nil {
		return err
	}
	if err := s.end(); err != nil {
		return err
	}
	return Errorf(EInvalid, "request body must be a JSON object")
}

// object reads an object, calling member with each name (valid until the
// next read) and leaving it to read the value.
func (s *jsonScanner) object(depth int, member func(name []byte) error) error {
	if depth > maxJSONDepth {
		return Errorf(EInvalid, "request body nests more than %d levels deep", maxJSONDepth)
	}
	if err := s.expect('{'); err != nil {
		return err
	}
	c, err := s.next()
	if err != nil {
		return err
	}
	if c == '}' {
		_, err := s.byte()
		return err
	}
	var name []byte
	for {
		if err := s.expect('"'); err != nil {
			return err
		}
		if name, err = s.str(name[:0]); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return err
		}
		if _, err := s.byte(); err != nil {
			return err
		}
		switch c {
		case '}':
			return nil
		case ',':
		default:
			return s.syntax("want ',' or '}' after an object member, found %q", c)
		}
	}
}

// str reads the rest of a string whose opening quote was read, appending
// its unquoted content to dst.
func (s *jsonScanner) str(dst []byte) ([]byte, error) {
	start := len(dst)
	escaped := false
	for {
		c, err := s.byte()
		if err != nil {
			return dst, err
		}
		switch {
		case c == '"':
			if !escaped {
				return dst, nil
			}
			// Unquote the rare name or value that has escapes.
			var u string
			if err := json.Unmarshal(append(append([]byte{'"'}, dst[start:]...), '"'), &u); err != nil {
				return dst, s.syntax("invalid string escape")
			}
			return append(dst[:start], u...), nil
		case c < 0x20:
			return dst, s.syntax("control character in a string")
		case c == '\\':
			escaped = true
			dst = append(dst, c)
			e, err := s.byte()
			if err != nil {
				return dst, err
			}
			dst = append(dst, e)
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					h, err := s.byte()
					if err != nil {
						return dst, err
					}
					if !isHex(h) {
						return dst, s.syntax("invalid \\u escape")
					}
					dst = append(dst, h)
				}
			default:
				return dst, s.syntax("invalid escape \\%c", e)
			}
		default:
			dst = append(dst, c)
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skip reads a value and keeps nothing; it reports whether it was null.
func (s *jsonScanner) skip(depth int) (null bool, err error) {
	if depth > maxJSONDepth {
		return false, Errorf(EInvalid, "request body nests more than %d levels deep", maxJSONDepth)
	}
	c, err := s.next()
	if err != nil {
		return false, err
	}
	switch {
	case c == '{':
		return false, s.object(depth, func([]byte) error { _, err := s.skip(depth + 1); return err })
	case c == '[':
		return false, s.array(depth, func() error { _, err := s.skip(depth + 1); return err })
	case c == '"':
		_, _ = s.byte()
		return false, s.skipStr()
	case c == 'n':
		return true, s.literal("null")
	case c == 't':
		return false, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == '-' || '0' <= c && c <= '9':
		return false, s.number()
	}
	return false, s.syntax("unexpected %q", c)
}

// skipStr reads the rest of a string, keeping nothing.
func (s *jsonScanner) skipStr() error {
	for {
		c, err := s.byte()
		if err != nil {
			return err
		}
		switch {
		case c == '"':
			return nil
		case c < 0x20:
			return s.syntax("control character in a string")
		case c == '\\':
			e, err := s.byte()
			if err != nil {
				return err
			}
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					h, err := s.byte()
					if err != nil {
						return err
					}
					if !isHex(h) {
						return s.syntax("invalid \\u escape")
					}
				}
			default:
				return s.syntax("invalid escape \\%c", e)
			}
		}
	}
}

// array reads an array, calling elem to read each element.
func (s *jsonScanner) array(depth int, elem func() error) error {
	if depth > maxJSONDepth {
		return Errorf(EInvalid, "request body nests more than %d levels deep", maxJSONDepth)
	}
	if err := s.expect('['); err != nil {
		return err
	}
	c, err := s.next()
	if err != nil {
		return err
	}
	if c == ']' {
		_, err := s.byte()
		return err
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return err
		}
		if _, err := s.byte(); err != nil {
			return err
		}
		switch c {
		case ']':
			return nil
		case ',':
		default:
			return s.syntax("want ',' or ']' after an array element, found %q", c)
		}
	}
}

func (s *jsonScanner) literal(word string) error {
	for i := range len(word) {
		c, err := s.byte()
		if err != nil {
			return err
		}
		if c != word[i] {
			return s.syntax("invalid literal, want %s", word)
		}
	}
	return nil
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() error {
	c, _ := s.byte()
	if c == '-' {
		var err error
		if c, err = s.byte(); err != nil {
			return err
		}
	}
	if c < '0' || c > '9' {
		return s.syntax("invalid number")
	}
	if c != '0' {
		if err := s.digits(0); err != nil {
			return err
		}
	}
	if p, err := s.r.Peek(1); err == nil && p[0] == '.' {
		_, _ = s.byte()
		if err := s.digits(1); err != nil {
			return err
		}
	}
	if p, err := s.r.Peek(1); err == nil && (p[0] == 'e' || p[0] == 'E') {
		_, _ = s.byte()
		if p, err := s.r.Peek(1); err == nil && (p[0] == '+' || p[0] == '-') {
			_, _ = s.byte()
		}
		if err := s.digits(1); err != nil {
			return err
		}
	}
	return nil
}

// digits reads a run of at least min digits.
func (s *jsonScanner) digits(min int) error {
	n := 0
	for {
		p, err := s.r.Peek(1)
		if err != nil || p[0] < '0' || p[0] > '9' {
			if n < min {
				return s.syntax("invalid number")
			}
			return nil
		}
		_, _ = s.byte()
		n++
	}
}

// scalar reads a value: a string, number or boolean as encoding/json with
// UseNumber decodes it (string, json.Number, bool), an object or array as
// composite{} without keeping it, null as null.
func (s *jsonScanner) scalar(depth int) (v any, null bool, err error) {
	c, err := s.next()
	if err != nil {
		return nil, false, err
	}
	if c == '{' || c == '[' {
		_, err := s.skip(depth)
		return composite{}, false, err
	}
	s.raw, s.rec = s.raw[:0], true
	null, err = s.skip(depth)
	s.rec = false
	if err != nil || null {
		return nil, null, err
	}
	if v, ok := quickScalar(s.raw); ok {
		return v, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false, s.syntax("invalid value")
	}
	return v, false, nil
}

// quickScalar decodes the common scalars without a json.Decoder (one per
// value was most of the garbage of a generate call's decoding): true,
// false, and a string of printable ASCII without escapes. It reports false
// for anything else, which the decoder then reads; for what it accepts it
// gives exactly what the decoder would.
func quickScalar(raw []byte) (any, bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return string(in), true
}

// end checks that nothing but white space follows the value read.
func (s *jsonScanner) end() error {
	if _, err := s.peek(); err != io.EOF {
		if err != nil {
			return err
		}
		return Errorf(EInvalid, "request body has data after the JSON object")
	}
	return nil
}

// composite stands for an object or array value: no field takes one.
type composite struct{}
