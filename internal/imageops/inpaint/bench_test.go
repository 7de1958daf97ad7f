package inpaint

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// synthScene is a procedurally generated textured scene (bricks with
// mortar, grain noise and a soft sky gradient) with a dark disc, the
// "object", centred at (cx, cy) with radius r. It returns the scene and
// the disc's mask (255 = object).
func synthScene(w, h int, cx, cy, r float64) (*image.NRGBA, *image.Gray) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	mask := image.NewGray(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(7, 11))
	bw, bh := 48.0*float64(w)/1000+12, 20.0*float64(w)/1000+6
	horizon := float64(h) * 0.28
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x), float64(y)
			var c [3]float64
			if fy < horizon {
				t := fy / horizon
				c = [3]float64{120 + 60*t, 160 + 50*t, 230 - 20*t}
			} else {
				row := math.Floor((fy - horizon) / bh)
				off := 0.0
				if int(row)%2 == 1 {
					off = bw / 2
				}
				bx := math.Mod(fx+off, bw)
				by := math.Mod(fy-horizon, bh)
				brick := math.Floor((fx + off) / bw)
				tone := 20 * math.Sin(brick*12.9898+row*78.233)
				c = [3]float64{170 + tone, 80 + tone/2, 60}
				if bx < 3 || by < 3 {
					c = [3]float64{200, 195, 185}
				}
			}
			n := rng.NormFloat64() * 6
			dx, dy := fx-cx, fy-cy
			i := img.PixOffset(x, y)
			if dx*dx+dy*dy <= r*r {
				c = [3]float64{35, 40, 55 + 40*dy/r}
				mask.Pix[y*mask.Stride+x] = 255
			}
			for k := 0; k < 3; k++ {
				img.Pix[i+k] = uint8(math.Max(0, math.Min(255, c[k]+n)))
			}
			img.Pix[i+3] = 255
		}
	}
	return img, mask
}

// BenchmarkInpaint1MP: a 1000×1000 textured scene with a disc hole of
// about 12 % of the image (dilated by one pixel inside Inpaint).
func BenchmarkInpaint1MP(b *testing.B) {
	src, hole := synthScene(1000, 1000, 520, 600, 195)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Inpaint(src, hole); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/MP")
}
