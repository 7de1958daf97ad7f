package replicate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// placeInputs returns job with each input ready to be named in a
// prediction's input: one with a URL of its own (a large input, presigned
// or gengate-signed) keeps it; one under maxDataURI goes inline as a data:
// URI (its bytes read from storage when streamed); a larger one is
// uploaded to Replicate's files API and named by the file's urls.get, as
// Replicate's own clients do with local files (replicate-go
// CreateFileFromBytes, replicate-python's FileEncodingStrategy "url").
func (e *Engine) placeInputs(ctx context.Context, job gengate.Job) (gengate.Job, error) {
	inputs := make(map[string]gengate.Input, len(job.Inputs))
	for name, in := range job.Inputs {
		size := int64(len(in.Data))
		if in.Open != nil {
			size = in.Size
		}
		if in.URL == "" && size >= maxDataURI {
			u, err := e.uploadFile(ctx, job.TaskID, name, in)
			if err != nil {
				return job, err
			}
			in.URL, in.Data, in.Open = u, nil, nil
		}
		inputs[name] = in
	}
	job.Inputs = inputs
	return upstream.InlineInputs(ctx, job)
}

// uploadFile sends one input to POST /v1/files (multipart, the file in
// the "content" part) and returns the file's urls.get. An upload starts
// no paid work: a failure of any kind, an answer lost included, is Busy
// (sent again later), or Refused for a 4xx, never ambiguous.
func (e *Engine) uploadFile(ctx context.Context, taskID, field string, in gengate.Input) (string, error) {
	r, size, err := upstream.InputReader(ctx, in)
	if err != nil {
		return "", err
	}
	defer r.Close()
	ct := in.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	form := upstream.NewForm()
	form.File("content", "gengate-"+safeName(taskID)+"-"+safeName(field), ct, r, size)
	var ans struct {
		ID   string            `json:"id"`
		URLs map[string]string `json:"urls"`
	}
	err = e.client.Submit(ctx, form.Request(upstream.Request{Method: http.MethodPost, Path: "/files"}), &ans)
	var ue *gengate.UpstreamError
	if err != nil && !errors.As(err, &ue) {
		return "", &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Message: err.Error()}
	}
	if err != nil {
		return "", err
	}
	u := ans.URLs["get"]
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return "", &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream,
			Message: fmt.Sprintf("replicate stored input %s but gave no usable URL for it (%q)", field, e.client.Clean(u))}
	}
	return u, nil
}

// safeName keeps the letters, digits, dots and dashes of s.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, s)
}
