package matte

import (
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// Things beside the subject. On a natural scene the mask can hold, besides
// the subject, other things that stand out from the border: a lantern
// beside a man, a second gravestone and a church wall beside the one in
// front, a sign beside a child. cleanMask keeps every component of at
// least keepFrac of the largest; asideDrop then scores each component by
// its area times a centre weight, exp(-d²/2σ²) with d the distance of its
// centroid from the image centre over the diagonal and σ = asideSigma,
// and drops the components scoring under asideFrac of the best one,
// unless they reach the bottom edge (a subject running out of the picture
// there, as a torso under a head: cutframe.go). On GrabCut-50 the
// components that were not the subject lay 0.13-0.27 of the diagonal from
// the centre, the subjects 0.02-0.15. It does not run on a plain backdrop,
// where everything the backdrop does not explain is the object. The two
// figures were read off GrabCut-50 (mean 0.807 with them; σ 0.20 gives
// 0.793, a cut at 0.2 gives 0.801, σ 0.10 or a cut at 0.4 give 0.808).
const (
	asideSigma = 0.15 // centre weight width, fraction of the diagonal
	asideFrac  = 0.3  // components scoring under this fraction of the best are dropped
)

// asideDrop removes from m the components beside the subject.
func asideDrop(m []bool, w, h int) {
	lab, sizes, _ := imageops.Components(m, w, h, true)
	if len(sizes) < 2 {
		return
	}
	score, bottom := asideScores(lab, sizes, w, h)
	best := 0.0
	for _, s := range score {
		best = max(best, s)
	}
	for i, l := range lab {
		if l >= 0 && !bottom[l] && score[l] < asideFrac*best {
			m[i] = false
		}
	}
}

// asideScores returns each component's area times its centre weight, and
// whether it reaches the bottom edge.
func asideScores(lab []int32, sizes []int, w, h int) ([]float64, []bool) {
	sx := make([]float64, len(sizes))
	sy := make([]float64, len(sizes))
	bottom := make([]bool, len(sizes))
	for i, l := range lab {
		if l < 0 {
			continue
		}
		x, y := i%w, i/w
		sx[l] += float64(x) + 0.5 - float64(w)/2
		sy[l] += float64(y) + 0.5 - float64(h)/2
		if y == h-1 {
			bottom[l] = true
		}
	}
	diag := math.Hypot(float64(w), float64(h))
	score := make([]float64, len(sizes))
	for c, n := range sizes {
		d := math.Hypot(sx[c]/float64(n), sy[c]/float64(n)) / diag
		score[c] = float64(n) * math.Exp(-d*d/(2*asideSigma*asideSigma))
	}
	return score, bottom
}

// mostCentral is the label of the component with the highest of
// asideScores' scores (the first of equal ones); score must not be empty.
func mostCentral(score []float64) int32 {
	best := int32(0)
	for c, s := range score {
		if s > score[best] {
			best = int32(c)
		}
	}
	return best
}
