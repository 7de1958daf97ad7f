package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"testing"
)

func dataURL(t *testing.T, img image.Image) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func gradient(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	return img
}

// TestBuiltinModels: the built-in operations serve their models for real
// through the API, with no provider configured; bad inputs are refused
// before any charge.
func TestBuiltinModels(t *testing.T) {
	s := providerServer(t, "", nil)
	models := mustAPI(t, s.base, "GET", "/api/v1/models", s.key, nil, nil)
	for _, m := range models.json["models"].([]any) {
		mm := m.(map[string]any)
		switch mm["id"] {
		case "image-upscaler", "object-remover", "remove-bg", "photo-restoration":
			if mm["engine"] != "builtin" || mm["placeholder"] != false {
				t.Errorf("%s: engine %v placeholder %v", mm["id"], mm["engine"], mm["placeholder"])
			}
		}
	}

	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "image-upscaler", "imageUrl": dataURL(t, gradient(48, 32)), "scale": 2}, nil)
	wantCode(t, r, http.StatusOK)
	urls := outputURLs(r)
	data, err := download(urls[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 96 || cfg.Height != 64 {
		t.Fatalf("upscaled output %dx%d (%v), want 96x64", cfg.Width, cfg.Height, err)
	}
	balance := r.num("remainingCredits")

	// A mask of another size: 400 before anything is charged or stored.
	bad := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "object-remover", "image": dataURL(t, gradient(64, 64)), "mask": dataURL(t, gradient(32, 64))}, nil)
	wantCode(t, bad, http.StatusBadRequest)
	if bad.str("code") != "INVALID_REQUEST" || bad.str("jobId") != "" {
		t.Fatalf("mask of another size: %s", bad.body)
	}
	// remove-bg cannot write JPEG (no transparency).
	bad = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "remove-bg", "imageUrl": dataURL(t, gradient(16, 16)), "outputFormat": "jpeg"}, nil)
	wantCode(t, bad, http.StatusBadRequest)

	mask := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := 20; y < 40; y++ {
		for x := 20; x < 40; x++ {
			mask.Set(x, y, color.NRGBA{255, 255, 255, 255})
		}
	}
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			if mask.NRGBAAt(x, y).A == 0 {
				mask.Set(x, y, color.NRGBA{0, 0, 0, 255})
			}
		}
	}
	ok := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "object-remover", "image": dataURL(t, gradient(64, 64)), "mask": dataURL(t, mask)}, nil)
	wantCode(t, ok, http.StatusOK)
	if got := ok.num("remainingCredits"); got != balance-3 {
		t.Errorf("after two refused requests and one object removal: %d credits, want %d", got, balance-3)
	}

	// photo-restoration's removeScratches: a bool, refused when not one.
	bad = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "photo-restoration", "imageUrl": dataURL(t, gradient(48, 32)), "removeScratches": "yes"}, nil)
	wantCode(t, bad, http.StatusBadRequest)
	ok = mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "photo-restoration", "imageUrl": dataURL(t, gradient(48, 32)), "removeScratches": true}, nil)
	wantCode(t, ok, http.StatusOK)
	if got := ok.num("remainingCredits"); got != balance-3-4 {
		t.Errorf("after a refused and a done restoration: %d credits, want %d", got, balance-3-4)
	}
}
