package google

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/google/googletest"
	"github.com/gengate/gengate/internal/engine/upstream"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// TestLargeInputThroughFilesAPI: a large input (Input.Large) to a Gemini
// image model goes through the Files API's resumable upload and is sent
// as a fileData part naming the uploaded file; a small one stays inline;
// Veo, which takes inline bytes only on the Gemini API, keeps them inline.
func TestLargeInputThroughFilesAPI(t *testing.T) {
	f, e := newEngine(t)
	large := pngInput
	large.Large = true
	job := imageJob(flashImage, "1:1", "png")
	job.Inputs = map[string]gengate.Input{"imageUrl": large}
	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Outputs) != 1 {
		t.Fatalf("submit progress %+v, want one output", p)
	}
	ups := f.Uploads()
	if len(ups) != 1 {
		t.Fatalf("%d files uploaded, want 1", len(ups))
	}
	var name string
	for n, data := range ups {
		name = n
		if !bytes.Equal(data, large.Data) {
			t.Errorf("uploaded %d bytes, want the input's %d", len(data), len(large.Data))
		}
	}
	parts := get(f.LastRequest(), "contents", 0, "parts").([]any)
	fd, _ := get(parts[1], "fileData").(map[string]any)
	if len(parts) != 2 || fd == nil || fd["mimeType"] != "image/png" || !strings.HasSuffix(fd["fileUri"].(string), "/v1beta/"+name) {
		t.Errorf("parts %v, want the prompt and a fileData part naming %s", parts, name)
	}

	// Small: inline, no upload.
	job.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	if _, err := e.Submit(ctx, job); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Uploads()); n != 1 {
		t.Errorf("a small input was uploaded too (%d files)", n)
	}
	if get(f.LastRequest(), "contents", 0, "parts", 1, "inlineData") == nil {
		t.Errorf("a small input is not inline: %v", f.LastRequest())
	}

	// Veo: inline bytes even when large.
	v := videoJob(veo31, map[string]any{})
	v.Inputs = map[string]gengate.Input{"imageUrl": large}
	if _, err := e.Submit(ctx, v); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Uploads()); n != 1 {
		t.Errorf("a Veo input was uploaded (%d files); the Gemini API takes Veo images inline only", n)
	}
}

// TestFilesAPIFakeIsStrict: the fake answers what the Files API answers
// to uploads gengate must not send (a missing protocol header, an offset
// that skips bytes, a length that differs from the declared one, a
// fileData part naming a file that does not exist or a misspelt field).
func TestFilesAPIFakeIsStrict(t *testing.T) {
	f := googletest.New(t)
	post := func(url string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("x-goog-api-key", f.Key())
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	root := strings.TrimSuffix(f.URL(), "/v1beta")
	start := map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
		"X-Goog-Upload-Header-Content-Length": "4", "X-Goog-Upload-Header-Content-Type": "image/png", "Content-Type": "application/json"}
	if r := post(root+"/upload/v1beta/files", map[string]string{"X-Goog-Upload-Command": "start"}, `{"file":{}}`); r.StatusCode != 400 {
		t.Errorf("start without X-Goog-Upload-Protocol: %d, want 400", r.StatusCode)
	}
	if r := post(root+"/upload/v1beta/files", start, `{"file":{"display_name2":"x"}}`); r.StatusCode != 400 {
		t.Errorf("start with an unknown file field: %d, want 400", r.StatusCode)
	}
	r := post(root+"/upload/v1beta/files", start, `{"file":{"displayName":"x"}}`)
	to := r.Header.Get("X-Goog-Upload-URL")
	if r.StatusCode != 200 || to == "" {
		t.Fatalf("start: %d, upload URL %q", r.StatusCode, to)
	}
	if r := post(to, map[string]string{"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "2"}, "abcd"); r.StatusCode != 400 {
		t.Errorf("bytes at a wrong offset: %d, want 400", r.StatusCode)
	}
	if r := post(to, map[string]string{"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"}, "abc"); r.StatusCode != 400 {
		t.Errorf("finalized short of the declared length: %d, want 400", r.StatusCode)
	}

	e := New(Config{APIKey: f.Key(), BaseURL: f.URL()})
	job := imageJob(flashImage, "1:1", "png")
	for _, tc := range []struct {
		name string
		part map[string]any
		code string
	}{
		{"unknown file", map[string]any{"fileData": map[string]any{"fileUri": f.URL() + "/files/nosuchfile", "mimeType": "image/png"}}, "PERMISSION_DENIED"},
		{"snake_case field", map[string]any{"fileData": map[string]any{"file_uri": f.URL() + "/files/x", "mimeType": "image/png"}}, "INVALID_ARGUMENT"},
	} {
		r := plan(job, true, geminiAPI, nil)
		parts := r.body["contents"].([]any)[0].(map[string]any)
		parts["parts"] = append(parts["parts"].([]any), tc.part)
		path, _ := modelPath(job, r.method)
		err := e.client.Submit(ctx, upstream.Request{Method: http.MethodPost, Path: path, JSON: r.body}, nil)
		var ue *gengate.UpstreamError
		if !errors.As(err, &ue) || ue.Kind != gengate.Refused || !strings.Contains(ue.Message, "answered 4") {
			t.Errorf("%s: %v, want a 4xx refusal (%s)", tc.name, err, tc.code)
		}
	}
}

// TestUploadURL: the Files API's upload address from the configured base.
func TestUploadURL(t *testing.T) {
	for base, want := range map[string]string{
		DefaultBaseURL:                     "https://generativelanguage.googleapis.com/upload/v1beta/files",
		"http://127.0.0.1:9/v1beta/":       "http://127.0.0.1:9/upload/v1beta/files",
		"https://proxy.example/gemini/v1":  "https://proxy.example/gemini/upload/v1/files",
		"https://generativelanguage.test/": "https://generativelanguage.test/upload/v1beta/files",
	} {
		if got, err := uploadURL(base); err != nil || got != want {
			t.Errorf("uploadURL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
}

// TestUploadFailureIsNotPaid: a Files API that fails the upload leaves the
// task free to go on: Busy for a 5xx (later), Refused for a 4xx (next
// route), and generateContent is never called.
func TestUploadFailureIsNotPaid(t *testing.T) {
	for status, kind := range map[int]gengate.UpstreamKind{503: gengate.Busy, 403: gengate.Refused} {
		calls := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/upload/") {
				calls++
			}
			w.WriteHeader(status)
		}))
		e := New(Config{APIKey: "AIzaSy-test-key-00000000000000000000", BaseURL: srv.URL + "/v1beta"})
		large := pngInput
		large.Large = true
		job := imageJob(flashImage, "1:1", "png")
		job.Inputs = map[string]gengate.Input{"imageUrl": large}
		_, err := e.Submit(ctx, job)
		var ue *gengate.UpstreamError
		if !errors.As(err, &ue) || ue.Kind != kind || calls != 0 {
			t.Errorf("upload answered %d: %v (generateContent called %d times), want kind %d and no call", status, err, calls, kind)
		}
		srv.Close()
	}
}

// TestStreamedInputs: a large input that comes as a stream from storage
// goes to the Files API whole for a Gemini image model, and is read whole
// and sent inline for Veo; one whose storage fails is Busy, nothing sent.
func TestStreamedInputs(t *testing.T) {
	f, e := newEngine(t)
	job := imageJob(flashImage, "1:1", "png")
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Streamed(pngInput)}
	if _, err := e.Submit(ctx, job); err != nil {
		t.Fatal(err)
	}
	for _, data := range f.Uploads() {
		if !bytes.Equal(data, pngInput.Data) {
			t.Errorf("uploaded %d bytes, want %d", len(data), len(pngInput.Data))
		}
	}
	v := videoJob(veo31, map[string]any{})
	v.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Streamed(pngInput)}
	if _, err := e.Submit(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got := get(f.LastRequest(), "instances", 0, "image", "bytesBase64Encoded"); got != base64.StdEncoding.EncodeToString(pngInput.Data) {
		t.Errorf("Veo's image: %.40v, want the input inline", got)
	}
	before := f.Submissions()
	for _, j := range []gengate.Job{job, v} {
		j.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Unreadable(pngInput)}
		_, err := e.Submit(ctx, j)
		var ue *gengate.UpstreamError
		if !errors.As(err, &ue) || ue.Kind != gengate.Busy || f.Submissions() != before || len(f.Uploads()) != 1 {
			t.Errorf("%s with an unreadable input: %v, want Busy and nothing sent", j.Route.Upstream, err)
		}
	}
}
