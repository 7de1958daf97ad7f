package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// bodyOp is an operation of the OpenAPI document that takes a body, with
// the cap its route declared (x-gengate-body).
type bodyOp struct {
	method, path, kind, contentType string
	max                             int64
	// undocumented: a route the document's paths leave out, found in its
	// x-gengate-bodies (the Replicate- and fal-compatible APIs).
	undocumented bool
}

// falTarget is the x-fal-target-url every body test request carries, so
// that /fal/proxy reads the body as a submit to a catalog endpoint; other
// routes ignore it.
const falTarget = "https://queue.fal.run/fal-ai/flux/schnell"

// facadePath is path with its parameters filled: a model the catalog
// serves for the Replicate API's model path (so its body is read, not
// refused as an unknown model before), "x" for the others.
func facadePath(path string) string {
	path = strings.Replace(path, "{owner}/{name}", "black-forest-labs/flux-schnell", 1)
	return regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "x")
}

// undocumentedBodies adds to ops every route of x-gengate-bodies (each
// route that takes a body, by its pattern) that the document's paths do
// not describe, so no route escapes the body tests: a JSON body for the
// JSON kinds, a video for a file; a route of another kind fails t (no
// body can be built for it without its schema).
func undocumentedBodies(t *testing.T, paths map[string]map[string]bool, bodies map[string]struct {
	Kind     string `json:"kind"`
	MaxBytes int64  `json:"maxBytes"`
}) []bodyOp {
	t.Helper()
	var ops []bodyOp
	for pattern, b := range bodies {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "POST", pattern // a route for every method: its bodies come by POST
		}
		if paths[path][strings.ToLower(method)] {
			continue
		}
		if b.MaxBytes <= 0 {
			t.Errorf("%s takes a body but declares no cap (body.go)", pattern)
			continue
		}
		op := bodyOp{method: method, path: facadePath(path), kind: b.Kind, max: b.MaxBytes, undocumented: true}
		switch b.Kind {
		case "json", "json-stream":
			op.contentType = "application/json"
		case "file":
			op.contentType = "video/mp4"
		default:
			t.Errorf("%s takes a %s body but the document does not describe it: no body can be built for it", pattern, b.Kind)
			continue
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		t.Error("x-gengate-bodies names no route the paths leave out: the facades' routes are expected there")
	}
	return ops
}

// bodyOps reads the served document's operations that take a body; one
// whose route declared no cap fails t.
func bodyOps(t *testing.T, s *stack) []bodyOp {
	t.Helper()
	r := s.do(call{Method: "GET", Path: "/api/v1/openapi.json"})
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
			Body *struct {
				Kind     string `json:"kind"`
				MaxBytes int64  `json:"maxBytes"`
			} `json:"x-gengate-body"`
		} `json:"paths"`
		Bodies map[string]struct {
			Kind     string `json:"kind"`
			MaxBytes int64  `json:"maxBytes"`
		} `json:"x-gengate-bodies"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []bodyOp
	documented := map[string]map[string]bool{}
	for path, item := range doc.Paths {
		documented[path] = map[string]bool{}
		for method, o := range item {
			documented[path][method] = o.RequestBody != nil
			if o.RequestBody == nil {
				continue
			}
			if o.Body == nil || o.Body.Kind == "none" || o.Body.MaxBytes <= 0 {
				t.Errorf("%s %s takes a body but its route declares no cap (body.go)", strings.ToUpper(method), path)
				continue
			}
			op := bodyOp{method: strings.ToUpper(method), path: regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "x"),
				kind: o.Body.Kind, max: o.Body.MaxBytes}
			for _, ct := range []string{"application/json", "video/*", "multipart/form-data"} {
				if _, ok := o.RequestBody.Content[ct]; ok {
					op.contentType = strings.Replace(ct, "*", "mp4", 1)
					break
				}
			}
			ops = append(ops, op)
		}
	}
	ops = append(ops, undocumentedBodies(t, documented, doc.Bodies)...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	if len(ops) < 10 {
		t.Fatalf("only %d operations take a body", len(ops))
	}
	return ops
}

// sendDeclared sends headers declaring a body of length bytes for op and
// then nothing: an answer can only come from what the server decided
// before reading the body, so it comes at once. A server that waits for
// the body instead gets none, and the request fails after a few seconds
// (the pipe is closed then: the transport waits for the body's end
// before it gives the request up). The answer of an undocumented route is
// not validated against the document.
func (s *stack) sendDeclared(op bodyOp, key string, length int64) (response, error) {
	method, path, contentType := op.method, op.path, op.contentType
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, pr)
	if err != nil {
		return response{}, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Fal-Target-Url", falTarget)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if msg := validateAnswer(req, resp, data); msg != "" && !op.undocumented {
		s.t.Errorf("%s %s answered %d, which the OpenAPI document does not describe: %s\n%s", method, path, resp.StatusCode, msg, data)
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	_ = json.Unmarshal(data, &r.JSON)
	return r, nil
}

// padded is a JSON object of exactly n bytes: one unknown member.
func padded(n int64) []byte {
	head, tail := `{"pad":"`, `"}`
	return []byte(head + strings.Repeat("a", int(n)-len(head)-len(tail)) + tail)
}

// TestBodiesOverCap: every operation of the OpenAPI document that takes a
// body declares a cap, and a body one byte over it is refused with 413:
// declared in Content-Length, before a byte is read (the client sends
// none); sent chunked, once the cap is read (the JSON routes; the file
// routes' chunked bodies are TestBodiesBounded's, on the real binary).
func TestBodiesOverCap(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, maxBody: 1 << 20})
	_, key := s.account(100)
	for _, op := range bodyOps(t, s) {
		name := op.method + " " + op.path
		r, err := s.sendDeclared(op, key, op.max+1)
		if err != nil {
			t.Fatalf("%s declaring %d bytes (cap %d): %v; want 413 before a byte is read", name, op.max+1, op.max, err)
		}
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s declaring %d bytes (cap %d): %d %s, want 413", name, op.max+1, op.max, r.Status, r.Body)
		}
		if op.contentType != "application/json" {
			continue
		}
		req, _ := http.NewRequest(op.method, s.URL+op.path, io.MultiReader(bytes.NewReader(padded(op.max+1))))
		req.ContentLength = -1 // chunked: the server finds the size by reading
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Fal-Target-Url", falTarget)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s chunked: %v", name, err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if msg := validateAnswer(req, resp, data); msg != "" && !op.undocumented {
			t.Errorf("%s chunked answered %d, undocumented: %s", name, resp.StatusCode, msg)
		}
		want := http.StatusRequestEntityTooLarge
		if strings.HasPrefix(op.path, "/api/v1/admin/") || op.path == "/api/v1/auth/signup" {
			// Not an operator, or sign-up closed: refused before its body is read.
			want = http.StatusForbidden
		}
		if resp.StatusCode != want {
			t.Errorf("%s chunked with %d bytes (cap %d): %d %s, want %d", name, op.max+1, op.max, resp.StatusCode, data, want)
		}
	}
}

// TestBodyMemorySpent: the memory request bodies may hold together
// (--max-body-memory) is reserved before a body is read: with a body
// that holds most of it still arriving, another is refused with 503
// OVERLOADED and Retry-After, nothing read; once the first is answered its
// reservation is back and the same request goes through.
func TestBodyMemorySpent(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, maxBodyMemory: 1 << 20})
	_, key := s.account(100)
	second := func() response {
		return s.do(call{Method: "POST", Path: "/api/v1/generate", Key: key, Body: padded(400 << 10),
			Header: map[string]string{"Prefer": "respond-async"}})
	}
	// holdFirst sends the first request on a connection of its own: its
	// headers declare 700 KiB (held: 700 KiB of the 1 MiB), and its
	// body's first bytes come; the rest never does until conn closes.
	holdFirst := func() (net.Conn, chan string) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /api/v1/generate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Prefer: respond-async\r\nContent-Length: %d\r\n\r\n{\"type\":", key, 700<<10)
		first := make(chan string, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				first <- err.Error()
				return
			}
			resp.Body.Close()
			first <- resp.Status
		}()
		return conn, first
	}
	// A second request sent while the first has not yet reserved its
	// memory takes it first, and the first is the one refused: then the
	// first is sent again.
	conn, first := holdFirst()
	t.Cleanup(func() { conn.Close() }) // the server's Close waits for it
	var r response
	// The refusal is decided before a byte is read: it comes within a few
	// tries, not after the first request's body.
	waitWithin(t, 10*time.Second, "the second body refused", func() bool {
		select {
		case st := <-first:
			if !strings.HasPrefix(st, "503") {
				t.Fatalf("the first request was answered (%s) before its body came", st)
			}
			conn.Close()
			conn, first = holdFirst()
		default:
		}
		r = second()
		return r.Status == http.StatusServiceUnavailable
	})
	wantProblem(t, r, http.StatusServiceUnavailable, "OVERLOADED")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	conn.Close() // the first body ends short: its request ends
	<-first
	waitFor(t, "the first request's memory given back", func() bool {
		r = second()
		return r.Status != http.StatusServiceUnavailable
	})
	if r.Status != http.StatusBadRequest { // read whole: an unknown member
		t.Errorf("after the first body was answered: %d %s, want 400 (its reservation given back)", r.Status, r.Body)
	}
}
