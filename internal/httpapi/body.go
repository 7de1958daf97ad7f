package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/sync/semaphore"

	"github.com/gengate/gengate"
)

// Request bodies come in through one door: this file. Every route declares,
// where it is registered, the body it takes and its cap in bytes:
//
//	mux.Handle("GET /api/v1/keys", bodyNone, a.auth(a.handleKeys()))
//	mux.Handle("POST /api/v1/keys", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleCreateKey()))
//
// The kinds:
//
//   - bodyNone: the route reads no body; one sent is never read.
//   - bodyJSON(max): a small JSON object decoded whole with encoding/json
//     (decodeBody); it may hold twice its size (the decoder's buffer and
//     the decoded values).
//   - bodyStream(max): JSON decoded as it arrives (the generate decoder,
//     gengate.Catalog.DecodeRequest); it may hold what it keeps, at most
//     its size.
//   - bodyMultipart(max): multipart/form-data whose files are streamed to
//     storage part by part; it holds its small fields and a buffer.
//   - bodyFile(max): a file as the raw body, streamed to storage; it holds
//     a copy buffer.
//
// The registration (gatedMux.Handle) does the rest, before the handler
// runs: a body whose Content-Length is over the cap is refused with 413
// TOO_LARGE, nothing read; the handler's r.Body reads nothing until the
// handler opens it with openBody (or decodeBody), which first reserves what
// the request may hold against the process's body memory
// (Config.MaxBodyMemory, --max-body-memory) and refuses with 503
// OVERLOADED and Retry-After when that is spent; the body then reads at
// most its cap. The reservation is given back when the handler returns.
// A handler therefore never reads a body the door did not admit.

// bodyKind is how a route reads its body.
type bodyKind uint8

const (
	kindNone bodyKind = iota
	kindJSON
	kindStream
	kindMultipart
	kindFile
)

var kindNames = [...]string{kindNone: "none", kindJSON: "json", kindStream: "json-stream", kindMultipart: "multipart", kindFile: "file"}

func (k bodyKind) String() string { return kindNames[k] }

// bodySpec is what a route declares about its request body.
type bodySpec struct {
	kind bodyKind
	max  int64 // bytes
}

// bodyNone declares a route that reads no body.
var bodyNone = bodySpec{}

// bodyJSON declares a small JSON body of at most max bytes, decoded whole.
func bodyJSON(max int64) bodySpec { return bodySpec{kindJSON, max} }

// bodyStream declares a JSON body of at most max bytes decoded as it
// arrives.
func bodyStream(max int64) bodySpec { return bodySpec{kindStream, max} }

// bodyMultipart declares a multipart/form-data body of at most max bytes
// whose files stream to storage.
func bodyMultipart(max int64) bodySpec { return bodySpec{kindMultipart, max} }

// bodyFile declares a raw file body of at most max bytes streamed to
// storage.
func bodyFile(max int64) bodySpec { return bodySpec{kindFile, max} }

// Memory a streamed body holds besides its data: the multipart reader's
// buffer and small fields, a copy buffer.
const (
	multipartHold = 1 << 20
	fileHold      = 64 << 10
)

// hold is the memory a request with this body may hold while it is read
// and decoded; length is its Content-Length (-1: unknown).
func (b bodySpec) hold(length int64) int64 {
	n := b.max
	if length >= 0 && length < n {
		n = length
	}
	switch b.kind {
	case kindJSON:
		return 2*n + 4<<10
	case kindStream:
		return n + 32<<10 // the scanner's read buffer (jsonscan.go)
	case kindMultipart:
		return multipartHold
	case kindFile:
		return fileHold
	}
	return 0
}

// DefaultMaxBodyMemory is the default of Config.MaxBodyMemory.
const DefaultMaxBodyMemory = 512 << 20

// DefaultMaxJSONBody is the default of Config.MaxJSONBody: a prompt of
// gengate.MaxPromptLength characters of four bytes each fits.
const DefaultMaxJSONBody = 128 << 10

// bodyBudget is the memory the request bodies being read may hold
// together.
type bodyBudget struct {
	sem  *semaphore.Weighted
	size int64
}

func newBodyBudget(size int64) *bodyBudget {
	return &bodyBudget{sem: semaphore.NewWeighted(size), size: size}
}

// door is one request's way in: its route's declaration, the body as it
// came, and what it reserved.
type door struct {
	spec   bodySpec
	budget *bodyBudget
	w      http.ResponseWriter
	orig   io.ReadCloser
	length int64
	r      io.Reader // the opened, capped body; nil until openBody
	held   int64
}

type doorKey struct{}

// guardedBody is r.Body of an admitted request: it reads only once the
// handler has opened the body through the door.
type guardedBody struct{ d *door }

var errBodyNotOpened = errors.New("httpapi: the request body was read without openBody")

func (g guardedBody) Read(p []byte) (int, error) {
	if g.d.r == nil {
		return 0, errBodyNotOpened
	}
	return g.d.r.Read(p)
}

func (g guardedBody) Close() error { return g.d.orig.Close() }

// admit wraps a route's handler in its body declaration.
func (a *api) admit(pattern string, spec bodySpec, next http.Handler) http.Handler {
	path := patternPath(pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if spec.kind != kindNone && r.ContentLength > spec.max {
			// Closing the connection after the answer spares net/http
			// reading the refused body to keep it alive.
			w.Header().Set("Connection", "close")
			a.refuseIn(w, r, path, tooLarge(spec.max))
			return
		}
		d := &door{spec: spec, budget: a.bodies, w: w, orig: r.Body, length: r.ContentLength}
		if spec.kind == kindNone {
			// Nothing is read; what a client sends anyway is discarded
			// by net/http (or the connection closed).
			d.r = http.MaxBytesReader(w, r.Body, 0)
		}
		r.Body = guardedBody{d}
		defer d.release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), doorKey{}, d)))
	})
}

// refuseIn answers a refusal made before a route's handler runs (the body
// door, the connection budget) in the shape of the API the route belongs
// to: OpenAI's under /v1/images/, Replicate's elsewhere under /v1/, fal's
// at /fal/, gengate's problem otherwise.
func (a *api) refuseIn(w http.ResponseWriter, r *http.Request, path string, err error) {
	switch {
	case strings.HasPrefix(path, "/v1/images/"):
		if gengate.ErrorCode(err) == gengate.EOverloaded {
			w.Header().Set("Retry-After", fmt.Sprint(overloadedRetryAfter))
		}
		a.writeOpenAIError(w, a.fromGengate(r, err))
	case strings.HasPrefix(path, "/v1/"):
		a.writeReplicateError(w, r, err)
	case strings.HasPrefix(path, "/fal/"):
		if gengate.ErrorCode(err) == gengate.EOverloaded {
			w.Header().Set("Retry-After", fmt.Sprint(overloadedRetryAfter))
		}
		a.writeFalError(w, r, a.falErrorOf(r, err))
	default:
		writeError(w, r, a.log, err)
	}
}

// patternPath is the path of a route pattern ("POST /a" or "/a").
func patternPath(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

func tooLarge(max int64) error {
	return gengate.Errorf(gengate.ETooLarge, "the request body is larger than the %d bytes this endpoint takes", max)
}

// openBody reserves what the request's body may hold and returns the body,
// which reads at most its route's cap (then a *http.MaxBytesError, which
// bodyError turns into 413). Errors are *gengate.Error values: OVERLOADED
// when the body memory is spent.
func openBody(r *http.Request) (io.Reader, error) {
	d, _ := r.Context().Value(doorKey{}).(*door)
	if d == nil || d.spec.kind == kindNone {
		return nil, fmt.Errorf("httpapi: %s %s opened a body it did not declare", r.Method, r.URL.Path)
	}
	if d.r != nil {
		return d.r, nil
	}
	n := d.spec.hold(d.length)
	if !d.budget.sem.TryAcquire(n) {
		return nil, gengate.Errorf(gengate.EOverloaded, "the server is reading as many request bodies as its memory allows; retry in a few seconds")
	}
	d.held = n
	d.r = http.MaxBytesReader(d.w, d.orig, d.spec.max)
	return d.r, nil
}

// bodyMax is the cap of the request's body.
func bodyMax(r *http.Request) int64 {
	if d, _ := r.Context().Value(doorKey{}).(*door); d != nil {
		return d.spec.max
	}
	return 0
}

// bodyError turns a read error of an opened body into the client's error:
// 413 past the cap, 400 otherwise; nil stays nil.
func bodyError(r *http.Request, err error) error {
	var big *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &big):
		return tooLarge(big.Limit)
	}
	var e *gengate.Error
	if errors.As(err, &e) {
		return err
	}
	return gengate.Errorf(gengate.EInvalid, "the request body could not be read")
}

func (d *door) release() {
	if d.held > 0 {
		d.budget.sem.Release(d.held)
		d.held = 0
	}
}

// BodyDecl is a route's body declaration as the OpenAPI document and the
// tests see it.
type BodyDecl struct {
	Kind     string `json:"kind"`
	MaxBytes int64  `json:"maxBytes"`
}
