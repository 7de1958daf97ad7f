package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func TestServe(t *testing.T) {
	c := New(Config{PublicURL: "https://files.example.com/base"})
	v := c.Version()
	tests := []struct {
		path, cache, typ string
		status           int
	}{
		{"/", "no-cache", "text/html", 200},
		{"/console/", "no-cache", "text/html", 200},
		{"/console/app.js?v=" + v, "public, max-age=31536000, immutable", "text/javascript", 200},
		{"/console/app.js", "no-cache", "text/javascript", 200},
		{"/console/app.js?v=old", "no-cache", "text/javascript", 200},
		{"/console/app.css?v=" + v, "public, max-age=31536000, immutable", "text/css", 200},
		{"/console/nope.js", "no-store", "text/plain", 404},
		{"/console/../console.go", "no-store", "text/plain", 404},
		{"/elsewhere", "no-store", "text/plain", 404},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := get(t, c, tc.path, nil)
			if r.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", r.StatusCode, tc.status)
			}
			if got := r.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			if got := r.Header.Get("Content-Type"); !strings.HasPrefix(got, tc.typ) {
				t.Errorf("Content-Type %q, want %s", got, tc.typ)
			}
			csp := r.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'",
				"img-src 'self' data: blob: https://files.example.com", "media-src 'self' data: blob: https://files.example.com"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q allows unsafe sources", csp)
			}
			if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Content-Type-Options") != "nosniff" ||
				r.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers %v", r.Header)
			}
		})
	}
}

// TestFilesOrigin: the page learns the output files' origin, which it may
// show media from (the CSP's img-src and media-src).
func TestFilesOrigin(t *testing.T) {
	for _, tc := range []struct{ publicURL, want string }{
		{"https://files.example.com/base", `content="https://files.example.com"`},
		{"", `content=""`},
		{"not a url", `content=""`},
	} {
		body, _ := io.ReadAll(get(t, New(Config{PublicURL: tc.publicURL}), "/", nil).Body)
		if !strings.Contains(string(body), `<meta name="gengate-files-origin" `+tc.want+`>`) {
			t.Errorf("public URL %q: page lacks %s", tc.publicURL, tc.want)
		}
	}
}

// TestVersioned: every asset the page and the modules load carries the
// version, so a cached copy is never one of another build; and an ETag
// revalidation answers 304.
func TestVersioned(t *testing.T) {
	c := New(Config{})
	body, _ := io.ReadAll(get(t, c, "/", nil).Body)
	if strings.Contains(string(body), "__V__") {
		t.Fatal("index.html still has the version placeholder")
	}
	refs := regexp.MustCompile(`(?:src|href)="(/console/[^"]+)"|from '\./([^']+)'`)
	seen := 0
	for _, name := range []string{"/", "/console/app.js", "/console/playground.js", "/console/admin.js", "/console/views.js", "/console/nav.js"} {
		r := get(t, c, name, nil)
		data, _ := io.ReadAll(r.Body)
		for _, m := range refs.FindAllStringSubmatch(string(data), -1) {
			ref := m[1] + m[2]
			seen++
			if !strings.HasSuffix(ref, "?v="+c.Version()) {
				t.Errorf("%s refers to %s without the version", name, ref)
			}
			if !strings.HasPrefix(ref, "/") {
				ref = "/console/" + ref
			}
			if got := get(t, c, ref, nil); got.StatusCode != 200 {
				t.Errorf("%s refers to %s: %d", name, ref, got.StatusCode)
			}
		}
		etag := r.Header.Get("ETag")
		if etag == "" {
			t.Errorf("%s: no ETag", name)
		} else if got := get(t, c, name, map[string]string{"If-None-Match": etag}); got.StatusCode != http.StatusNotModified {
			t.Errorf("%s revalidated: %d", name, got.StatusCode)
		}
	}
	if seen < 8 {
		t.Errorf("found %d references; the pattern no longer matches the files", seen)
	}
}

// TestDocsScreenshots: every screenshot docs/console.md links to exists,
// and every screenshot in docs/console/ is linked.
func TestDocsScreenshots(t *testing.T) {
	doc, err := os.ReadFile("../../docs/console.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`\(console/([a-z-]+\.png)\)`).FindAllStringSubmatch(string(doc), -1) {
		linked[m[1]] = true
		if _, err := os.Stat("../../docs/console/" + m[1]); err != nil {
			t.Errorf("docs/console.md links to %s: %v", m[1], err)
		}
	}
	files, _ := filepath.Glob("../../docs/console/*.png")
	for _, f := range files {
		if !linked[filepath.Base(f)] {
			t.Errorf("%s is not linked from docs/console.md", f)
		}
	}
	if len(linked) < 10 {
		t.Errorf("docs/console.md links %d screenshots", len(linked))
	}
}

// TestNoMarkupSinks: no script of the console parses a string as markup
// (innerHTML and its kin), so nothing an API answer holds (a prompt, a key
// name, an error's detail) can become an element or a script; the pages
// build every node with dom.js's h(). The browser test walks the pages
// with markup in a key name and a prompt.
func TestNoMarkupSinks(t *testing.T) {
	files, _ := filepath.Glob("static/*.js")
	if len(files) < 5 {
		t.Fatalf("found %d scripts", len(files))
	}
	sink := regexp.MustCompile(`\.(innerHTML|outerHTML|insertAdjacentHTML)\b|document\.write|\beval\(|new Function\(|createContextualFragment`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if sink.MatchString(line) {
				t.Errorf("%s:%d parses markup: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
