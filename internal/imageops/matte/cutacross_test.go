package matte

import (
	"image"
	"math/rand/v2"
	"testing"
)

// acrossScene draws a w×h picture of a figure standing in the middle of
// noisy sand: a head, a torso of one skin colour running out through the
// bottom edge, and striped shorts over its lowest quarter. When floor is
// set, the ground under the figure's lower half has the skin's colour
// from side to side (a floor of the subject's colour). It returns the
// work image and the figure's mask.
func acrossScene(w, h int, floor bool, seed uint64) (*workImage, []bool) {
	rng := rand.New(rand.NewPCG(seed, 0x61637273))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	fig := make([]bool, w*h)
	skin := [3]float64{104, 66, 48}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := [3]float64{206, 146, 92}
			if floor && y >= h/2 {
				c = skin
			}
			dx, dy := x-w/2, y-h/5
			switch {
			case dx*dx+dy*dy <= 14*14: // head
				fig[y*w+x] = true
				c = skin
			case y >= h/5+14 && dx >= -20 && dx < 20: // torso, shorts below
				fig[y*w+x] = true
				c = skin
				if y >= h*3/4 {
					c = [3]float64{150, 40, 40}
					if (x/4)%2 == 0 {
						c = [3]float64{40, 44, 120}
					}
				}
			}
			o := img.PixOffset(x, y)
			for k := 0; k < 3; k++ {
				img.Pix[o+k] = clampU8(float32(c[k] + 4*rng.NormFloat64()))
			}
			img.Pix[o+3] = 255
		}
	}
	return newWorkImage(img, defaultParams.workSide), fig
}

// TestAcrossKeepsBody: a mask cut straight across a torso, where the skin
// goes on unchanged below the cut, gets the rest of the body down to the
// bottom edge (acrossExtend); a mask whose lower boundary lies on an edge
// (the whole figure, or the torso down to its shorts), and one cut across
// a torso that goes on into a floor of its colour, are left as they are.
func TestAcrossKeepsBody(t *testing.T) {
	const w, h = 200, 160
	cases := []struct {
		name  string
		floor bool
		cut   func(x, y int) bool // the mask is the figure where cut holds
		grow  bool
	}{
		{"a torso cut across", false, func(x, y int) bool { return y < h/2 }, true},
		{"the whole figure", false, func(x, y int) bool { return true }, false},
		{"a torso down to its shorts", false, func(x, y int) bool { return y < h*3/4 }, false},
		{"a torso going on into a floor", true, func(x, y int) bool { return y < h/2 }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				im, fig := acrossScene(w, h, c.floor, seed)
				m := make([]bool, w*h)
				for i := range m {
					m[i] = fig[i] && c.cut(i%w, i/w)
				}
				out := acrossExtend(im, defaultParams, m)
				if (out != nil) != c.grow {
					t.Fatalf("seed %d: extended = %v, want %v", seed, out != nil, c.grow)
				}
				if out == nil {
					continue
				}
				var kept, n, extra int
				for i := range out {
					switch {
					case fig[i]:
						n++
						if out[i] {
							kept++
						}
					case out[i]:
						extra++
					}
				}
				t.Logf("seed %d: figure %d/%d kept, %d px of sand", seed, kept, n, extra)
				if kept < n*95/100 {
					t.Errorf("seed %d: figure %d of %d px kept", seed, kept, n)
				}
				if extra > n/20 {
					t.Errorf("seed %d: %d px of sand kept", seed, extra)
				}
			}
		})
	}
}
