package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/blob/s3test"
)

const bigFile = 50 << 20

// bigOutput generates an image and replaces its stored file with 50 MB of
// known bytes (whose first bytes are the real image's); it returns the
// file's URL path and the bytes.
func bigOutput(t *testing.T, s *stack) (string, []byte) {
	t.Helper()
	_, key := s.account(100)
	r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "big"}, nil)
	wantStatus(t, r, http.StatusOK)
	images, _ := r.JSON["images"].([]any)
	if len(images) == 0 {
		t.Fatalf("no images: %s", r.Body)
	}
	u, err := url.Parse(images[0].(string))
	if err != nil {
		t.Fatal(err)
	}
	token, _, _ := strings.Cut(path.Base(u.Path), ".")
	c, err := s.store.FindCreation(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := s.svc.Blobs.Open(ctx, c.Key)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := io.ReadAll(f)
	f.Close()
	data := make([]byte, bigFile)
	rand.NewChaCha8([32]byte{7}).Read(data)
	copy(data, head)
	if err := s.svc.Blobs.Put(ctx, c.Key, data, c.ContentType); err != nil {
		t.Fatal(err)
	}
	return u.Path, data
}

// TestFilesStreamed: ranges and HEAD on a 50 MB output are answered from
// the blob store without reading the file; 30 concurrent one-byte ranges
// allocate far less than one copy of it. Local and S3 (versitygw) alike.
func TestFilesStreamed(t *testing.T) {
	for _, kind := range []string{"local", "s3"} {
		t.Run(kind, func(t *testing.T) {
			var o stackOpts
			if kind == "s3" {
				srv := s3test.Start(t)
				b, err := blob.Open(srv.Spec("files-streamed"), "", srv.Getenv)
				if err != nil {
					t.Fatal(err)
				}
				o.blobs = b
			}
			s := newStack(t, o)
			p, data := bigOutput(t, s)

			r := s.do(call{Method: "HEAD", Path: p})
			wantStatus(t, r, http.StatusOK)
			if r.Header.Get("Content-Length") != fmt.Sprint(bigFile) || len(r.Body) != 0 {
				t.Errorf("HEAD: Content-Length %q, body %d bytes", r.Header.Get("Content-Length"), len(r.Body))
			}
			for _, h := range []struct{ name, want string }{
				{"Content-Security-Policy", "sandbox"},
				{"X-Content-Type-Options", "nosniff"},
				{"Content-Disposition", `inline; filename=output-1.png`},
				{"Accept-Ranges", "bytes"},
			} {
				if got := r.Header.Get(h.name); got != h.want {
					t.Errorf("%s: %q, want %q", h.name, got, h.want)
				}
			}
			for _, rg := range []struct {
				header     string
				start, end int
			}{{"bytes=0-0", 0, 0}, {"bytes=1000-1999", 1000, 1999}, {"bytes=-10", bigFile - 10, bigFile - 1}, {"bytes=52428790-", bigFile - 10, bigFile - 1}} {
				r := s.do(call{Method: "GET", Path: p, Header: map[string]string{"Range": rg.header}})
				wantStatus(t, r, http.StatusPartialContent)
				if !bytes.Equal(r.Body, data[rg.start:rg.end+1]) {
					t.Errorf("Range %s: %d bytes, not the file's", rg.header, len(r.Body))
				}
				if want := fmt.Sprintf("bytes %d-%d/%d", rg.start, rg.end, bigFile); r.Header.Get("Content-Range") != want {
					t.Errorf("Range %s: Content-Range %q, want %q", rg.header, r.Header.Get("Content-Range"), want)
				}
			}
			r = s.do(call{Method: "GET", Path: p, Header: map[string]string{"Range": "bytes=60000000-"}})
			wantStatus(t, r, http.StatusRequestedRangeNotSatisfiable)

			// 30 concurrent one-byte ranges: what they allocate, in this
			// process (server and client), is measured.
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var wg sync.WaitGroup
			errs := make([]error, 30)
			for i := range 30 {
				wg.Go(func() {
					r, err := s.send(call{Method: "GET", Path: p, Header: map[string]string{"Range": "bytes=0-0"}})
					if err == nil && (r.Status != http.StatusPartialContent || len(r.Body) != 1 || r.Body[0] != data[0]) {
						err = fmt.Errorf("status %d, %d bytes", r.Status, len(r.Body))
					}
					errs[i] = err
				})
			}
			wg.Wait()
			runtime.ReadMemStats(&after)
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("30 concurrent ranges allocated %.1f MB", float64(alloc)/(1<<20))
			if alloc > bigFile/2 {
				t.Errorf("30 one-byte ranges allocated %d MB, more than half of one 50 MB file", alloc>>20)
			}
		})
	}
}

func TestFileDisposition(t *testing.T) {
	s := newStack(t, stackOpts{})
	_, key := s.account(100)
	r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "kind"}, nil)
	wantStatus(t, r, http.StatusOK)
	u, _ := url.Parse(r.JSON["images"].([]any)[0].(string))
	token, _, _ := strings.Cut(path.Base(u.Path), ".")
	ctx := context.Background()
	c, err := s.store.FindCreation(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever an upstream delivered, anything not an image or a video is
	// an attachment: here an HTML page stored under the output's key with
	// the creation's own record changed to say so.
	for _, tc := range []struct{ ctype, want string }{
		{"text/html", "attachment"},
		{"image/svg+xml", "attachment"},
		{"application/octet-stream", "attachment"},
		{"video/mp4", "inline"},
	} {
		if _, err := s.store.SQL().ExecContext(ctx, `UPDATE creations SET content_type = $1 WHERE id = $2`, tc.ctype, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.svc.Blobs.Put(ctx, c.Key, []byte("<html><script>alert(1)</script></html>"), tc.ctype); err != nil {
			t.Fatal(err)
		}
		r := s.do(call{Method: "GET", Path: u.Path})
		wantStatus(t, r, http.StatusOK)
		if d := r.Header.Get("Content-Disposition"); !strings.HasPrefix(d, tc.want+";") || strings.Contains(d, token) {
			t.Errorf("%s: Content-Disposition %q, want %s without the token", tc.ctype, d, tc.want)
		}
		if r.Header.Get("Content-Security-Policy") != "sandbox" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: CSP %q, nosniff %q", tc.ctype, r.Header.Get("Content-Security-Policy"), r.Header.Get("X-Content-Type-Options"))
		}
	}
	_ = gengate.ENotFound
}
