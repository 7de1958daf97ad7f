package matte

import (
	"math/rand/v2"
	"testing"
)

// gardenScene draws a w×h picture of a potted ball tree before a hedge:
// a yellow-green ball on a thin stem in a terracotta pot, a grey path,
// and a grey-green hedge filling the rest above the path. It returns the
// work image and the masks of the subject (ball, stem, pot), of a stretch
// of hedge around and behind it (as a saliency that found it lit would
// keep) and of the ball's colours used for a figure's legs.
func gardenScene(w, h int, seed uint64) (*workImage, []bool, []bool) {
	rng := rand.New(rand.NewPCG(seed, 0x62757368))
	rgb := make([]float32, 3*w*h)
	subject := make([]bool, w*h)
	hedge := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			fx, fy := float64(x), float64(y)
			c := [3]float64{150, 146, 140} // path
			if fy < 0.8*float64(h) {
				c = [3]float64{104, 126, 96} // hedge
				if rng.IntN(3) == 0 {
					c = [3]float64{80, 100, 74}
				}
				if fx > 0.12*float64(w) && fx < 0.88*float64(w) && fy > 0.25*float64(h) {
					hedge[i] = true
				}
			}
			dx, dy := fx-0.5*float64(w), fy-0.3*float64(h)
			switch {
			case dx*dx+dy*dy < 0.02*float64(w*w): // ball
				c = [3]float64{178, 196, 64}
				if rng.IntN(4) == 0 {
					c = [3]float64{120, 150, 40}
				}
				subject[i] = true
			case fy >= 0.3*float64(h) && fy < 0.7*float64(h) && dx > -3 && dx < 3: // stem
				c = [3]float64{118, 86, 52}
				subject[i] = true
			case fy >= 0.7*float64(h) && fy < 0.92*float64(h) && dx > -0.12*float64(w) && dx < 0.12*float64(w): // pot
				c = [3]float64{192, 112, 72}
				subject[i] = true
			}
			if subject[i] {
				hedge[i] = false
			}
			for k := 0; k < 3; k++ {
				rgb[3*i+k] = float32(min(255, max(0, c[k]+6*rng.NormFloat64())))
			}
		}
	}
	return &workImage{w: w, h: h, rgb: rgb, lab: toLab(rgb)}, subject, hedge
}

// TestBehindDrop: a stretch of hedge kept with a potted ball tree, of the
// colours of the hedge outside the mask and seen on both sides of the
// tree, is dropped and the tree kept; the tree alone, and a figure whose
// legs below it have the hedge's colours, are left as they are.
func TestBehindDrop(t *testing.T) {
	const w, h = 240, 200
	for seed := uint64(1); seed <= 3; seed++ {
		im, subject, hedge := gardenScene(w, h, seed)
		union := func(a, b []bool) []bool {
			m := make([]bool, len(a))
			for i := range m {
				m[i] = a[i] || b[i]
			}
			return m
		}
		// legs: the hedge under the pot's columns, below the ball (a figure
		// whose lower half has the background's colours)
		legs := make([]bool, w*h)
		figure := make([]bool, w*h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				dx, dy := float64(x)-0.5*float64(w), float64(y)-0.3*float64(h)
				if dx*dx+dy*dy < 0.02*float64(w*w) {
					figure[i] = true
				} else if y > int(0.45*float64(h)) && y < int(0.8*float64(h)) && dx > -0.1*float64(w) && dx < 0.1*float64(w) {
					legs[i] = true
				}
			}
		}
		cases := []struct {
			name       string
			m          []bool
			want       bool
			keep, drop []bool
		}{
			{"tree before hedge", union(subject, hedge), true, subject, hedge},
			{"tree alone", append([]bool(nil), subject...), false, subject, nil},
			{"figure with legs of the hedge's colours", union(figure, legs), false, union(figure, legs), nil},
		}
		for _, c := range cases {
			m := append([]bool(nil), c.m...)
			got := behindDrop(im, defaultParams, m)
			if got != c.want {
				t.Errorf("seed %d, %s: dropped = %v, want %v", seed, c.name, got, c.want)
			}
			var kk, kn, dk, dn int
			for i := range m {
				if c.keep[i] {
					kn++
					if m[i] {
						kk++
					}
				}
				if c.drop != nil && c.drop[i] {
					dn++
					if m[i] {
						dk++
					}
				}
			}
			t.Logf("seed %d, %s: kept %d/%d, of what should go %d/%d", seed, c.name, kk, kn, dk, dn)
			if kk < kn*9/10 {
				t.Errorf("seed %d, %s: %d of %d px kept", seed, c.name, kk, kn)
			}
			if dk > dn/10 {
				t.Errorf("seed %d, %s: %d of %d px of hedge kept", seed, c.name, dk, dn)
			}
		}
	}
}
