package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
)

// TestLargeInputsBySignedURL: with local storage and a --public-url (the
// server itself, on loopback), an input of at least --input-url-min-bytes
// reaches the fal fake as a gengate-signed URL, which the fake fetches
// while it works and gets the exact bytes sent; a smaller input still goes
// inline as a data: URI. The URL is refused with 403 FORBIDDEN when its
// signature is changed, when it names another task, or when it expired,
// and answers 404 once the task finished and its input was deleted.
func TestLargeInputsBySignedURL(t *testing.T) {
	fal := faltest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port, for --public-url to name
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	public := "http://" + addr
	data := t.TempDir()
	s := runServerEnv(t, nil, "--data", data, "--addr", addr, "--sync-wait", "30s",
		"--public-url", public, "--input-url-min-bytes", "4096",
		"--config", writeConfig(t, "providers:\n"+falConfig(fal)))

	large, small := pngBytes(t, noise(64, 64)), pngBytes(t, noise(4, 4))
	if len(large) < 4096 || len(small) >= 4096 {
		t.Fatalf("test inputs of %d and %d bytes do not straddle 4096", len(large), len(small))
	}
	generate := func(img []byte) (jobID, sent string) {
		r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, map[string]any{"type": "image", "modelId": "flux-kontext-pro",
			"prompt": "edit", "imageUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)}, nil)
		wantCode(t, r, http.StatusOK)
		for _, v := range fal.LastRequest() {
			if u, ok := v.(string); ok && (strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "http")) {
				sent = u
			}
		}
		return r.str("jobId"), sent
	}

	id, sent := generate(large)
	if !strings.HasPrefix(sent, public+gengate.InputURLPath+id+"/") {
		t.Fatalf("fal was sent %.80q, want a signed URL of the server", sent)
	}
	if got := fal.Fetched(sent); !bytes.Equal(got, large) {
		t.Fatalf("fal fetched %d bytes from the URL, want the %d sent", len(got), len(large))
	}
	otherID, smallSent := generate(small)
	if smallSent != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(small) {
		t.Fatalf("a small input went as %.60q, want its data: URI", smallSent)
	}

	u, err := url.Parse(sent)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(u.Path)
	q := u.Query()
	key, err := os.ReadFile(filepath.Join(data, "files", ".signing-key"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(data, "files", ".signing-key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("signing key file: %v, %v; want mode 0600", info.Mode(), err)
	}
	sig := []byte(q.Get("sig"))
	sig[0] ^= 1
	for _, c := range []struct{ what, path string }{
		{"tampered signature", u.Path + "?exp=" + q.Get("exp") + "&sig=" + string(sig)},
		{"another task", gengate.InputURLPath + otherID + "/" + name + "?" + u.RawQuery},
		{"later expiry", u.Path + "?exp=" + q.Get("exp") + "0&sig=" + q.Get("sig")},
		{"expired", strings.TrimPrefix(gengate.SignInputURL(public, key, id, name, time.Now().Add(-time.Second)), public)},
	} {
		r := mustAPI(t, s.base, "GET", c.path, "", nil, nil)
		if r.status != http.StatusForbidden || r.str("code") != "FORBIDDEN" {
			t.Errorf("%s: %d %s, want 403 FORBIDDEN", c.what, r.status, r.body)
		}
	}
	// The task finished, so its input is deleted: the valid URL finds nothing.
	poll(t, 30*time.Second, 20*time.Millisecond, "the input URL to answer 404", func() bool {
		r := mustAPI(t, s.base, "GET", u.Path+"?"+u.RawQuery, "", nil, nil)
		return r.status == http.StatusNotFound && r.str("code") == "NOT_FOUND"
	})
}

func noise(w, h int) *image.NRGBA {
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255})
		}
	}
	return img
}

func pngBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
