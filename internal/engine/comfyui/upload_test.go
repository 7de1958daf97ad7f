package comfyui

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/comfyui/comfyuitest"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// TestUploadFakeFollowsServerPy: the fake's POST /upload/image answers
// what ComfyUI's server.py answers: the file only under "image" (another
// name is 400, a plain "image" field 500), "type" input, temp or output
// (another is 500), a subfolder that stays inside (else 400), and without
// overwrite a different file of the same name saved as "name (1).ext".
func TestUploadFakeFollowsServerPy(t *testing.T) {
	f := comfyuitest.New(t)
	post := func(file string, fields map[string]string, data []byte) (int, map[string]any) {
		t.Helper()
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		if file != "" {
			fw, _ := w.CreateFormFile(file, "in.png")
			fw.Write(data)
		}
		for k, v := range fields {
			w.WriteField(k, v)
		}
		w.Close()
		req, _ := http.NewRequest(http.MethodPost, f.URL()+"/upload/image", &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+f.Key())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans map[string]any
		json.NewDecoder(resp.Body).Decode(&ans)
		return resp.StatusCode, ans
	}
	a, b := pngInput.Data, append(bytes.Clone(pngInput.Data), 0)
	for _, tc := range []struct {
		name   string
		file   string
		fields map[string]string
		data   []byte
		status int
		want   map[string]any
	}{
		{"the file under another name", "file", map[string]string{"type": "input"}, a, 400, nil},
		{"image as a plain field", "", map[string]string{"image": "in.png"}, nil, 500, nil},
		{"an unknown type", "image", map[string]string{"type": "inputs"}, a, 500, nil},
		{"a subfolder outside", "image", map[string]string{"subfolder": "../models"}, a, 400, nil},
		{"first upload, type defaults to input", "image", nil, a, 200, map[string]any{"name": "in.png", "subfolder": "", "type": "input"}},
		{"the same bytes again keep the name", "image", nil, a, 200, map[string]any{"name": "in.png", "subfolder": "", "type": "input"}},
		{"other bytes without overwrite are renamed", "image", map[string]string{"overwrite": "yes"}, b, 200, map[string]any{"name": "in (1).png", "subfolder": "", "type": "input"}},
		{"other bytes with overwrite replace", "image", map[string]string{"overwrite": "true", "subfolder": "gengate"}, b, 200, map[string]any{"name": "in.png", "subfolder": "gengate", "type": "input"}},
		{"type temp", "image", map[string]string{"type": "temp"}, a, 200, map[string]any{"name": "in.png", "subfolder": "", "type": "temp"}},
	} {
		status, ans := post(tc.file, tc.fields, tc.data)
		if status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, status, tc.status)
			continue
		}
		if tc.want != nil && !equalJSON(ans, tc.want) {
			t.Errorf("%s: answered %v, want %v", tc.name, ans, tc.want)
		}
	}
	if got := f.Upload("gengate/in.png"); !bytes.Equal(got, b) {
		t.Errorf("the overwritten upload holds %d bytes, want %d", len(got), len(b))
	}
}

func equalJSON(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestUploadSendsWhatServerPyReads: the engine's upload is one request
// whose form has the file under "image", overwrite "true" and type
// "input", sent with a Content-Length (a Form streamed from the input).
func TestUploadSendsWhatServerPyReads(t *testing.T) {
	var got *http.Request
	var form *multipart.Form
	srv := http.NewServeMux()
	srv.HandleFunc("POST /upload/image", func(w http.ResponseWriter, r *http.Request) {
		got = r
		r.ParseMultipartForm(1 << 20)
		form = r.MultipartForm
		w.Write([]byte(`{"name": "x.png", "subfolder": "", "type": "input"}`))
	})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	e := New(Config{BaseURL: ts.URL})
	name, err := e.upload(ctx, "task-1", "image", pngInput)
	if err != nil || name != "x.png" {
		t.Fatalf("upload: %q, %v", name, err)
	}
	if got.ContentLength <= int64(len(pngInput.Data)) || len(got.TransferEncoding) != 0 {
		t.Errorf("Content-Length %d, transfer encoding %v; want the whole form's length", got.ContentLength, got.TransferEncoding)
	}
	fh := form.File["image"]
	if len(fh) != 1 || fh[0].Filename != "gengate-task-1-image.png" || fh[0].Size != int64(len(pngInput.Data)) ||
		form.Value["overwrite"][0] != "true" || form.Value["type"][0] != "input" {
		t.Errorf("form files %v values %v", form.File, form.Value)
	}
}

// TestStreamedInputUpload: a large input that comes as a stream from
// storage is uploaded whole; one whose storage fails is Busy, and no
// prompt is queued.
func TestStreamedInputUpload(t *testing.T) {
	f, e := newEngine(t)
	job := editJob()
	job.Inputs = map[string]gengate.Input{"image": upstreamtest.Streamed(pngInput)}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if got := f.Upload("gengate-" + job.TaskID + "-image.png"); !bytes.Equal(got, pngInput.Data) {
		t.Fatalf("uploaded %d bytes, want the input's %d", len(got), len(pngInput.Data))
	}
	job = editJob()
	job.Inputs = map[string]gengate.Input{"image": upstreamtest.Unreadable(pngInput)}
	before := f.Submissions()
	_, err := e.Submit(ctx, job)
	var ue *gengate.UpstreamError
	if !errors.As(err, &ue) || ue.Kind != gengate.Busy || f.Submissions() != before {
		t.Errorf("unreadable input: %v, want Busy and no prompt", err)
	}
}
