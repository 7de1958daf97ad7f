package upstream

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// TestFormStreamsFiles: a Form's body is a well-formed multipart body of
// exactly its declared length, and building it does not copy its files:
// an 8 MiB file adds a few hundred bytes of allocations, not 8 MiB.
func TestFormStreamsFiles(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 512<<10) // 8 MiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f := NewForm()
	f.Field("prompt", `a "quoted" prompt`)
	f.File("image[]", "image.png", "image/png", bytes.NewReader(data), int64(len(data)))
	f.Field("n", "1")
	r := f.Request(Request{Path: "/images/edits"})
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("building the form allocated %d bytes; the file was copied", grew)
	}
	body, err := io.ReadAll(r.BodyReader)
	if err != nil || int64(len(body)) != r.BodyLength {
		t.Fatalf("body of %d bytes (%v), declared %d", len(body), err, r.BodyLength)
	}
	_, params, err := mime.ParseMediaType(r.ContentType)
	if err != nil {
		t.Fatal(err)
	}
	form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(32 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if form.Value["prompt"][0] != `a "quoted" prompt` || form.Value["n"][0] != "1" {
		t.Errorf("fields %v", form.Value)
	}
	fh := form.File["image[]"]
	if len(fh) != 1 || fh[0].Filename != "image.png" || fh[0].Header.Get("Content-Type") != "image/png" {
		t.Fatalf("files %v", form.File)
	}
	rd, _ := fh[0].Open()
	got, _ := io.ReadAll(rd)
	if !bytes.Equal(got, data) {
		t.Errorf("file part of %d bytes, want %d", len(got), len(data))
	}
}

// BenchmarkUploadInput sends a 32 MiB input as a multipart file part to
// a server that discards it: as a Form (the file read as it is sent) and,
// for comparison in the same run, as the whole body built in a buffer
// first (what the engines did before). B/op is the figure: the Form's
// does not grow with the file (docs/notes/large-files.md).
func BenchmarkUploadInput(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c := NewClient("bench", Config{BaseURL: srv.URL}, srv.URL, "", "", nil)
	data := bytes.Repeat([]byte{7}, 32<<20)
	ctx := context.Background()
	b.Run("form", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for range b.N {
			f := NewForm()
			f.Field("prompt", "x")
			f.File("image", "in.png", "image/png", bytes.NewReader(data), int64(len(data)))
			if err := c.Submit(ctx, f.Request(Request{Method: http.MethodPost, Path: "/upload"}), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("buffer", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for range b.N {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			w.WriteField("prompt", "x")
			fw, _ := w.CreateFormFile("image", "in.png")
			fw.Write(data)
			w.Close()
			if err := c.Submit(ctx, Request{Method: http.MethodPost, Path: "/upload", Body: buf.Bytes(), ContentType: w.FormDataContentType()}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
