package httpapi

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/gengate/gengate"
)

// handleFile serves an output file by its unguessable token:
// GET and HEAD /files/<token>.<ext>.
//
// The file is streamed from the blob store (a local file, or ranged GETs
// on S3) through http.ServeContent, so a HEAD reads nothing, a range reads
// only its bytes and memory stays flat however many requests run.
//
// The files are the upstream's bytes, checked to be images or videos but
// served from gengate's own origin, so the response keeps anything else
// from acting as a page: Content-Security-Policy: sandbox (no scripts, no
// same-origin rights even if rendered), X-Content-Type-Options: nosniff,
// and Content-Disposition: attachment for every type that is not an image
// or a video (SVG, which can hold scripts, counts as not an image).
func (a *api) handleFile() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ext, _ := strings.Cut(r.PathValue("name"), ".")
		c, err := a.svc.FindFile(r.Context(), token)
		if err == nil && c.Ext != ext {
			err = gengate.Errorf(gengate.ENotFound, "no file")
		}
		var f gengate.BlobFile
		if err == nil {
			f, err = a.svc.Blobs.Open(r.Context(), c.Key)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		defer f.Close()
		h := w.Header()
		h.Set("Content-Type", c.ContentType)
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "sandbox")
		h.Set("Content-Disposition", disposition(c))
		http.ServeContent(w, r, "", c.CreatedAt, f)
	})
}

// disposition is the Content-Disposition of a creation: inline for images
// and videos, attachment for anything else, with a file name that does not
// hold the token.
func disposition(c *gengate.Creation) string {
	kind := "attachment"
	ct := strings.ToLower(c.ContentType)
	if (strings.HasPrefix(ct, "image/") && !strings.Contains(ct, "svg")) || strings.HasPrefix(ct, "video/") {
		kind = "inline"
	}
	return mime.FormatMediaType(kind, map[string]string{"filename": fmt.Sprintf("output-%d.%s", c.Index+1, c.Ext)})
}

// handleSignedInput serves a task's stored input to the upstream it was
// sent to by URL: GET and HEAD /files/in/<task>/<name>?exp=…&sig=… (the
// URL gengate.SignInputURL made; gengate.OpenSignedInput checks it). The
// input is streamed like an output file, never cached, and kept from
// acting as a page the same way.
func (a *api) handleSignedInput() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f, err := a.svc.OpenSignedInput(r.Context(), r.PathValue("task"), r.PathValue("name"), q.Get("exp"), q.Get("sig"))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		defer f.Close()
		h := w.Header()
		h.Set("Cache-Control", "private, no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "sandbox")
		h.Set("Content-Disposition", "attachment")
		http.ServeContent(w, r, "", f.ModTime(), f) // the type sniffed from the first bytes
	})
}
