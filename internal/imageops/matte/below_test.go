package matte

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// neckScene draws a w×h picture of a head whose neck runs out through the
// bottom edge in the background's colours: a background of blocks (grey
// stone, green grass, dark shadow and pale stone, as ruins on a hillside),
// an orange head with cream patches, and under it a neck of cream and pale-stone
// fur, reaching the bottom edge. It returns
// the image, the head's mask and the neck's mask (empty when withNeck is
// false: the head floats over the background).
func neckScene(w, h int, seed uint64, withNeck bool) (*image.NRGBA, []bool, []bool) {
	rng := rand.New(rand.NewPCG(seed, 0x6e65636b))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	head := make([]bool, w*h)
	neck := make([]bool, w*h)
	palette := [][3]float64{{125, 122, 115}, {95, 125, 75}, {60, 58, 55}, {196, 184, 162}}
	const block = 16
	bw, bh := (w+block-1)/block, (h+block-1)/block
	blocks := make([]int, bw*bh)
	for i := range blocks {
		blocks[i] = rng.IntN(len(palette))
		// the blocks beside the neck are not pale: it has an outline
		if bx := float64(i%bw*block) / float64(w); bx > 0.3 && bx < 0.65 && blocks[i] == 3 {
			blocks[i] = rng.IntN(3)
		}
	}
	cx, cy := 0.5*float64(w), 0.33*float64(h)
	rx, ry := 0.22*float64(w), 0.16*float64(h)
	nx0, nx1 := 0.39*float64(w), 0.61*float64(w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			c := palette[blocks[(y/block)*bw+x/block]]
			i := y*w + x
			dx, dy := (fx-cx)/rx, (fy-cy)/ry
			switch {
			case dx*dx+dy*dy <= 1:
				head[i] = true
				c = [3]float64{205, 120, 60}
				if (dx-0.35)*(dx-0.35)+(dy+0.1)*(dy+0.1) < 0.12 || (dx+0.4)*(dx+0.4)+(dy+0.2)*(dy+0.2) < 0.06 {
					c = [3]float64{228, 218, 200} // cream patches, as the neck's fur
				}
			case withNeck && fx >= nx0 && fx < nx1 && fy > cy:
				neck[i] = true
				// fur: wavy bands of the throat's cream and the pale stone
				if math.Sin(fx*0.5+2*math.Sin(fy*0.15)) > -0.5 {
					c = [3]float64{228, 218, 200}
				} else {
					c = [3]float64{196, 184, 162}
				}
			}
			o := img.PixOffset(x, y)
			for k := 0; k < 3; k++ {
				img.Pix[o+k] = clampU8(float32(c[k] + 6*rng.NormFloat64()))
			}
			img.Pix[o+3] = 255
		}
	}
	return img, head, neck
}

// TestBelowKeepsNeck: a head whose neck has colours of the background and
// runs out through the bottom edge keeps its neck (belowExtend: without it
// the neck is lost), and the same head over the background alone is not
// extended.
func TestBelowKeepsNeck(t *testing.T) {
	const w, h = 240, 200
	for seed := uint64(1); seed <= 3; seed++ {
		for _, withNeck := range []bool{true, false} {
			img, head, neck := neckScene(w, h, seed, withNeck)
			_, alpha, err := run(img, defaultParams)
			if err != nil {
				t.Fatal(err)
			}
			m := alphaMask(alpha)
			var hk, hn, nk, nn, out int
			for i := range m {
				switch {
				case head[i]:
					hn++
					if m[i] {
						hk++
					}
				case neck[i]:
					nn++
					if m[i] {
						nk++
					}
				case m[i]:
					out++
				}
			}
			t.Logf("seed %d neck %v: head %d/%d, neck %d/%d kept, %d px outside", seed, withNeck, hk, hn, nk, nn, out)
			if hk < hn*9/10 {
				t.Errorf("seed %d neck %v: head %d of %d px kept", seed, withNeck, hk, hn)
			}
			if nk < nn*9/10 {
				t.Errorf("seed %d neck %v: neck %d of %d px kept", seed, withNeck, nk, nn)
			}
			if out > (hn+nn)/20 {
				t.Errorf("seed %d neck %v: %d px of background kept", seed, withNeck, out)
			}
		}
	}
}
