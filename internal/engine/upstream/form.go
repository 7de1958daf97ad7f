package upstream

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// Form is a multipart/form-data body whose file parts are read from their
// own readers while it is sent, not copied into it first: a request with
// a 20 MB input takes the input's memory once, not twice. Its length is
// known in advance, so it goes with a Content-Length (some servers refuse
// chunked uploads).
type Form struct {
	buf   bytes.Buffer
	w     *multipart.Writer
	parts []io.Reader
	size  int64
}

// NewForm starts an empty form.
func NewForm() *Form {
	f := &Form{}
	f.w = multipart.NewWriter(&f.buf)
	return f
}

// Field adds a plain field.
func (f *Form) Field(name, value string) {
	f.w.WriteField(name, value) // writes into a bytes.Buffer: no error
}

// File adds a file part named field, with filename and contentType in its
// headers, whose size bytes are read from r as the form is sent.
func (f *Form) File(field, filename, contentType string, r io.Reader, size int64) {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, escapeQuotes(field), escapeQuotes(filename)))
	h.Set("Content-Type", contentType)
	f.w.CreatePart(h) // writes the part's headers into buf
	f.flush()
	f.parts = append(f.parts, io.LimitReader(r, size))
	f.size += size
}

func (f *Form) flush() {
	if f.buf.Len() == 0 {
		return
	}
	b := bytes.Clone(f.buf.Bytes())
	f.parts = append(f.parts, bytes.NewReader(b))
	f.size += int64(len(b))
	f.buf.Reset()
}

// Request ends the form and returns it as a request's body, length and
// content type, set on r.
func (f *Form) Request(r Request) Request {
	f.w.Close()
	f.flush()
	r.BodyReader, r.BodyLength, r.ContentType = io.MultiReader(f.parts...), f.size, f.w.FormDataContentType()
	return r
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }
