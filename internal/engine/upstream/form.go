package upstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"

	"github.com/gengate/gengate"
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

// InputReader opens a job's input for sending (gengate.Input.Reader: its
// bytes, or the stored file of a large one) and returns its length. A
// storage failure is Busy: nothing was sent, the step runs again later.
func InputReader(ctx context.Context, in gengate.Input) (io.ReadCloser, int64, error) {
	r, n, err := in.Reader(ctx)
	if err != nil {
		return nil, 0, &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream,
			Message: "the stored input could not be read: " + err.Error()}
	}
	return r, n, nil
}

// InputBytes returns a job's input whole (gengate.Input.ReadAll), for
// one that must go inline; a storage failure is Busy, as InputReader's.
func InputBytes(ctx context.Context, in gengate.Input) ([]byte, error) {
	data, err := in.ReadAll(ctx)
	if err != nil {
		return nil, &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream,
			Message: "the stored input could not be read: " + err.Error()}
	}
	return data, nil
}

// InlineInputs returns job with every streamed input (Input.Open) that has
// no URL read into Data, for an engine that sends inputs as URLs when it
// can and as data: URIs otherwise (fal, Replicate): with a URL the file is
// never read here. A storage failure is Busy, as InputReader's.
func InlineInputs(ctx context.Context, job gengate.Job) (gengate.Job, error) {
	inputs := make(map[string]gengate.Input, len(job.Inputs))
	for name, in := range job.Inputs {
		if in.Open != nil && in.URL == "" {
			data, err := InputBytes(ctx, in)
			if err != nil {
				return job, err
			}
			in.Data, in.Open = data, nil
		}
		inputs[name] = in
	}
	job.Inputs = inputs
	return job, nil
}
