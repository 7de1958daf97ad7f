package fetch

import (
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/gengate/gengate"
)

// decodeDataURL returns the bytes of a data: URL (RFC 2397),
// "data:[<mediatype>][;base64],<data>". The media type is ignored, since
// content is sniffed. The decoded size is worked out and checked against
// limit before the decoded bytes are allocated.
//
// A data: URL that cannot be parsed, with bad percent escapes or bad base64,
// is a malformed URL: InputFetchFailed, like any URL that cannot be
// fetched. InputUndecodable is kept for content that was obtained but is not
// a valid image.
func decodeDataURL(raw string, limit int64) ([]byte, error) {
	header, payload, ok := strings.Cut(raw[len("data:"):], ",")
	if !ok {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "data: URL is malformed: no comma before the data")
	}
	isBase64 := false
	if i := strings.LastIndexByte(header, ';'); i >= 0 {
		isBase64 = strings.EqualFold(strings.TrimSpace(header[i+1:]), "base64")
	}
	tooLarge := gengate.Errorf(gengate.InputTooLarge, "input is larger than the %d bytes allowed", limit)

	if !isBase64 {
		// Each %XX escape decodes to one byte, every other byte to itself.
		if int64(len(payload)-2*strings.Count(payload, "%")) > limit {
			return nil, tooLarge
		}
		s, err := url.PathUnescape(payload)
		if err != nil {
			return nil, gengate.Errorf(gengate.InputFetchFailed, "data: URL has a bad percent escape")
		}
		return []byte(s), nil
	}

	if strings.Contains(payload, "%") {
		// Base64 may itself be percent-encoded (%2B, %2F, %3D). Decoding
		// only shrinks it.
		s, err := url.PathUnescape(payload)
		if err != nil {
			return nil, gengate.Errorf(gengate.InputFetchFailed, "data: URL has a bad percent escape")
		}
		payload = s
	}
	// Forgiving base64, as browsers do: ASCII whitespace is ignored and
	// the padding is optional.
	// Every 4 base64 digits decode to 3 bytes, so the decoded size is
	// known, without decoding, from the count of digits.
	n, digits := 0, 0
	for i := 0; i < len(payload); i++ {
		if !isSpace(payload[i]) {
			n++
			if payload[i] != '=' {
				digits++
			}
		}
	}
	if int64(digits)*3/4 > limit {
		return nil, tooLarge
	}
	clean := make([]byte, 0, n)
	for i := 0; i < len(payload); i++ {
		if !isSpace(payload[i]) {
			clean = append(clean, payload[i])
		}
	}
	if len(clean)%4 == 0 {
		for range 2 {
			if len(clean) > 0 && clean[len(clean)-1] == '=' {
				clean = clean[:len(clean)-1]
			}
		}
	}
	data := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	k, err := base64.RawStdEncoding.Decode(data, clean)
	if err != nil {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "data: URL has invalid base64 data")
	}
	data = data[:k]
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	return data, nil
}

// isSpace reports whether c is ASCII whitespace as the WHATWG forgiving
// base64 decoder defines it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
