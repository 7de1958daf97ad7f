package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/httpapi"
)

// TestBodiesBounded is the body bound test derived from the OpenAPI
// document, on the real binary: for every operation that takes a body it
// reads the cap the route declared (x-gengate-body, internal/httpapi
// body.go) and sends (a) a body one byte over the cap, refused with 413,
// and (b) 8 bodies at the cap at once, while the server process's peak RSS
// (VmHWM, reset before each operation through /proc/<pid>/clear_refs) is
// watched: its growth must stay within the operation's bound. An operation
// that takes a body but declared no cap fails the test.
//
// The bodies at the cap are the largest each route lets through its door:
// a JSON object padded with an unknown member to exactly the cap; a file
// whose first bytes name an MP4 video (the largest type allowed), the
// rest zeros; a multipart body whose file parts fill the cap the same
// way. The server refuses most of them once read (an unknown member, a
// file that is not a video), which is what an attacker's bodies look like;
// what is measured is the memory reading them takes.
//
// The bounds: 160 MB for routes that stream files (the bound for 8
// uploads of 90 MB; each holds a copy buffer and the multipart reader's),
// 100 MB for JSON decoded as it arrives (generate, quote and the Replicate
// and fal facades keep the members they know only), and for JSON decoded
// whole 100 MB and what the door reserves for 8 of them (twice the cap
// each, at most --max-body-memory): a few MB for the small routes' 128
// KiB. All leave room
// for the 64 MiB heap the collector lets grow before it runs
// (--gc-heap-floor).
func TestBodiesBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak RSS from /proc")
	}
	p := startProcess(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--rate-limit", "0")
	pid := p.cmd.Process.Pid

	resp, err := http.Get(p.base + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]struct {
							Format string `json:"format"`
						} `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
			Body *struct {
				Kind     string `json:"kind"`
				MaxBytes int64  `json:"maxBytes"`
			} `json:"x-gengate-body"`
		} `json:"paths"`
		// Every route that takes a body, documented in paths or not.
		Bodies map[string]struct {
			Kind     string `json:"kind"`
			MaxBytes int64  `json:"maxBytes"`
		} `json:"x-gengate-bodies"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	type operation struct {
		method, path, kind, contentType string
		max                             int64
		files                           []string // multipart file parts
	}
	var ops []operation
	for path, item := range doc.Paths {
		for method, o := range item {
			if o.RequestBody == nil {
				continue
			}
			name := strings.ToUpper(method) + " " + path
			if o.Body == nil || o.Body.Kind == "none" || o.Body.MaxBytes <= 0 {
				t.Errorf("%s takes a body but its route declares no cap (internal/httpapi/body.go)", name)
				continue
			}
			op := operation{method: strings.ToUpper(method), path: regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "x"),
				kind: o.Body.Kind, max: o.Body.MaxBytes}
			for _, ct := range []string{"application/json", "video/*", "multipart/form-data"} {
				if c, ok := o.RequestBody.Content[ct]; ok {
					op.contentType = ct
					for name, prop := range c.Schema.Properties {
						if prop.Format == "binary" {
							op.files = append(op.files, name)
						}
					}
					sort.Strings(op.files)
					break
				}
			}
			if op.contentType == "" {
				t.Errorf("%s: no content type this test can build a body for", name)
				continue
			}
			ops = append(ops, op)
		}
	}
	// The routes the paths leave out (the Replicate- and fal-compatible
	// APIs), from x-gengate-bodies: none escapes.
	undocumented := 0
	for pattern, b := range doc.Bodies {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "POST", pattern // every method: bodies come by POST
		}
		if item, ok := doc.Paths[path]; ok {
			if o, ok := item[strings.ToLower(method)]; ok && o.RequestBody != nil {
				continue
			}
		}
		if b.MaxBytes <= 0 {
			t.Errorf("%s takes a body but declares no cap (internal/httpapi/body.go)", pattern)
			continue
		}
		op := operation{method: method, path: facadePath(path), kind: b.Kind, max: b.MaxBytes}
		switch b.Kind {
		case "json", "json-stream":
			op.contentType = "application/json"
		case "file":
			op.contentType = "video/*"
		default:
			t.Errorf("%s takes a %s body the document does not describe: this test cannot build one", pattern, b.Kind)
			continue
		}
		ops = append(ops, op)
		undocumented++
	}
	if undocumented == 0 {
		t.Error("x-gengate-bodies names no route the paths leave out: the facades' routes are expected there")
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	if len(ops) < 10 {
		t.Fatalf("only %d operations take a body: the document is not what this test expects", len(ops))
	}

	for _, op := range ops {
		name := op.method + " " + op.path
		// One subtest per operation (POST_fal_proxy), so one can be run alone.
		t.Run(op.method+strings.ReplaceAll(op.path, "/", "_"), func(t *testing.T) {
			// (a) Over the cap: refused before the body is read.
			status, _ := sendBody(t, p.base, p.key, op.method, op.path, op.contentType, op.files, op.max+1, true)
			if status != http.StatusRequestEntityTooLarge {
				t.Errorf("%s with %d bytes (its cap is %d): status %d, want 413", name, op.max+1, op.max, status)
			}
			// (b) 8 at the cap at once, the peak RSS watched.
			bound := int64(100 << 20)
			switch op.kind {
			case "file", "multipart":
				bound = 160 << 20
			case "json":
				// Decoded whole: up to twice its size each, as reserved.
				bound += min(8*2*op.max, httpapi.DefaultMaxBodyMemory)
			}
			base := resetPeakRSS(t, pid)
			var wg sync.WaitGroup
			statuses := make([]int, 8)
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i], _ = sendBody(t, p.base, p.key, op.method, op.path, op.contentType, op.files, op.max, false)
				}()
			}
			wg.Wait()
			growth := peakRSS(t, pid) - base
			t.Logf("%-45s %-11s cap %10d: 8 at the cap answered %v, peak RSS +%d MB (bound %d MB)",
				name, op.kind, op.max, statuses, growth>>20, bound>>20)
			if growth > bound {
				t.Errorf("%s: 8 bodies at the cap (%d bytes) grew the server's RSS by %d MB, over %d MB", name, op.max, growth>>20, bound>>20)
			}
			for _, st := range statuses {
				if st == 0 || st >= 500 && st != http.StatusServiceUnavailable {
					t.Errorf("%s: a body at the cap was answered %d", name, st)
				}
			}
		})
	}
}

// facadePath is path with its parameters filled: a model the catalog
// serves for the Replicate API's model path (so its body is read, not
// refused as an unknown model before), "x" for the others.
func facadePath(path string) string {
	path = strings.Replace(path, "{owner}/{name}", "black-forest-labs/flux-schnell", 1)
	return regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "x")
}

// sendBody sends one body of exactly size bytes of the content type:
// declared with Content-Length when declare is set (the server may refuse
// it unread), chunked otherwise. It returns the answer's status (0 when
// there is none) and body.
func sendBody(t *testing.T, base, key, method, path, contentType string, files []string, size int64, declare bool) (int, []byte) {
	body, ct := capBody(contentType, files, size)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	if declare {
		req.ContentLength = size
	} else {
		req.ContentLength = -1
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+key)
	// /fal/proxy reads the body of a submit to an endpoint the catalog
	// routes; the other routes ignore the header.
	req.Header.Set("X-Fal-Target-Url", "https://queue.fal.run/fal-ai/flux/schnell")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Logf("%s %s: %v", method, path, err)
		return 0, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data
}

// capBody is a body of exactly size bytes of the content type, made as it
// is read (the test holds none of it): a JSON object padded by an unknown
// member, an MP4 header followed by zeros, or a multipart body with a few
// fields whose file parts are such MP4s filling the rest.
func capBody(contentType string, files []string, size int64) (io.Reader, string) {
	mp4 := []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2")
	switch contentType {
	case "application/json":
		head, tail := `{"pad":"`, `"}`
		return io.MultiReader(strings.NewReader(head), io.LimitReader(repeatByte('a'), size-int64(len(head)+len(tail))),
			strings.NewReader(tail)), "application/json"
	case "video/*":
		return io.MultiReader(bytes.NewReader(mp4), io.LimitReader(repeatByte(0), size-int64(len(mp4)))), "video/mp4"
	}
	// multipart/form-data: the fields first, then the files.
	var pre bytes.Buffer
	mw := multipart.NewWriter(&pre)
	for _, f := range []string{"model", "prompt"} {
		mw.WriteField(f, "x")
	}
	boundary := mw.Boundary()
	partHead := func(name string) string {
		return fmt.Sprintf("\r\n--%s\r\nContent-Disposition: form-data; name=%q; filename=\"f.mp4\"\r\nContent-Type: video/mp4\r\n\r\n", boundary, name)
	}
	end := "\r\n--" + boundary + "--\r\n"
	prefix := strings.TrimSuffix(pre.String(), "\r\n")
	if len(files) == 0 {
		files = []string{"file"}
	}
	overhead := int64(len(prefix) + len(end))
	for _, f := range files {
		overhead += int64(len(partHead(f)))
	}
	each := (size - overhead) / int64(len(files))
	var parts []io.Reader
	parts = append(parts, strings.NewReader(prefix))
	for i, f := range files {
		n := each
		if i == len(files)-1 {
			n = size - overhead - each*int64(len(files)-1)
		}
		parts = append(parts, strings.NewReader(partHead(f)), bytes.NewReader(mp4), io.LimitReader(repeatByte(0), n-int64(len(mp4))))
	}
	parts = append(parts, strings.NewReader(end))
	return io.MultiReader(parts...), mw.FormDataContentType()
}

// repeatByte is an endless reader of one byte.
type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// resetPeakRSS resets the process's peak RSS to its RSS (Linux clear_refs
// 5) and returns that RSS, in bytes.
func resetPeakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	runtime.GC()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	return procStatus(t, pid, "VmRSS")
}

// peakRSS is the process's peak RSS since the last reset, in bytes.
func peakRSS(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmHWM") }

func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
