package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestSignedInputURL: GET /files/in/<task>/<name> serves a stored input
// for a URL signed with the service's key, and refuses (403 FORBIDDEN) a
// signature made with another key, a tampered one, one moved to another
// task, and an expired one; a valid URL of an input that is not (or no
// longer) stored is 404. Every answer is checked against the document.
func TestSignedInputURL(t *testing.T) {
	s := newStack(t, stackOpts{})
	key := bytes.Repeat([]byte{7}, 32)
	s.svc.InputURLs.Key = key
	pic := testPNG(t, 8, 8)
	if err := s.svc.Blobs.Put(context.Background(), "inputs/task1/imageUrl", pic, "image/png"); err != nil {
		t.Fatal(err)
	}
	path := func(u string) string { return strings.TrimPrefix(u, s.URL) }
	later := time.Now().Add(time.Hour)
	good := gengate.SignInputURL(s.URL, key, "task1", "imageUrl", later)

	r := s.do(call{Method: "GET", Path: path(good)})
	wantStatus(t, r, http.StatusOK)
	if !bytes.Equal(r.Body, pic) || r.Header.Get("Content-Type") != "image/png" || r.Header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("the input answered %d bytes of %s (%s), want the %d stored", len(r.Body), r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"), len(pic))
	}
	r = s.do(call{Method: "GET", Path: path(good), Header: map[string]string{"Range": "bytes=0-3"}})
	if r.Status != http.StatusPartialContent || !bytes.Equal(r.Body, pic[:4]) {
		t.Fatalf("a range of the input: %d %q, want 206 with its first 4 bytes", r.Status, r.Body)
	}
	r = s.do(call{Method: "GET", Path: path(good), Header: map[string]string{"Range": "bytes=100000-"}})
	wantStatus(t, r, http.StatusRequestedRangeNotSatisfiable)
	tampered := []byte(good)
	tampered[len(tampered)-1] ^= 1
	for _, c := range []struct {
		what, url string
		status    int
		code      string
	}{
		{"another key", gengate.SignInputURL(s.URL, bytes.Repeat([]byte{8}, 32), "task1", "imageUrl", later), http.StatusForbidden, "FORBIDDEN"},
		{"tampered", string(tampered), http.StatusForbidden, "FORBIDDEN"},
		{"moved to another task", strings.Replace(good, "/task1/", "/task2/", 1), http.StatusForbidden, "FORBIDDEN"},
		{"expired", gengate.SignInputURL(s.URL, key, "task1", "imageUrl", time.Now().Add(-time.Second)), http.StatusForbidden, "FORBIDDEN"},
		{"no such input", gengate.SignInputURL(s.URL, key, "task2", "imageUrl", later), http.StatusNotFound, "NOT_FOUND"},
	} {
		r := s.do(call{Method: "GET", Path: path(c.url)})
		if r.Status != c.status || r.str("code") != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.what, r.Status, r.Body, c.status, c.code)
		}
	}
}
