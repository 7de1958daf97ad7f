package httpapi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// upload posts a file as the raw body with a Content-Type.
func (s *stack) upload(key, contentType string, data []byte) response {
	s.t.Helper()
	return s.do(call{Method: "POST", Path: "/api/v1/files", Key: key, Body: data, Header: map[string]string{"Content-Type": contentType}})
}

// uploadMultipart posts a file as multipart/form-data in a part named name.
func (s *stack) uploadMultipart(key, name string, data []byte) response {
	s.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("purpose", "input")
	fw, err := mw.CreateFormFile(name, "picture.png")
	if err != nil {
		s.t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	return s.do(call{Method: "POST", Path: "/api/v1/files", Key: key, Body: b.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
}

// wantUploaded checks a 201 upload answer and returns its URL.
func wantUploaded(t *testing.T, r response, contentType string, size int) string {
	t.Helper()
	wantStatus(t, r, http.StatusCreated)
	url := r.str("url")
	if !strings.Contains(url, "/files/") || r.Header.Get("Location") != url {
		t.Errorf("url %q, Location %q", url, r.Header.Get("Location"))
	}
	if r.str("contentType") != contentType || r.num("size") != size {
		t.Errorf("contentType %q size %d, want %s %d", r.str("contentType"), r.num("size"), contentType, size)
	}
	exp, err := time.Parse(time.RFC3339, r.str("expiresAt"))
	if err != nil || exp.Before(time.Now().Add(23*time.Hour)) || exp.After(time.Now().Add(25*time.Hour)) {
		t.Errorf("expiresAt %q, want about 24 h from now", r.str("expiresAt"))
	}
	return url
}

// TestUploadAndChain: an uploaded file and a task's output are inputs of
// later requests by their URLs, read from storage: the stack refuses
// loopback fetches, so a network fetch of the server's own URL would fail.
func TestUploadAndChain(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(100)
		pic := testPNG(t, 40, 30)

		url := wantUploaded(t, s.upload(key, "image/png", pic), "image/png", len(pic))
		got, ct := download(t, url)
		if !bytes.Equal(got, pic) || ct != "image/png" {
			t.Fatalf("the upload downloads as %d bytes of %s", len(got), ct)
		}
		murl := wantUploaded(t, s.uploadMultipart(key, "file", pic), "image/png", len(pic))
		if murl == url {
			t.Fatal("two uploads share a URL")
		}

		// An upload as the input of the upscaler.
		r := s.generate(key, map[string]any{"type": "image", "modelId": "image-upscaler", "imageUrl": url, "scale": 2}, nil)
		wantStatus(t, r, http.StatusOK)
		wantImage(t, images(t, r)[0], "png", 4, 3)

		// A sandbox output as the input of the next model.
		r = s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a lighthouse", "aspectRatio": "16:9"}, nil)
		wantStatus(t, r, http.StatusOK)
		out := images(t, r)[0]
		r = s.generate(key, map[string]any{"type": "image", "modelId": "image-upscaler", "imageUrl": out, "scale": 2}, nil)
		wantStatus(t, r, http.StatusOK)
		wantImage(t, images(t, r)[0], "png", 16, 9)
		s.ledgerCheck(acct)
	})
}

// TestChainOtherAccount: another account's output or upload URL is refused
// with 400 INPUT_FORBIDDEN, charging nothing and creating no task.
func TestChainOtherAccount(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		_, keyA := s.account(100)
		acctB, keyB := s.account(100)
		r := s.generate(keyA, map[string]any{"type": "image", "modelId": "flux", "prompt": "a lighthouse"}, nil)
		wantStatus(t, r, http.StatusOK)
		out := images(t, r)[0]
		up := wantUploaded(t, s.upload(keyA, "image/png", testPNG(t, 20, 20)), "image/png", len(testPNG(t, 20, 20)))
		tasks := s.taskCount()
		for _, u := range []string{out, up} {
			r = s.generate(keyB, map[string]any{"type": "image", "modelId": "image-upscaler", "imageUrl": u, "scale": 2}, nil)
			wantProblem(t, r, http.StatusBadRequest, "INVALID_REQUEST")
			if c := fieldCode(r); c != "INPUT_FORBIDDEN" {
				t.Errorf("field code %q, want INPUT_FORBIDDEN: %s", c, r.Body)
			}
		}
		if s.balance(acctB) != 100 || s.taskCount() != tasks {
			t.Errorf("a refused request changed something: balance %d, tasks %d (were %d)", s.balance(acctB), s.taskCount(), tasks)
		}
	})
}

// noisyPNG is a w×h PNG of random pixels.
func noisyPNG(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.UintN(256))
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngBomb is a small PNG whose header claims w×h pixels.
func pngBomb(t *testing.T, w, h uint32) []byte {
	data := testPNG(t, 8, 8)
	// The IHDR chunk starts at byte 8: length, "IHDR", width, height, ... CRC.
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data
}

// TestUploadChecks: an upload gets the checks of a fetched input, and a
// refused upload stores nothing.
func TestUploadChecks(t *testing.T) {
	s := newStack(t, stackOpts{maxInputBytes: 50_000})
	_, key := s.account(100)
	big := noisyPNG(t, 200, 200) // over 50 kB: noise does not compress
	if len(big) <= 50_000 {
		t.Fatalf("test picture is only %d bytes", len(big))
	}
	// A small picture padded after its end to the limit, and one byte
	// over it: the limit is the image's, not the route's (which takes a
	// video's size).
	padTo := func(n int) []byte {
		b := testPNG(t, 4, 4)
		return append(b, make([]byte, n-len(b))...)
	}
	wantUploaded(t, s.upload(key, "image/png", padTo(50_000)), "image/png", 50_000)
	kept := s.fileCount()
	cases := []struct {
		name          string
		r             response
		status        int
		code, field   string
		detailHasText string
	}{
		{"too large", s.upload(key, "image/png", big), 413, "PAYLOAD_TOO_LARGE", "INPUT_TOO_LARGE", "50000 bytes"},
		{"too large multipart", s.uploadMultipart(key, "file", big), 413, "PAYLOAD_TOO_LARGE", "INPUT_TOO_LARGE", "50000 bytes"},
		{"one byte over", s.upload(key, "image/png", padTo(50_001)), 413, "PAYLOAD_TOO_LARGE", "INPUT_TOO_LARGE", "50000 bytes"},
		{"pixel bomb", s.upload(key, "image/png", pngBomb(t, 30000, 30000)), 413, "PAYLOAD_TOO_LARGE", "INPUT_TOO_LARGE", "pixels"},
		{"not an image", s.upload(key, "application/octet-stream", []byte("%PDF-1.7 not a picture")), 415, "UNSUPPORTED_MEDIA_TYPE", "INPUT_UNSUPPORTED_TYPE", ""},
		{"truncated", s.upload(key, "image/png", testPNG(t, 40, 40)[:100]), 400, "INVALID_REQUEST", "INPUT_UNDECODABLE", ""},
		{"empty", s.upload(key, "image/png", []byte{}), 400, "INVALID_REQUEST", "INPUT_UNDECODABLE", ""},
		{"no file part", s.uploadMultipart(key, "picture", testPNG(t, 4, 4)), 400, "INVALID_REQUEST", "REQUIRED", ""},
		{"json body", s.do(call{Method: "POST", Path: "/api/v1/files", Key: key, Body: map[string]any{"url": "x"}}), 415, "UNSUPPORTED_MEDIA_TYPE", "", ""},
		{"no key", s.upload("", "image/png", testPNG(t, 4, 4)), 401, "UNAUTHORIZED", "", ""},
		{"GET", s.do(call{Method: "GET", Path: "/api/v1/files", Key: key}), 405, "METHOD_NOT_ALLOWED", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, c.r, c.status, c.code)
			if got := fieldCode(c.r); got != c.field {
				t.Errorf("field code %q, want %q", got, c.field)
			}
			if !strings.Contains(c.r.str("detail"), c.detailHasText) {
				t.Errorf("detail %q does not say %q", c.r.str("detail"), c.detailHasText)
			}
		})
	}
	if n := s.fileCount(); n != kept {
		t.Errorf("refused uploads left %d files", n-kept)
	}
}

// TestUploadRefusedAtItsLimit: an upload is refused as soon as one byte
// past its kind's limit has arrived, not once the body ends (the route
// takes a video's size, and the body is streamed to storage): the client
// here sends the limit and one byte more, then nothing until it is
// answered.
func TestUploadRefusedAtItsLimit(t *testing.T) {
	s := newStack(t, stackOpts{maxInputBytes: 50_000})
	_, key := s.account(100)
	head := testPNG(t, 4, 4)
	body := append(head, make([]byte, 50_001-len(head))...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/v1/files", io.MultiReader(bytes.NewReader(body), stalled{ctx}))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "image/png")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("no answer to 50001 bytes of a 50000-byte image: %v; want 413 without the rest of the body", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	_ = json.Unmarshal(data, &r.JSON)
	wantProblem(t, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	if got := fieldCode(r); got != "INPUT_TOO_LARGE" {
		t.Errorf("field code %q, want INPUT_TOO_LARGE", got)
	}
}

// stalled is a request body that sends nothing more until ctx ends.
type stalled struct{ ctx context.Context }

func (s stalled) Read([]byte) (int, error) {
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

// TestUploadExpires: an upload is served and usable until it expires; the
// purge then deletes its file and record.
func TestUploadExpires(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		_, key := s.account(100)
		url := wantUploaded(t, s.upload(key, "image/png", testPNG(t, 8, 8)), "image/png", len(testPNG(t, 8, 8)))
		later := *s.svc
		later.Now = func() time.Time { return time.Now().Add(24*time.Hour + time.Minute) }
		if _, err := later.Purge(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := s.fileCount(); n != 0 {
			t.Errorf("%d files left after the upload expired", n)
		}
		var n int
		if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM uploads`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d upload rows left (%v)", n, err)
		}
		r := s.do(call{Method: "GET", Path: url})
		wantProblem(t, r, http.StatusNotFound, "NOT_FOUND")
	})
}

// TestPrivateInputNamesFlag: the refusal of a loopback input URL names the
// flag that lifts it.
func TestPrivateInputNamesFlag(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(100)
	src := serveBytes(t, "image/png", testPNG(t, 8, 8))
	r := s.generate(key, map[string]any{"type": "image", "modelId": "image-upscaler", "imageUrl": src.URL + "/a.png", "scale": 2}, async)
	wantProblem(t, r, http.StatusBadRequest, "INVALID_REQUEST")
	if fieldCode(r) != "INPUT_ADDRESS_NOT_ALLOWED" || !strings.Contains(r.str("detail"), "--allow-private-inputs") {
		t.Errorf("refusal does not name --allow-private-inputs: %s", r.Body)
	}
}
