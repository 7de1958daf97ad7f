package google

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// Large inputs on the Gemini API go through its Files API rather than
// inline: a resumable upload (go-genai files.go Upload and api_client.go
// upload, googleapis/go-genai@6fd3e65e, read 2026-11-23; the REST example
// of ai.google.dev/gemini-api/docs/files). The start request is
//
//	POST {root}/upload/v1beta/files
//	X-Goog-Upload-Protocol: resumable
//	X-Goog-Upload-Command: start
//	X-Goog-Upload-Header-Content-Length: <bytes>
//	X-Goog-Upload-Header-Content-Type: <mime>
//	{"file": {"displayName": …}}
//
// whose answer's X-Goog-Upload-URL header is where the bytes go, in one
// request here ("X-Goog-Upload-Command: upload, finalize",
// "X-Goog-Upload-Offset: 0"); its answer is {"file": {name, uri,
// mimeType, state}} with "X-Goog-Upload-Status: final". The
// generateContent part is then {"fileData": {"fileUri", "mimeType"}}. A
// file still PROCESSING is read again (GET /files/{id}) until ACTIVE.
// Files are deleted by Google after 48 hours; gengate leaves them to that.
//
// Only generateContent (the Gemini image models) takes fileData. Veo's
// image and lastFrame are inline bytes on the Gemini API (go-genai refuses
// gcsUri there), so Veo inputs stay inline, which the API takes up to its
// 100 MB request limit, beyond gengate's own input limits.

// uploadTimeout bounds one file upload (start, bytes and the processing
// wait together).
const uploadTimeout = 5 * time.Minute

// fileObject is the Files API's File resource, as far as gengate reads it.
type fileObject struct {
	Name     string `json:"name"`
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	State    string `json:"state"`
}

// uploadRoot returns the Files API upload URL for a Gemini API base URL:
// https://host/v1beta gives https://host/upload/v1beta/files.
func uploadURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	p := strings.TrimRight(u.Path, "/")
	i := strings.LastIndex(p, "/")
	version := p[i+1:]
	if version == "" {
		version = "v1beta"
		i = len(p)
	}
	u.Path = p[:max(i, 0)] + "/upload/" + version + "/files"
	return u.String(), nil
}

// uploadFile sends one input through the Files API and returns its file.
// Nothing paid has started: every failure is Refused (a 4xx answer: the
// next route may take the task) or Busy (the rest: try again later).
func (e *Engine) uploadFile(ctx context.Context, taskID, field string, in gengate.Input) (fileObject, error) {
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	mime := in.ContentType
	if mime == "" {
		mime = http.DetectContentType(in.Data)
	}
	body, size, err := upstream.InputReader(ctx, in) // the stored file, read as it is sent
	if err != nil {
		return fileObject{}, err
	}
	defer body.Close()
	start, err := uploadURL(e.client.BaseURL)
	if err != nil {
		return fileObject{}, fmt.Errorf("google: upload URL: %w", err)
	}
	var answer http.Header
	meta := map[string]any{"file": map[string]any{"displayName": "gengate " + taskID + " " + field}}
	err = busyIfLost(e.client.Submit(ctx, upstream.Request{Method: http.MethodPost, Path: start, JSON: meta, Answer: &answer,
		Header: http.Header{
			"X-Goog-Upload-Protocol":              {"resumable"},
			"X-Goog-Upload-Command":               {"start"},
			"X-Goog-Upload-Header-Content-Length": {strconv.FormatInt(size, 10)},
			"X-Goog-Upload-Header-Content-Type":   {mime},
		}}, nil))
	if err != nil {
		return fileObject{}, err
	}
	to := answer.Get("X-Goog-Upload-URL")
	if to == "" {
		return fileObject{}, busy("google started a file upload but gave no X-Goog-Upload-URL")
	}
	var done struct {
		File fileObject `json:"file"`
	}
	answer = nil
	err = busyIfLost(e.client.Submit(ctx, upstream.Request{Method: http.MethodPost, Path: to, Answer: &answer,
		BodyReader: body, BodyLength: size, ContentType: mime,
		Header: http.Header{"X-Goog-Upload-Command": {"upload, finalize"}, "X-Goog-Upload-Offset": {"0"}}}, &done))
	if err != nil {
		return fileObject{}, err
	}
	if st := answer.Get("X-Goog-Upload-Status"); st != "final" {
		return fileObject{}, busy(fmt.Sprintf("google's file upload ended with status %q, not final", st))
	}
	f := done.File
	for i := 0; f.State == "PROCESSING" && i < 30; i++ {
		select {
		case <-ctx.Done():
			return fileObject{}, busy("google was still processing an uploaded input")
		case <-time.After(time.Second):
		}
		if !validFileName(f.Name) {
			break
		}
		if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/" + f.Name}, &f); err != nil {
			return fileObject{}, busyIfLost(err)
		}
	}
	switch {
	case f.URI == "":
		return fileObject{}, busy("google's file upload answered without a file uri")
	case f.State != "" && f.State != "ACTIVE":
		return fileObject{}, &gengate.UpstreamError{Kind: gengate.Refused, Code: gengate.CodeUpstream,
			Message: fmt.Sprintf("google could not use the uploaded input %s (file state %s)", field, f.State)}
	}
	if f.MIMEType == "" {
		f.MIMEType = mime
	}
	return f, nil
}

func validFileName(n string) bool {
	id, ok := strings.CutPrefix(n, "files/")
	return ok && id != "" && !strings.ContainsAny(id, "/?#: ")
}

// busyIfLost makes a lost or unreadable answer Busy: an upload costs
// nothing, so trying again later is safe.
func busyIfLost(err error) error {
	var ue *gengate.UpstreamError
	if err != nil && !errors.As(err, &ue) {
		return busy(err.Error())
	}
	return err
}

func busy(msg string) error {
	return &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Message: msg}
}

// uploadLarge sends the job's large inputs through the Files API when the
// route's model takes them as fileData (generateContent), and returns
// their files by input field. It reads the large inputs that go inline
// after all (Veo's) into memory: it returns the job with them as Data.
func (e *Engine) uploadLarge(ctx context.Context, job gengate.Job) (gengate.Job, map[string]fileObject, error) {
	sp, _ := specFor(job.Route.Upstream, job.Type)
	inputs := make(map[string]gengate.Input, len(job.Inputs))
	for field, in := range job.Inputs {
		if in.Open != nil && sp.method != generateContent {
			data, err := upstream.InputBytes(ctx, in)
			if err != nil {
				return job, nil, err
			}
			in.Data, in.Open = data, nil
		}
		inputs[field] = in
	}
	job.Inputs = inputs
	if sp.method != generateContent {
		return job, nil, nil
	}
	var files map[string]fileObject
	for _, field := range sortedKeys(job.Inputs) {
		in := job.Inputs[field]
		if !in.Large {
			continue
		}
		f, err := e.uploadFile(ctx, job.TaskID, field, in)
		if err != nil {
			return job, nil, err
		}
		if files == nil {
			files = map[string]fileObject{}
		}
		files[field] = f
	}
	return job, files, nil
}
