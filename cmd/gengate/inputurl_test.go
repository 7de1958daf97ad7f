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
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
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

// TestLargeInputsBySignedURLReplicate: the same path through the Replicate
// fake, which fetches URL inputs when the prediction starts, as Replicate
// does: a large input reaches it as the gengate-signed URL and it gets the
// exact bytes; with a --public-url nothing answers on, the fetch fails, so
// the prediction fails as Replicate fails it (requests' connection error)
// and the task fails with UPSTREAM_ERROR, its credits refunded.
func TestLargeInputsBySignedURLReplicate(t *testing.T) {
	large := pngBytes(t, noise(64, 64))
	body := map[string]any{"type": "image", "modelId": "flux-kontext-pro", "prompt": "edit",
		"imageUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString(large)}
	// serve runs a server on addr whose --public-url is public, routing
	// to a Replicate fake only.
	serve := func(addr, public string) (*server, *replicatetest.Server) {
		rep := replicatetest.New(t)
		s := runServerEnv(t, nil, "--data", t.TempDir(), "--addr", addr, "--sync-wait", "60s",
			"--public-url", public, "--input-url-min-bytes", "4096",
			"--config", writeConfig(t, "providers:\n"+replicateConfig(rep)))
		return s, rep
	}

	// --public-url names the server itself.
	addr := freeAddr(t)
	s, rep := serve(addr, "http://"+addr)
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, body, nil)
	wantCode(t, r, http.StatusOK)
	sent, _ := rep.LastRequest()["input"].(map[string]any)["input_image"].(string)
	if !strings.HasPrefix(sent, "http://"+addr+gengate.InputURLPath+r.str("jobId")+"/") {
		t.Fatalf("Replicate was sent %.80q, want a signed URL of the server", sent)
	}
	if got := rep.Fetched(sent); !bytes.Equal(got, large) {
		t.Fatalf("Replicate fetched %d bytes from the URL, want the %d sent", len(got), len(large))
	}

	// --public-url names a port nothing listens on.
	own, nobody := freeAddr(t), freeAddr(t)
	for own == nobody {
		nobody = freeAddr(t)
	}
	s, rep = serve(own, "http://"+nobody)
	r = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, body, nil)
	wantCode(t, r, http.StatusBadGateway)
	if r.str("reason") != "UPSTREAM_ERROR" || r.num("remainingCredits") != 1000 || !strings.Contains(string(r.body), "Max retries exceeded") {
		t.Fatalf("an input Replicate cannot fetch: %s", r.body)
	}
	if rep.Submissions() != 1 {
		t.Errorf("Replicate submissions %d, want 1", rep.Submissions())
	}
}

// freeAddr is a loopback address with a free port (for --addr or a
// --public-url that must name it before the server starts).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
