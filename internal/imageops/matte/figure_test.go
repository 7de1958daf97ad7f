package matte

import (
	"image"
	"math/rand/v2"
	"testing"
)

// lanternScene draws a w×h picture of a man in a dark suit before a wall
// of lanterns: bright lanterns (yellow, some lit pale pink) in rows over
// dark gaps of the suit's colour, and a figure whose hat, face and shirt
// stand out while the suit, running out through the bottom edge, has the
// gaps' colour. It returns the image, the light parts' mask and the
// suit's mask.
func lanternScene(w, h int, seed uint64) (*image.NRGBA, []bool, []bool) {
	rng := rand.New(rand.NewPCG(seed, 0x6c616e74))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	head := make([]bool, w*h)
	suit := make([]bool, w*h)
	gap := [3]float64{32, 26, 30}
	cx := 0.62 * float64(w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			i := y*w + x
			c := gap
			// lanterns: a grid of ellipses, the ones left of the figure lit pale
			const sx, sy = 62.0, 72.0
			gx, gy := int(fx/sx), int((fy+20)/sy)
			lx, ly := (float64(gx)+0.5)*sx, (float64(gy)+0.5)*sy-20
			if dx, dy := (fx-lx)/29, (fy-ly)/34; dx*dx+dy*dy <= 1 {
				c = [3]float64{232, 188, 36}
				if gx >= 1 && gx <= 2 && gy == 1 {
					c = [3]float64{236, 206, 226}
				}
			}
			hx := (fx - cx) / float64(w)
			hy := fy / float64(h)
			switch {
			case (hx/0.11)*(hx/0.11)+((hy-0.12)/0.05)*((hy-0.12)/0.05) <= 1: // hat brim and crown
				head[i] = true
				c = [3]float64{222, 212, 182}
			case (hx/0.065)*(hx/0.065)+((hy-0.25)/0.1)*((hy-0.25)/0.1) <= 1: // face
				head[i] = true
				c = [3]float64{212, 164, 132}
			case hy > 0.34 && hx > -0.035 && hx < 0.035 && hy < 0.62: // shirt
				head[i] = true
				c = [3]float64{238, 238, 236}
			case hy > 0.34 && hx > -0.17+0.1*max(0, 0.45-hy) && hx < 0.17-0.1*max(0, 0.45-hy): // suit
				suit[i] = true
				c = gap
			}
			o := img.PixOffset(x, y)
			for k := 0; k < 3; k++ {
				img.Pix[o+k] = clampU8(float32(c[k] + 5*rng.NormFloat64()))
			}
			img.Pix[o+3] = 255
		}
	}
	return img, head, suit
}

// TestFigureKeepsSuit: a man whose dark suit has the colours of the gaps
// between bright lanterns keeps his suit (figureBelow: without it the
// mask is his hat, face and shirt and a pale lantern beside them, and the
// suit is lost).
func TestFigureKeepsSuit(t *testing.T) {
	const w, h = 300, 200
	for seed := uint64(1); seed <= 3; seed++ {
		img, head, suit := lanternScene(w, h, seed)
		_, alpha, err := run(img, defaultParams)
		if err != nil {
			t.Fatal(err)
		}
		m := alphaMask(alpha)
		var hk, hn, sk, sn, out int
		for i := range m {
			switch {
			case head[i]:
				hn++
				if m[i] {
					hk++
				}
			case suit[i]:
				sn++
				if m[i] {
					sk++
				}
			case m[i]:
				out++
			}
		}
		t.Logf("seed %d: head %d/%d, suit %d/%d kept, %d px outside", seed, hk, hn, sk, sn, out)
		if hk < hn*9/10 {
			t.Errorf("seed %d: head %d of %d px kept", seed, hk, hn)
		}
		if sk < sn*9/10 {
			t.Errorf("seed %d: suit %d of %d px kept", seed, sk, sn)
		}
		// the box around the suit also holds dark gaps beside it, of the
		// suit's very colour and with no edge between them: some are kept
		if out > (hn+sn)/3 {
			t.Errorf("seed %d: %d px of background kept", seed, out)
		}
	}
}
