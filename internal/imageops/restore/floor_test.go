package restore

import (
	"image"
	"math"
	"testing"

	"github.com/gengate/gengate/internal/imageops"
)

// valueNoise is smooth value noise in 0..1 at (fx, fy), seeded by s.
func valueNoise(fx, fy float64, s uint32) float64 {
	hash := func(x, y int) float64 {
		v := uint32(x*374761393+y*668265263) ^ s*2246822519
		v = (v ^ (v >> 13)) * 1274126177
		return float64(v^(v>>16)) / float64(1<<32)
	}
	x0, y0 := int(math.Floor(fx)), int(math.Floor(fy))
	tx, ty := fx-float64(x0), fy-float64(y0)
	tx, ty = tx*tx*(3-2*tx), ty*ty*(3-2*ty)
	a := hash(x0, y0)*(1-tx) + hash(x0+1, y0)*tx
	b := hash(x0, y0+1)*(1-tx) + hash(x0+1, y0+1)*tx
	return a*(1-ty) + b*ty
}

// landscape draws a clean, full-range procedural landscape and the
// transmission of each pixel through the air: a white sky with a sun
// (top tenth), forested hills (to 80 %) whose texture is finer with
// distance, as perspective makes it, and a grassy foreground with dark
// hollows. Every region holds deep shadows in the clean picture.
// Transmission falls from 0.85 in the foreground to 0.3 on the far hills
// and 0.15 in the sky.
func landscape(w, h int) (img *image.NRGBA, trans []float64) {
	img = image.NewNRGBA(image.Rect(0, 0, w, h))
	trans = make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			u, v := float64(x)/float64(w), float64(y)/float64(h)
			var c [3]float64
			var t float64
			switch {
			case v < 0.1: // sky, the sun on the left
				c, t = [3]float64{225, 235, 250}, 0.15
				if math.Hypot(u-0.2, v-0.05) < 0.04 {
					c = [3]float64{255, 255, 250}
				}
			case v < 0.8: // hills: fine texture (a crown every ~3 px)
				d := (v - 0.1) / 0.7 // 0 far .. 1 near
				k := valueNoise(float64(x)/(2+2*d), float64(y)/(2+2*d), 1)
				k = k * k
				c = [3]float64{10 + 120*k, 20 + 150*k, 10 + 90*k}
				t = 0.3 + 0.25*d
			default: // foreground grass with dark hollows
				k := valueNoise(float64(x)/9, float64(y)/7, 2)
				k2 := valueNoise(float64(x)/3, float64(y)/3, 3)
				k = 0.7*k + 0.3*k2
				c = [3]float64{20 + 200*k, 18 + 170*k, 8 + 90*k}
				if k < 0.3 {
					c = [3]float64{8, 8, 6}
				}
				t = 0.85
			}
			o := y*img.Stride + 4*x
			for i := range 3 {
				img.Pix[o+i] = clampByte(c[i])
			}
			img.Pix[o+3] = 255
			trans[y*w+x] = t
		}
	}
	return img, trans
}

// hazeOver returns img seen through haze: each pixel weighted by its
// transmission, the rest airlight (Koschmieder's model).
func hazeOver(img *image.NRGBA, trans []float64, air [3]float64) *image.NRGBA {
	out := image.NewNRGBA(img.Rect)
	w := img.Rect.Dx()
	for i := 0; i < len(img.Pix); i += 4 {
		t := trans[i/4%w+i/4/w*w]
		for c := range 3 {
			out.Pix[i+c] = clampByte(float64(img.Pix[i+c])*t + air[c]*(1-t))
		}
		out.Pix[i+3] = 255
	}
	return out
}

// veiled returns img under a uniform veil of light (lens flare, dust in
// backlight): every level lifted, the highlights still reaching white.
func veiled(img *image.NRGBA, veil float64) *image.NRGBA {
	out := image.NewNRGBA(img.Rect)
	for i := 0; i < len(img.Pix); i += 4 {
		for c := range 3 {
			out.Pix[i+c] = clampByte(veil + float64(img.Pix[i+c])*(255-veil)/255)
		}
		out.Pix[i+3] = 255
	}
	return out
}

// TestHazeNotFading: a hazy landscape and a veiled one have the lifted
// blacks and narrow range of a faded print, so the global fade gate
// takes them for faded; they come back at 38 dB or more from themselves
// because haze lifts the far hills' detail above the foreground's black
// and a veil leaves the highlights white. The same landscape faded as a
// print is still repaired.
func TestHazeNotFading(t *testing.T) {
	clean, trans := landscape(320, 240)
	for _, c := range []struct {
		name  string
		img   *image.NRGBA
		faded bool
	}{
		{"hazy", hazeOver(clean, trans, [3]float64{200, 208, 220}), false},
		{"veiled", veiled(clean, 48), false},
		{"aged print", Fade(clean, Fadings[0]), true},
		{"magenta fade", Fade(clean, Fadings[1]), true},
	} {
		// the gate as it was before floor and the white top: black point,
		// range, channel blacks and white points only
		tn := measureTone(imageops.FromImage(c.img))
		tn.ytop = 0
		if !faded(tn, 0) {
			t.Fatalf("%s: the global gate does not take it for faded (black %v, range %v, top %v): the test shows nothing",
				c.name, tn.ylo, tn.yhi-tn.ylo, tn.ytop)
		}
		out, rep, err := RestoreReport(c.img, Options{})
		if err != nil {
			t.Fatal(err)
		}
		self, fromClean := imageops.PSNRRGB(c.img, out), imageops.PSNRRGB(clean, c.img)
		t.Logf("%s: faded %v, floor %+v, %.2f dB from itself; from the clean scene %.2f -> %.2f dB",
			c.name, rep.Faded, rep.Floor, self, fromClean, imageops.PSNRRGB(clean, out))
		if rep.Faded != c.faded {
			t.Errorf("%s: taken for faded %v, want %v", c.name, rep.Faded, c.faded)
		}
		if !c.faded && self < 38 {
			t.Errorf("%s: came back at %.2f dB from itself, want ≥ 38", c.name, self)
		}
		if c.faded && imageops.PSNRRGB(clean, out) < fromClean+2 {
			t.Errorf("%s: %.2f dB from the clean scene, restored %.2f; want 2 dB closer", c.name, fromClean, imageops.PSNRRGB(clean, out))
		}
	}
}
