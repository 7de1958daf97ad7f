package httpapi

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/gengate/gengate"
)

// multipartSlack is what a multipart upload may carry besides its file:
// boundaries, part headers, small fields.
const multipartSlack = 1 << 20

// handleUpload is POST /api/v1/files: the file as the raw body with its
// Content-Type, or multipart/form-data with a "file" part. It answers 201
// with a URL any input field accepts.
func (a *api) handleUpload() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := openBody(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		var file io.Reader
		switch {
		case err != nil:
			writeError(w, r, a.log, gengate.Errorf(gengate.EUnsupportedMedia,
				"send the file as the body with its Content-Type (image/png, video/mp4, application/octet-stream ...) or as multipart/form-data with a file part"))
			return
		case mt == "multipart/form-data":
			part, err := filePart(multipart.NewReader(body, params["boundary"]))
			if err != nil {
				writeError(w, r, a.log, err)
				return
			}
			defer part.Close()
			file = part
		case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "video/"), mt == "application/octet-stream":
			file = body
		default:
			writeError(w, r, a.log, gengate.Errorf(gengate.EUnsupportedMedia,
				"Content-Type %s is not a file type: send the file with its own type (image/png, video/mp4, application/octet-stream ...) or as multipart/form-data", mt))
			return
		}
		u, err := a.svc.Upload(r.Context(), apiKey(r), file)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				err = tooLarge(tooBig.Limit)
			}
			if gengate.ErrorCode(err) == gengate.ETooLarge {
				// Refused once the file's limit was passed, the rest of
				// its body unread: closing the connection after the
				// answer sends it now, not once net/http has read (and
				// discarded) more of a body already refused.
				w.Header().Set("Connection", "close")
			}
			writeError(w, r, a.log, err)
			return
		}
		url := a.baseURL(r) + u.Path()
		w.Header().Set("Location", url)
		writeJSON(w, http.StatusCreated, map[string]any{
			"url": url, "contentType": u.ContentType, "size": u.Size,
			"expiresAt": timestamp(u.ExpiresAt),
		})
	})
}

// filePart returns the multipart part named "file", skipping others.
func filePart(mr *multipart.Reader) (*multipart.Part, error) {
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, &gengate.Error{Code: gengate.EInvalid, Message: "the multipart body has no part named file",
				Fields: []gengate.FieldError{{Field: "file", Code: gengate.FieldRequired, Message: "a part named file is required"}}}
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, gengate.Errorf(gengate.ETooLarge, "the request body is too large")
			}
			return nil, gengate.Errorf(gengate.EInvalid, "the multipart body is malformed")
		}
		if p.FormName() == "file" {
			return p, nil
		}
		p.Close()
	}
}

// baseURL is the scheme and host (or --public-url) file URLs start with.
func (a *api) baseURL(r *http.Request) string {
	if base := strings.TrimRight(a.cfg.PublicURL, "/"); base != "" {
		return base
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
