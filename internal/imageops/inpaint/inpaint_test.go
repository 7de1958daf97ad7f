package inpaint

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gengate/gengate/internal/imageops"
)

// psnrIn is the RGB PSNR of b against a over the pixels where sel is set.
func psnrIn(a, b *image.NRGBA, sel *image.Gray) float64 {
	var sum float64
	n := 0
	for i := 0; i < len(sel.Pix); i++ {
		if sel.Pix[i] < 128 {
			continue
		}
		for c := 0; c < 3; c++ {
			d := float64(a.Pix[4*i+c]) - float64(b.Pix[4*i+c])
			sum += d * d
		}
		n += 3
	}
	if sum == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(sum/float64(n)))
}

func squareHole(w, h int, r image.Rectangle) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			m.Pix[y*m.Stride+x] = 255
		}
	}
	return m
}

func stripes(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{40, 60, 160, 255}
			if (x/4)%2 == 0 {
				c = color.NRGBA{230, 200, 40, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// TestStripesRestored: the exemplar engine (no boundary ramp) restores a
// regular texture exactly; the default blend, which leans on diffusion
// within 8 px of the boundary, must still beat plain diffusion.
func TestStripesRestored(t *testing.T) {
	src := stripes(96, 96)
	hole := squareHole(96, 96, image.Rect(36, 36, 60, 60))
	p := defaults
	p.rampHi = 0
	ex, err := inpaintWith(src, hole, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Inpaint(src, hole)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := Telea(src, hole)
	if err != nil {
		t.Fatal(err)
	}
	pe, pg, pd := psnrIn(src, ex, hole), psnrIn(src, got, hole), psnrIn(src, diff, hole)
	t.Logf("PSNR in hole: exemplar %.2f dB, default blend %.2f dB, diffusion %.2f dB", pe, pg, pd)
	if pe < 30 || pe < pd+5 {
		t.Fatalf("stripes not restored: %.2f dB in the hole (diffusion %.2f)", pe, pd)
	}
	if pg < pd+1.5 {
		t.Fatalf("default blend %.2f dB, not clearly above diffusion %.2f", pg, pd)
	}
}

func TestFlatColour(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	for i := 0; i < len(src.Pix); i += 4 {
		copy(src.Pix[i:], []uint8{90, 140, 200, 255})
	}
	hole := squareHole(64, 48, image.Rect(10, 8, 40, 30))
	for y := 8; y < 30; y++ { // the "object"
		for x := 10; x < 40; x++ {
			src.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 255})
		}
	}
	got, err := Inpaint(src, hole)
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			c := got.NRGBAAt(x, y)
			if math.Abs(float64(c.R)-90) > 1 || math.Abs(float64(c.G)-140) > 1 || math.Abs(float64(c.B)-200) > 1 || c.A != 255 {
				t.Fatalf("pixel (%d,%d) = %v, want the flat colour", x, y, c)
			}
		}
	}
}

func TestOutsideUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := image.NewNRGBA(image.Rect(0, 0, 80, 70))
	for i := range src.Pix {
		src.Pix[i] = uint8(rng.IntN(256))
	}
	for i := 3; i < len(src.Pix); i += 4 {
		src.Pix[i] = uint8(128 + rng.IntN(128)) // partly transparent too
	}
	hole := squareHole(80, 70, image.Rect(20, 25, 50, 45))
	hole.Pix[3*80+70] = 255 // plus a lone pixel (a thin component: not grown)
	got, err := Inpaint(src, hole)
	if err != nil {
		t.Fatal(err)
	}
	grown := dilate(holeBits(hole), 80, 70, DefaultOptions.Dilate)
	changed := 0
	for i, g := range grown {
		o := 4 * i
		same := string(src.Pix[o:o+4]) == string(got.Pix[o:o+4])
		if !g && !same {
			t.Fatalf("pixel %d outside the hole changed: %v → %v", i, src.Pix[o:o+4], got.Pix[o:o+4])
		}
		if g && !same {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("nothing was filled")
	}
}

func TestMaskSizeRefused(t *testing.T) {
	src := stripes(40, 30)
	_, err := Inpaint(src, image.NewGray(image.Rect(0, 0, 30, 40)))
	if err == nil || !strings.Contains(err.Error(), "same size") {
		t.Fatalf("err = %v, want a size error", err)
	}
}

func TestEmptyHoleReturnsInput(t *testing.T) {
	src := stripes(40, 30)
	got, err := Inpaint(src, image.NewGray(image.Rect(0, 0, 40, 30)))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Pix) != string(src.Pix) {
		t.Fatal("an empty hole changed the image")
	}
}

func TestWholeImageHoleRefused(t *testing.T) {
	src := stripes(20, 20)
	_, err := Inpaint(src, squareHole(20, 20, image.Rect(0, 0, 20, 20)))
	if err == nil || !strings.Contains(err.Error(), "whole image") {
		t.Fatalf("err = %v, want a whole-image error", err)
	}
}

func TestMaskFrom(t *testing.T) {
	// white on black
	lum := image.NewNRGBA(image.Rect(0, 0, 4, 1))
	for x, v := range []uint8{0, 100, 160, 255} {
		lum.SetNRGBA(x, 0, color.NRGBA{v, v, v, 255})
	}
	// alpha mask: a photo with transparent areas to edit
	alpha := image.NewNRGBA(image.Rect(0, 0, 4, 1))
	for x, a := range []uint8{255, 0, 100, 200} {
		alpha.SetNRGBA(x, 0, color.NRGBA{uint8(30 + 60*x), 90, 20, a})
	}
	// white painted on a transparent layer
	painted := image.NewNRGBA(image.Rect(0, 0, 4, 1))
	painted.SetNRGBA(1, 0, color.NRGBA{255, 255, 255, 255})
	painted.SetNRGBA(2, 0, color.NRGBA{250, 250, 250, 230})
	for _, tc := range []struct {
		name string
		img  image.Image
		want []uint8
	}{
		{"white on black", lum, []uint8{0, 0, 255, 255}},
		{"alpha", alpha, []uint8{0, 255, 255, 0}},
		{"painted on transparent", painted, []uint8{0, 255, 255, 0}},
		{"offset origin", lum.SubImage(image.Rect(2, 0, 4, 1)), []uint8{255, 255}},
	} {
		m, err := MaskFrom(tc.img)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Pix) != string(tc.want) {
			t.Errorf("%s: MaskFrom = %v, want %v", tc.name, m.Pix, tc.want)
		}
	}
}

// TestKodakMasks: 2 Kodak images × 2 NVIDIA masks, whole-image PSNR
// (bounds: measured - 0.5..0.7 dB, each at or above Telea - 0.3).
func TestKodakMasks(t *testing.T) {
	dir, ok := imageops.DataDir()
	if !ok {
		t.Skip("evaluation data not found at ../shared/data: set GENGATE_EVAL_DATA or check out shared/data beside the repository")
	}
	for _, c := range []struct {
		img, mask string
		min       float64
	}{
		{"kodim03", "00400", 32.8}, // measured 33.36 (Telea 33.11)
		{"kodim03", "06400", 24.0}, // measured 24.51 (Telea 24.29)
		{"kodim07", "00400", 34.5}, // measured 35.17 (Telea 33.64)
		{"kodim07", "06400", 22.4}, // measured 23.00 (Telea 22.46)
	} {
		src, err := imageops.Load(filepath.Join(dir, "denoise-kodak24", c.img+".png"))
		if err != nil {
			t.Fatal(err)
		}
		hole, err := loadMask(filepath.Join(dir, "inpaint-nvidia-irregular-masks", c.mask+".png"), 500, 500)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Inpaint(src, hole)
		if err != nil {
			t.Fatal(err)
		}
		tel, _ := Telea(src, hole)
		p, pt := imageops.PSNRRGB(src, got), imageops.PSNRRGB(src, tel)
		t.Logf("%s × %s: %.2f dB (Telea %.2f)", c.img, c.mask, p, pt)
		if p < c.min {
			t.Errorf("%s × %s: PSNR %.2f dB < %.1f", c.img, c.mask, p, c.min)
		}
	}
}

// TestWriteDocPictures writes the documentation pictures from a synthetic
// scene (never from the research-licensed evaluation data).
func TestWriteDocPictures(t *testing.T) {
	if os.Getenv("GENGATE_UPDATE_DOCS") != "1" {
		t.Skip("set GENGATE_UPDATE_DOCS=1 to rewrite docs/builtin-quality/objectremover-*.png")
	}
	src, hole := synthScene(480, 320, 250, 200, 60)
	got, err := Inpaint(src, hole)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := InpaintWith(src, hole, Options{Dilate: DefaultOptions.Dilate, Detail: 0})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "..", "docs", "builtin-quality")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, img := range map[string]image.Image{
		"objectremover-before.png":    showHole(src, hole),
		"objectremover-after.png":     got,
		"objectremover-diffusion.png": diff,
	} {
		p := filepath.Join(dir, name)
		if err := savePNG(p, img); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 300<<10 {
			t.Errorf("%s is %d KB, want < 300 KB", name, st.Size()>>10)
		}
	}
}

// TestAdaptiveWeight: the exemplar weight is full deep inside a compact
// hole, low at its boundary, capped on stroke-like components and when the
// hole covers much of the image, and zero on thin scratches.
func TestAdaptiveWeight(t *testing.T) {
	const w, h = 240, 240
	weights := func(set func(x, y int) bool) ([]bool, []float32) {
		hole := make([]bool, w*h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				hole[y*w+x] = set(x, y)
			}
		}
		return hole, exemplarWeight(hole, distToKnown(hole, w, h), w, h, defaults)
	}
	maxIn := func(hole []bool, a []float32) float32 {
		m := float32(0)
		for i, v := range hole {
			if v {
				m = max(m, a[i])
			}
		}
		return m
	}
	// a compact object: disc of radius 40 (3 % of the image)
	hole, a := weights(func(x, y int) bool { return (x-120)*(x-120)+(y-120)*(y-120) <= 40*40 })
	if c := a[120*w+120]; c < 0.99 {
		t.Errorf("disc centre weight %.2f, want 1 (full texture)", c)
	}
	if e := a[120*w+(120-40)]; !hole[120*w+80] || e > 0.2 {
		t.Errorf("disc boundary weight %.2f, want ≤ 0.2 (mostly diffusion)", e)
	}
	// a stroke 14 px wide and 200 px long
	hole, a = weights(func(x, y int) bool { return x >= 20 && x < 220 && y >= 113 && y < 127 })
	if m := maxIn(hole, a); m > defaults.strokeCap*min(7/defaults.rampHi, 1)+0.01 || m == 0 {
		t.Errorf("stroke max weight %.2f, want in (0, %.2f]", m, defaults.strokeCap)
	}
	// a thin scratch: diffusion only
	hole, a = weights(func(x, y int) bool { return x >= 20 && x < 220 && y >= 118 && y < 122 })
	if m := maxIn(hole, a); m != 0 {
		t.Errorf("scratch max weight %.2f, want 0", m)
	}
	// a compact hole covering half the image: capped
	hole, a = weights(func(x, y int) bool { return (x-120)*(x-120)+(y-120)*(y-120) <= 96*96 })
	if c := a[120*w+120]; c > defaults.strokeCap+0.01 {
		t.Errorf("centre weight of a hole covering half the image %.2f, want ≤ %.2f", c, defaults.strokeCap)
	}
}
