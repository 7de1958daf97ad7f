package replicate

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// TestInputURLFetched: an input handed over as a URL (a large input,
// --input-url-min-bytes) goes to Replicate as that URL, and the fake fetches
// it when the prediction starts, as Replicate does: the prediction succeeds
// with the exact bytes, in a field and in a list field. A URL that answers
// 404, or a server that cannot be reached, fails the prediction with the
// text Replicate gives (requests' error), as a failed upstream job.
func TestInputURLFetched(t *testing.T) {
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/in/a.png" {
			http.NotFound(w, r)
			return
		}
		w.Write(pngInput.Data)
	}))
	t.Cleanup(files.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	unreachable := gone.URL + "/in/a.png"
	gone.Close()

	for _, tc := range []struct {
		name, upstream, param, url, fail string
	}{
		{"field", "black-forest-labs/flux-kontext-pro", "input_image", files.URL + "/in/a.png", ""},
		{"list", "google/nano-banana", "image_input", files.URL + "/in/a.png", ""},
		{"404", "black-forest-labs/flux-kontext-pro", "input_image", files.URL + "/in/deleted.png",
			"404 Client Error: Not Found for url: " + files.URL + "/in/deleted.png"},
		{"unreachable", "black-forest-labs/flux-kontext-pro", "input_image", unreachable, "Max retries exceeded with url: /in/a.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, e := newEngine(t)
			job := imageJob(tc.upstream, "1:1", "png", 1)
			job.Inputs = map[string]gengate.Input{"imageUrl": {URL: tc.url, ContentType: "image/png"}}
			_, err := run(t, e, job)
			sent := f.LastRequest()["input"].(map[string]any)[tc.param]
			if l, ok := sent.([]any); ok && len(l) == 1 {
				sent = l[0]
			}
			if sent != tc.url {
				t.Fatalf("%s = %.60v, want the URL %s", tc.param, sent, tc.url)
			}
			if tc.fail == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := f.Fetched(tc.url); !bytes.Equal(got, pngInput.Data) {
					t.Fatalf("the fake fetched %d bytes, want the %d served", len(got), len(pngInput.Data))
				}
				return
			}
			var ue *gengate.UpstreamError
			if !errors.As(err, &ue) || ue.Kind != gengate.Failed || !strings.Contains(ue.Message, tc.fail) {
				t.Fatalf("err %v, want a failed prediction saying %q", err, tc.fail)
			}
			if f.Fetched(tc.url) != nil {
				t.Error("a failed fetch was recorded as fetched")
			}
		})
	}
}

// TestStreamedInputs: a large input that comes as a stream from storage
// is never read when it has a URL (the URL is sent), and is read whole
// and sent as a data: URI when it has none; a storage failure then is
// Busy, nothing sent.
func TestStreamedInputs(t *testing.T) {
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(pngInput.Data) }))
	t.Cleanup(files.Close)
	f, e := newEngine(t)
	job := imageJob("black-forest-labs/flux-kontext-pro", "1:1", "png", 1)
	withURL := upstreamtest.Unreadable(pngInput) // opening it would fail the test
	withURL.URL = files.URL + "/in/a.png"
	job.Inputs = map[string]gengate.Input{"imageUrl": withURL}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if sent := f.LastRequest()["input"].(map[string]any)["input_image"]; sent != withURL.URL {
		t.Errorf("input_image = %.60v, want the URL", sent)
	}
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Streamed(pngInput)}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if sent, _ := f.LastRequest()["input"].(map[string]any)["input_image"].(string); sent != upstream.DataURI(pngInput) {
		t.Errorf("input_image = %.60v, want the data: URI of the input", sent)
	}
	before := f.Submissions()
	job.Inputs = map[string]gengate.Input{"imageUrl": upstreamtest.Unreadable(pngInput)}
	_, err := e.Submit(context.Background(), job)
	var ue *gengate.UpstreamError
	if !errors.As(err, &ue) || ue.Kind != gengate.Busy || f.Submissions() != before {
		t.Errorf("unreadable input without URL: %v, want Busy and nothing sent", err)
	}
}

// noisePNG is a PNG of random pixels, w×h: it hardly compresses.
func noisePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestLargeInputUploaded: Replicate recommends data: URIs "only if the
// file is less than 1MB" (replicate.com/docs/topics/predictions/input-files):
// an input of 1 MB or more without a URL of its own goes through
// Replicate's files API and the prediction names the file's urls.get; a
// smaller one stays a data: URI; one with a URL is sent as that URL.
func TestLargeInputUploaded(t *testing.T) {
	big := noisePNG(t, 640, 480)
	if len(big) < maxDataURI {
		t.Fatalf("test image of %d bytes is not large", len(big))
	}
	for _, streamed := range []bool{false, true} {
		f, e := newEngine(t)
		job := imageJob("black-forest-labs/flux-kontext-pro", "1:1", "png", 1)
		in := gengate.Input{Data: big, ContentType: "image/png"}
		if streamed {
			in = upstreamtest.Streamed(in)
		}
		job.Inputs = map[string]gengate.Input{"imageUrl": in}
		if _, err := run(t, e, job); err != nil {
			t.Fatal(err)
		}
		if n := f.LargestDataURI(); n >= maxDataURI {
			t.Errorf("a %d-byte file went as a data: URI", n)
		}
		sent, _ := f.LastRequest()["input"].(map[string]any)["input_image"].(string)
		if !strings.HasPrefix(sent, f.URL()+"/files/") || f.Uploads() != 1 {
			t.Fatalf("input_image %.80q, %d uploads: want the uploaded file's URL", sent, f.Uploads())
		}
		if !bytes.Equal(f.Fetched(sent), big) {
			t.Error("the prediction did not read the uploaded bytes")
		}
	}
	f, e := newEngine(t)
	job := imageJob("black-forest-labs/flux-kontext-pro", "1:1", "png", 1)
	job.Inputs = map[string]gengate.Input{"imageUrl": pngInput}
	if _, err := run(t, e, job); err != nil {
		t.Fatal(err)
	}
	if f.Uploads() != 0 || f.LargestDataURI() != len(pngInput.Data) {
		t.Errorf("a small input: %d uploads, data: URI of %d bytes", f.Uploads(), f.LargestDataURI())
	}
}
