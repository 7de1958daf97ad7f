package gengate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Large inputs by URL. fal and Replicate take an input file either inline
// (a data: URI in the JSON body, a third larger than the file) or as a URL
// they fetch. Past a few megabytes the URL is the better way: the request
// stays small, and the upstream fetches the file itself. gengate hands out
// a presigned GET of the stored input when the store can make one (S3:
// the bucket's own signed URL, no gengate endpoint or key involved). With
// local files and a --public-url it hands out its own signed URL,
// /files/in/<task>/<name>?exp=…&sig=…, served by GET /files/in/… from the
// stored input (OpenSignedInput); without a public URL the bytes go inline
// as data: URIs (docs/architecture.md).

// DefaultInputURLMinBytes is the default of Service.InputURLs.MinBytes (the
// --input-url-min-bytes flag).
const DefaultInputURLMinBytes = 4 << 20

// InputURLExpiry is how long an input URL (presigned or gengate-signed)
// stays valid: long enough for an upstream's queue to reach the task,
// short of S3's 7-day ceiling.
const InputURLExpiry = 24 * time.Hour

// InputURLPath is where the gengate-signed input URLs live.
const InputURLPath = "/files/in/"

// inputURL returns a URL of a stored input of size bytes that an upstream
// can fetch, or "" when it is small, URLs are off, or neither the store
// nor gengate can make one.
func (s *Service) inputURL(ctx context.Context, t *Task, name, key string, size int) string {
	if !s.largeInput(size) {
		return ""
	}
	p, ok := s.Blobs.(Presigner)
	if !ok {
		if s.InputURLs.Base == "" || len(s.InputURLs.Key) == 0 {
			return ""
		}
		return SignInputURL(s.InputURLs.Base, s.InputURLs.Key, t.ID, name, s.now().Add(InputURLExpiry))
	}
	u, err := p.PresignGet(ctx, key, InputURLExpiry)
	if err != nil {
		// The bytes still go inline.
		s.log().WarnContext(ctx, "presign input", "jobId", t.ID, "err", err)
		return ""
	}
	return u
}

// largeInput reports whether an input of size bytes is past
// InputURLMinBytes: sent by URL or a provider's upload API, not inline.
func (s *Service) largeInput(size int) bool {
	min := s.InputURLs.MinBytes
	if min == 0 {
		min = DefaultInputURLMinBytes
	}
	return min >= 0 && int64(size) >= min
}

// SignInputURL is the gengate URL of input name of task taskID under base
// (the --public-url), valid until exp: the signature is an HMAC-SHA256
// with key over the path and the expiry, so neither can be changed.
func SignInputURL(base string, key []byte, taskID, name string, exp time.Time) string {
	path := InputURLPath + url.PathEscape(taskID) + "/" + url.PathEscape(name)
	e := strconv.FormatInt(exp.Unix(), 10)
	return strings.TrimRight(base, "/") + path + "?exp=" + e + "&sig=" + inputURLSig(key, path, e)
}

func inputURLSig(key []byte, path, exp string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(path + "\n" + exp))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// OpenSignedInput opens the stored input name of task taskID for the
// holder of a URL made by SignInputURL: a signature that does not match
// (compared in constant time) or an expired URL is EForbidden, an input
// already deleted (its task finished) is ENotFound. Only the one input
// the signature names can be read.
func (s *Service) OpenSignedInput(ctx context.Context, taskID, name, exp, sig string) (BlobFile, error) {
	if len(s.InputURLs.Key) == 0 {
		return nil, Errorf(ENotFound, "no signed input URLs here")
	}
	path := InputURLPath + url.PathEscape(taskID) + "/" + url.PathEscape(name)
	want := inputURLSig(s.InputURLs.Key, path, exp)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return nil, Errorf(EForbidden, "bad input URL signature")
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.now().Before(time.Unix(e, 0)) {
		return nil, Errorf(EForbidden, "input URL expired")
	}
	if !safeSegment(taskID) || !safeSegment(name) {
		return nil, Errorf(ENotFound, "no file")
	}
	return s.Blobs.Open(ctx, "inputs/"+taskID+"/"+name)
}

// safeSegment: one path segment a blob key may hold (the mux never gives
// a "/", but "." and ".." would still move within the store).
func safeSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\")
}
