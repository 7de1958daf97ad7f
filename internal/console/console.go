// Package console is gengate's web console: a small vanilla-JavaScript app
// embedded in the binary, for account holders (sign in, balance, playground,
// tasks, gallery, ledger, keys) and operators (accounts, review, engines).
//
// It has no server-side logic of its own: the page talks only to the JSON
// API (docs/api.md) with its session cookie and X-CSRF-Token. This package
// serves the files: GET / answers index.html, GET /console/<file> the
// assets. Every answer carries a strict Content-Security-Policy (no inline
// script, no third-party origin but the output files' one), X-Frame-Options
// DENY and no-referrer, so a sign-in link's token (in the URL fragment)
// never leaves the page.
//
// There is no build step: the files in static/ are what the browser runs.
// Each text asset's "__V__" is replaced by a hash of all the files when the
// handler is built, so index.html and the modules refer to each other as
// "app.js?v=<hash>", and answers to a versioned URL are cached for a year.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Config is what the console needs to know about the server.
type Config struct {
	// PublicURL is the server's --public-url, the base of output file
	// URLs; its origin is allowed for images and videos. Empty: the
	// console's own origin serves them.
	PublicURL string
}

// Console serves the console's files.
type Console struct {
	files   map[string]asset // by name under static/
	version string
	csp     string
	started time.Time
}

type asset struct {
	body []byte
	etag string
	typ  string
}

// New builds the console handler from the embedded files.
func New(cfg Config) *Console {
	c := &Console{files: map[string]asset{}, started: time.Now()}
	raw := map[string][]byte{}
	h := sha256.New()
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		raw[name] = data
		h.Write([]byte(name))
		h.Write(data)
		return nil
	})
	c.version = hex.EncodeToString(h.Sum(nil))[:12]
	for name, data := range raw {
		typ := mime.TypeByExtension(path.Ext(name))
		if typ == "" {
			typ = "application/octet-stream"
		}
		if strings.HasPrefix(typ, "text/") || strings.Contains(typ, "javascript") {
			data = bytes.ReplaceAll(data, []byte("__V__"), []byte(c.version))
		}
		if name == "index.html" {
			// The page shows images and videos from its own origin and
			// the output files' one, as the CSP allows, and links to others.
			data = bytes.ReplaceAll(data, []byte("__FILES__"), []byte(html.EscapeString(origin(cfg.PublicURL))))
		}
		sum := sha256.Sum256(data)
		c.files[name] = asset{body: data, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, typ: typ}
	}
	media := "'self' data: blob:"
	if o := origin(cfg.PublicURL); o != "" {
		media += " " + o
	}
	c.csp = strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src " + media,
		"media-src " + media,
		"connect-src 'self'",
		"font-src 'self'",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
	return c
}

// Version is the hash the assets are versioned by.
func (c *Console) Version() string { return c.version }

// origin returns scheme://host of u, or "" when u is empty or not absolute.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// ServeHTTP answers GET / with index.html and GET /console/<name> with an
// asset; anything else is 404.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := ""
	switch {
	case r.URL.Path == "/" || r.URL.Path == "/console" || r.URL.Path == "/console/":
		name = "index.html"
	case strings.HasPrefix(r.URL.Path, "/console/"):
		name = strings.TrimPrefix(r.URL.Path, "/console/")
	}
	a, ok := c.files[name]
	hd := w.Header()
	hd.Set("Content-Security-Policy", c.csp)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !ok || name == "" {
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("not found\n"))
		return
	}
	switch {
	case name != "index.html" && r.URL.Query().Get("v") == c.version:
		// A versioned URL names these exact bytes.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	default:
		// The page and unversioned URLs: revalidate (ETag) every time, so
		// an upgraded server serves its own console at once.
		hd.Set("Cache-Control", "no-cache")
	}
	hd.Set("Content-Type", a.typ)
	hd.Set("ETag", a.etag)
	http.ServeContent(w, r, "", c.started, bytes.NewReader(a.body))
}
