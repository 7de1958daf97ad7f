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
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []bodyOp
	for path, item := range doc.Paths {
		for method, o := range item {
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
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	if len(ops) < 10 {
		t.Fatalf("only %d operations take a body", len(ops))
	}
	return ops
}

// sendDeclared sends headers declaring a body of length bytes and then
// nothing: an answer can only come from what the server decided before
// reading the body.
func (s *stack) sendDeclared(method, path, key, contentType string, length int64) (response, error) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, pr)
	if err != nil {
		return response{}, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if msg := validateAnswer(req, resp, data); msg != "" {
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
		r, err := s.sendDeclared(op.method, op.path, key, op.contentType, op.max+1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
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
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s chunked: %v", name, err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if msg := validateAnswer(req, resp, data); msg != "" {
			t.Errorf("%s chunked answered %d, undocumented: %s", name, resp.StatusCode, msg)
		}
		want := http.StatusRequestEntityTooLarge
		if strings.HasPrefix(op.path, "/api/v1/admin/") {
			want = http.StatusForbidden // not an operator: refused before its body is read
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
	var r response
	waitFor(t, "the second body refused", func() bool {
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
