package matte

import (
	"math"
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
	return drawScene(w, h, rng, func(x, y int) (c [3]float64, subject, hedge bool) {
		fx, fy := float64(x), float64(y)
		c = [3]float64{150, 146, 140} // path
		if fy < 0.8*float64(h) {
			c = [3]float64{104, 126, 96} // hedge
			if rng.IntN(3) == 0 {
				c = [3]float64{80, 100, 74}
			}
			hedge = fx > 0.12*float64(w) && fx < 0.88*float64(w) && fy > 0.25*float64(h)
		}
		dx, dy := fx-0.5*float64(w), fy-0.3*float64(h)
		switch {
		case dx*dx+dy*dy < 0.02*float64(w*w): // ball
			c = [3]float64{178, 196, 64}
			if rng.IntN(4) == 0 {
				c = [3]float64{120, 150, 40}
			}
			subject = true
		case fy >= 0.3*float64(h) && fy < 0.7*float64(h) && dx > -3 && dx < 3: // stem
			c = [3]float64{118, 86, 52}
			subject = true
		case fy >= 0.7*float64(h) && fy < 0.92*float64(h) && dx > -0.12*float64(w) && dx < 0.12*float64(w): // pot
			c = [3]float64{192, 112, 72}
			subject = true
		}
		return c, subject, hedge
	})
}

// drawScene draws a w×h work image whose pixel (x, y) has the colour
// pixel gives it plus noise (σ 6, from rng, drawn after pixel's own
// draws), and returns it with the masks pixel marks: the subject, and
// behind, the part of the backdrop kept with it, never under the subject.
func drawScene(w, h int, rng *rand.Rand, pixel func(x, y int) (c [3]float64, subject, behind bool)) (*workImage, []bool, []bool) {
	rgb := make([]float32, 3*w*h)
	subject := make([]bool, w*h)
	behind := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			c, sub, bd := pixel(x, y)
			subject[i], behind[i] = sub, bd && !sub
			for k := 0; k < 3; k++ {
				rgb[3*i+k] = float32(min(255, max(0, c[k]+6*rng.NormFloat64())))
			}
		}
	}
	return &workImage{w: w, h: h, rgb: rgb, lab: toLab(rgb)}, subject, behind
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

// rockScene draws a w×h picture of a ram standing before a lit rock: a
// dark cliff lit on its left third, a ledge at the bottom, a rock of the
// lit cliff's grey with shadows of the dark cliff's colour, and before it
// a ram whose brown body is its only colour of its own: its head has the
// rock's grey and its legs, running down past the rock onto the ledge, the
// pale grey of the cliff's highlights. It returns the work image and the
// masks of the ram and of the rock.
func rockScene(w, h int, seed uint64) (*workImage, []bool, []bool) {
	rng := rand.New(rand.NewPCG(seed, 0x726f636b))
	lit, dark, pale := [3]float64{170, 166, 158}, [3]float64{62, 56, 50}, [3]float64{206, 202, 194}
	return drawScene(w, h, rng, func(x, y int) (c [3]float64, ram, rock bool) {
		fx, fy := float64(x)/float64(w), float64(y)/float64(h)
		c = dark
		if fx < 0.15 {
			c = lit
			if rng.IntN(3) == 0 {
				c = pale // its highlights
			}
		}
		if fy > 0.86 {
			c = [3]float64{148, 136, 118} // ledge
		}
		if dx, dy := (fx-0.5)/0.26, (fy-0.47)/0.32; dx*dx+dy*dy <= 1 {
			rock = true
			c = lit
			if rng.IntN(4) == 0 {
				c = dark
			}
		}
		bx, by := (fx-0.5)/0.14, (fy-0.55)/0.1
		switch {
		case bx*bx+by*by <= 1: // body
			c = [3]float64{164, 100, 54}
			ram = true
		case (fx-0.5)*(fx-0.5)+(fy-0.41)*(fy-0.41)*float64(h*h)/float64(w*w) < 0.045*0.045: // head
			c = lit
			ram = true
		case fy > 0.55 && fy < 0.88 && (math.Abs(fx-0.41) < 0.015 || math.Abs(fx-0.46) < 0.015 || math.Abs(fx-0.54) < 0.015 || math.Abs(fx-0.59) < 0.015): // legs
			c = pale
			ram = true
		}
		return c, ram, rock
	})
}

// TestBehindGrow: a ram kept with the rock behind it, whose body alone has
// colours the rock and cliff do not, is kept without the rock: the body
// is grown, as a user box around it would, into the head and legs.
func TestBehindGrow(t *testing.T) {
	const w, h = 240, 200
	for seed := uint64(1); seed <= 3; seed++ {
		im, ram, rock := rockScene(w, h, seed)
		m := make([]bool, w*h)
		var rn, kn int
		for i := range m {
			m[i] = ram[i] || rock[i]
		}
		if !behindDrop(im, defaultParams, m) {
			t.Errorf("seed %d: the rock was not dropped", seed)
		}
		var rk, kk int
		for i := range m {
			if ram[i] {
				rn++
				if m[i] {
					rk++
				}
			}
			if rock[i] {
				kn++
				if m[i] {
					kk++
				}
			}
		}
		t.Logf("seed %d: ram %d/%d kept, rock %d/%d", seed, rk, rn, kk, kn)
		if rk < rn*8/10 {
			t.Errorf("seed %d: %d of %d px of the ram kept", seed, rk, rn)
		}
		if kk > kn/5 {
			t.Errorf("seed %d: %d of %d px of the rock kept", seed, kk, kn)
		}
	}
}
