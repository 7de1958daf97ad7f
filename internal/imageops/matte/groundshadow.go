package matte

import (
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// Cast shadows on the ground. Outdoors a subject's shadow on the ground
// (a car's on the road) is joined to it from below, stands out from the
// sunlit ground around it as much as the subject does, and so is often
// kept with it; shadow.go takes shadows out only where a smooth model of
// the frame exists (a plain backdrop or a flat floor). groundShadow looks
// at the parts of the mask instead: the mask's pixels are labelled by the
// component of a GMM of the foreground colours that explains them best
// (components whose means are within groundMerge RGB levels count as one
// colour, so the grain of the ground does not split a shadow; the labels
// are smoothed by a 5×5 majority), and each connected part of one label
// of at least groundPartFrac of the mask is a shadow on the ground when
//
//   - it lies under the subject: at most half of the mask, and below the
//     centroid of the rest of it;
//   - it rests on nothing: under groundRests of its lower boundary lies on
//     the rest of the mask (a leg or a skirt hangs from the body but ends
//     on the ground, so this alone does not make a shadow);
//   - it lies flat: its bounding box is at least groundFlat times as wide
//     as it is tall (legs, arms and skirts are upright);
//   - it is darker than the background around it (within 1 % of the
//     longest side): its mean luminance is shadowMinRatio..shadowMaxRatio
//     of the surroundings', shadow.go's bounds;
//   - it does not reach the bottom edge (a subject cut there, cutframe.go).
//
// Such parts are dropped. The hue is not tested: outdoors a shadow is lit
// by the blue sky and shifts away from the sunlit ground's chromaticity
// (21077's by 0.051 in normalised rg, twice shadow.go's bound).
//
// On GrabCut-50 it acts on one image: the racing car's shadow (luminance
// 0.47 of the road beside it) is dropped, 21077 0.505 -> 0.614. The parts
// of other masks that rest on nothing (a teddy's and a statue's legs, a
// doll's and a pair of scissors' parts) are upright or brighter than
// their surroundings (ratio 1.1-2.4). The four figures were chosen from
// what makes a cast shadow, not fitted: each moved by ±25 % (part 0.075 /
// 0.125, rests 0.225 / 0.375, flat 1.5 / 2.5, merge 18 / 30) leaves every
// GrabCut-50 score as it is (mean 0.811, 6 under 0.5).
// It does not run on a plain backdrop, where shadow.go applies.
const (
	groundPartFrac = 0.10 // smallest part considered, fraction of the mask
	groundRests    = 0.3  // a part with less of its lower boundary on the mask rests on the ground
	groundFlat     = 2.0  // a shadow's bounding box is at least this many times as wide as tall
	groundMerge    = 24.0 // GMM components whose means are closer (RGB) are one colour
)

// groundShadow removes from m the parts that are shadows cast on the
// ground.
func groundShadow(im *workImage, m []bool, comps int) {
	w, h := im.w, im.h
	var sel []int32
	for i, v := range m {
		if v {
			sel = append(sel, int32(i))
		}
	}
	area := len(sel)
	if area < 10 {
		return
	}
	g := fitGMM(im.rgb, sel, comps)
	// components with close means are one colour (a shadow on textured
	// ground is not split by its grain)
	group := make([]int8, g.k)
	for a := range group {
		group[a] = int8(a)
	}
	for a := 0; a < g.k; a++ {
		for b := 0; b < a; b++ {
			d := math.Sqrt(sq3([]float32{float32(g.mean[a][0]), float32(g.mean[a][1]), float32(g.mean[a][2])}, g.mean[b]))
			if d < groundMerge {
				ga, gb := group[a], group[b]
				for c := range group {
					if group[c] == ga {
						group[c] = gb
					}
				}
			}
		}
	}
	lbl := make([]int8, w*h)
	for i := range lbl {
		lbl[i] = -1
	}
	for _, i := range sel {
		lbl[i] = group[g.best(im.rgb[3*i:])]
	}
	// 5×5 majority within the mask
	sm := make([]int8, w*h)
	parallel(h, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				sm[i] = -1
				if lbl[i] < 0 {
					continue
				}
				var cnt [8]int
				for dy := max(0, y-2); dy <= min(h-1, y+2); dy++ {
					for dx := max(0, x-2); dx <= min(w-1, x+2); dx++ {
						if l := lbl[dy*w+dx]; l >= 0 {
							cnt[l]++
						}
					}
				}
				b := lbl[i]
				for k := range cnt {
					if cnt[k] > cnt[b] {
						b = int8(k)
					}
				}
				sm[i] = b
			}
		}
	})
	r := max(2, int(0.01*float64(max(w, h))+0.5))
	var drop []bool
	part := make([]bool, w*h)
	for k := 0; k < g.k; k++ {
		if group[k] != int8(k) {
			continue
		}
		any := false
		for i := range part {
			part[i] = sm[i] == int8(k)
			any = any || part[i]
		}
		if !any {
			continue
		}
		lab, sizes, _ := imageops.Components(part, w, h, true)
		for c, sz := range sizes {
			if float64(sz) < groundPartFrac*float64(area) || !isGroundShadow(im, m, lab, int32(c), r) {
				continue
			}
			if drop == nil {
				drop = make([]bool, w*h)
			}
			for i, l := range lab {
				if l == int32(c) {
					drop[i] = true
				}
			}
		}
	}
	for i, d := range drop {
		if d {
			m[i] = false
		}
	}
}

// isGroundShadow tells whether the part c of lab (within mask m) is a
// shadow cast on the ground (see groundShadow).
func isGroundShadow(im *workImage, m []bool, lab []int32, c int32, r int) bool {
	w, h := im.w, im.h
	x0, y0, x1, y1 := w, h, -1, -1
	rests, lower := 0, 0
	var pl float64
	n := 0
	for i, l := range lab {
		if l != c {
			continue
		}
		x, y := i%w, i/w
		if y == h-1 {
			return false // cut by the bottom edge
		}
		x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
		if j := i + w; lab[j] != c {
			lower++
			if m[j] {
				rests++
			}
		}
		pl += lumOf(im.rgb[3*i:])
		n++
	}
	if n == 0 || float64(rests) >= groundRests*float64(lower) || float64(x1-x0+1) < groundFlat*float64(y1-y0+1) {
		return false
	}
	// it lies under the subject: at most half the mask, and below the
	// centroid of the rest of it
	var ry float64
	nr := 0
	for i, v := range m {
		if v && lab[i] != c {
			ry += float64(i / w)
			nr++
		}
	}
	if nr < n || ry/float64(nr) >= float64(y0) {
		return false
	}
	// the background within r of the part
	var bl float64
	nb := 0
	for y := max(0, y0-r); y <= min(h-1, y1+r); y++ {
		for x := max(0, x0-r); x <= min(w-1, x1+r); x++ {
			i := y*w + x
			if m[i] {
				continue
			}
			near := false
			for dy := max(0, y-r); dy <= min(h-1, y+r) && !near; dy++ {
				for dx := max(0, x-r); dx <= min(w-1, x+r); dx++ {
					if lab[dy*w+dx] == c {
						near = true
						break
					}
				}
			}
			if near {
				bl += lumOf(im.rgb[3*i:])
				nb++
			}
		}
	}
	if nb == 0 || bl <= 0 {
		return false
	}
	ratio := (pl / float64(n)) / (bl / float64(nb))
	return ratio >= shadowMinRatio && ratio <= shadowMaxRatio && !math.IsNaN(ratio)
}

// lumOf is the sum of a pixel's RGB values.
func lumOf(p []float32) float64 { return float64(p[0]) + float64(p[1]) + float64(p[2]) }
