package httpapi

import (
	"net/http"
	"strings"
)

// What the request log may hold.
//
// A file's URL token is the file's only credential, and other secrets may
// travel in a path or a query string (sign-in links, keys pasted into the
// wrong place). The request log therefore writes the path only, never the
// query string, and with every segment that looks like a secret replaced:
// /files/<token>.png is logged as /files/<redacted>.png. Job ids (UUIDs,
// with dashes) are kept: they are not credentials and operators need them.

// redacted replaces a secret in a logged path.
const redacted = "<redacted>"

// logPath is r's path as the request log writes it.
func logPath(r *http.Request) string {
	p := r.URL.Path
	if name, ok := strings.CutPrefix(p, "/files/"); ok {
		if _, ext, ok := strings.Cut(name, "."); ok {
			return "/files/" + redacted + "." + ext
		}
		return "/files/" + redacted
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if secretLike(s) {
			segs[i] = redacted
		}
	}
	return strings.Join(segs, "/")
}

// secretLike reports whether a path segment looks like a token or key: an
// API key, or 20 or more letters, digits and underscores with at least
// one digit (random tokens; a UUID has dashes, a word has no digit).
func secretLike(s string) bool {
	if strings.HasPrefix(s, "gg_") {
		return true
	}
	if base, _, ok := strings.Cut(s, "."); ok {
		s = base
	}
	if len(s) < 20 {
		return false
	}
	digit := false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		default:
			return false
		}
	}
	return digit
}
