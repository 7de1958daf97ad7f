package upscale

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	xdraw "golang.org/x/image/draw"

	"github.com/gengate/gengate/internal/imageops"
)

func TestScaleRefused(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for _, s := range []int{-1, 0, 1, 5, 8} {
		if _, err := Upscale(img, s); err == nil {
			t.Errorf("scale %d accepted", s)
		}
	}
}

func TestEmptyRefused(t *testing.T) {
	for _, r := range []image.Rectangle{image.Rect(0, 0, 0, 5), image.Rect(0, 0, 5, 0), image.Rect(3, 3, 3, 3)} {
		if _, err := Upscale(image.NewNRGBA(r), 2); err == nil {
			t.Errorf("empty %v accepted", r)
		}
	}
	if _, err := Upscale(nil, 2); err == nil {
		t.Error("nil image accepted")
	}
}

func TestDimensions(t *testing.T) {
	src := synthetic(37, 23, 1)
	sub := src.SubImage(image.Rect(5, 3, 30, 20)) // non-zero origin
	gray := image.NewGray(image.Rect(0, 0, 1, 3))
	for _, in := range []image.Image{src, sub, gray, image.NewNRGBA(image.Rect(0, 0, 1, 1))} {
		for s := 2; s <= 4; s++ {
			out, err := Upscale(in, s)
			if err != nil {
				t.Fatal(err)
			}
			b := in.Bounds()
			if want := image.Rect(0, 0, b.Dx()*s, b.Dy()*s); out.Bounds() != want {
				t.Errorf("%v x%d: got %v want %v", b, s, out.Bounds(), want)
			}
		}
	}
}

// A flat image must stay exactly flat (weights sum to one, no ringing).
func TestFlatStaysFlat(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 20, 15))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []uint8{200, 100, 50, 255})
	}
	out, _ := Upscale(img, 3)
	for i := 0; i < len(out.Pix); i += 4 {
		if c := out.Pix[i : i+4]; c[0] != 200 || c[1] != 100 || c[2] != 50 || c[3] != 255 {
			t.Fatalf("pixel %d = %v", i/4, c)
		}
	}
}

// Known answer: a procedural scene (strokes, rings, stripes, gradient)
// degraded by the MATLAB bicubic model must come back far better than
// bilinear interpolation manages, and better than Lanczos.
func TestRecoversDegradedScene(t *testing.T) {
	// Gradient with a tilted sharp-edged disc and bar (antialiased 4×4).
	hr := image.NewNRGBA(image.Rect(0, 0, 192, 144))
	for y := 0; y < 144; y++ {
		for x := 0; x < 192; x++ {
			var v float64
			for sy := 0; sy < 4; sy++ {
				for sx := 0; sx < 4; sx++ {
					u, w := float64(x)+(float64(sx)+0.5)/4, float64(y)+(float64(sy)+0.5)/4
					c := 40 + 0.6*u
					if (u-70)*(u-70)+(w-70)*(w-70) < 40*40 {
						c = 220
					}
					if u+0.3*w > 140 && u+0.3*w < 152 {
						c = 20
					}
					v += c / 16
				}
			}
			i := hr.PixOffset(x, y)
			hr.Pix[i], hr.Pix[i+1], hr.Pix[i+2], hr.Pix[i+3] = uint8(v+0.5), uint8(v*0.8+0.5), uint8(255-v+0.5), 255
		}
	}
	for s := 2; s <= 4; s += 2 {
		lr := bicubicDown(hr, s)
		out, err := Upscale(lr, s)
		if err != nil {
			t.Fatal(err)
		}
		bil := image.NewNRGBA(out.Bounds())
		xdraw.BiLinear.Scale(bil, bil.Bounds(), lr, lr.Bounds(), xdraw.Src, nil)
		lz, _ := lanczos(lr, s)
		got, pb, pl := scoreY(hr, out, s, false).psnr, scoreY(hr, bil, s, false).psnr, scoreY(hr, lz, s, false).psnr
		t.Logf("x%d: ours %.2f dB, Lanczos %.2f, bilinear %.2f", s, got, pl, pb)
		if got < pb+1.5 || got < pl+0.5 || got < map[int]float64{2: 40, 4: 34}[s] {
			t.Errorf("x%d: %.2f dB, not clearly above bilinear %.2f / Lanczos %.2f", s, got, pb, pl)
		}
	}
}

func TestAlphaPreserved(t *testing.T) {
	src := synthetic(40, 30, 1)
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			a := uint8(255)
			switch {
			case x < 10:
				a = 0
			case x < 20:
				a = uint8(x * 10)
			}
			src.Pix[src.PixOffset(x, y)+3] = a
		}
	}
	out, err := Upscale(src, 2)
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 60; y++ {
		if a := out.NRGBAAt(5, y).A; a != 0 {
			t.Fatalf("transparent area got alpha %d", a)
		}
		if a := out.NRGBAAt(70, y).A; a != 255 {
			t.Fatalf("opaque area got alpha %d", a)
		}
		// mid ramp: alpha ~ x*10 at input x = 15 (output 30..31)
		if a := int(out.NRGBAAt(30, y).A); a < 140 || a > 160 {
			t.Fatalf("ramp alpha %d, want ~150", a)
		}
	}
	// Colour in the opaque part must match the opaque-only result.
	opq := synthetic(40, 30, 1)
	ref, _ := Upscale(opq, 2)
	c1, c2 := out.NRGBAAt(60, 30), ref.NRGBAAt(60, 30)
	if d := int(c1.R) - int(c2.R); d < -3 || d > 3 {
		t.Fatalf("colour changed by alpha far from the edge: %v vs %v", c1, c2)
	}
}

func TestGrayInput(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range g.Pix {
		g.Pix[i] = uint8(i % 16 * 16)
	}
	out, err := Upscale(g, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c := out.NRGBAAt(10, 10); c.R != c.G || c.G != c.B || c.A != 255 {
		t.Fatalf("grey input gave %v", c)
	}
	_ = color.Gray{}
}

// Protocol subset: two Set5 images at x2 gain >= 0.5 dB over Lanczos-4.
func TestSet5Gain(t *testing.T) {
	dir, ok := imageops.DataDir()
	if !ok {
		t.Skip("evaluation data not found at ../shared/data: set GENGATE_EVAL_DATA or see imageops.DataDir")
	}
	c := srCase{set: "Set5", names: []string{"baby", "bird"}, s: 2}
	ours, base, err := evalCase(dir, c, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Set5 baby+bird x2: %.2f dB vs Lanczos-4 %.2f", ours.psnr, base.psnr)
	if ours.psnr-base.psnr < 0.5 {
		t.Fatalf("gain %.2f dB < 0.5", ours.psnr-base.psnr)
	}
}

// TestWriteDocPictures rewrites docs/builtin-quality/upscale-{before,after}.png
// from the procedural scene (never from evaluation data).
func TestWriteDocPictures(t *testing.T) {
	if os.Getenv("GENGATE_UPDATE_DOCS") != "1" {
		t.Skip("set GENGATE_UPDATE_DOCS=1 to rewrite docs pictures")
	}
	const s = 3
	hr := synthetic(480, 360, 4)
	lr := bicubicDown(hr, s)
	before, err := lanczos(lr, s)
	if err != nil {
		t.Fatal(err)
	}
	after, err := Upscale(lr, s)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "..", "docs", "builtin-quality")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, img := range map[string]image.Image{"upscale-before.png": before, "upscale-after.png": after} {
		p := filepath.Join(dir, name)
		if err := writePNG(p, img); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Size() > 300<<10 {
			t.Fatalf("%s: %v, size %d", p, err, st.Size())
		}
	}
	t.Logf("x%d: Lanczos %.2f dB, Upscale %.2f dB (Y PSNR vs the scene)", s,
		scoreY(hr, before, s, false).psnr, scoreY(hr, after, s, false).psnr)
}
