package matte

import (
	"sort"

	"github.com/gengate/gengate/internal/imageops"
)

// Subjects cut by the frame. A portrait is cut by the bottom edge at the
// chest; an animal's neck or a skirt runs out of the picture at the
// bottom. Taking the whole border frame as background (the saliency's
// seeds, the colour model of the background, and a penalty for foreground
// there) drops those parts and keeps only the head: the failure users
// reported as "it kept only face and hair".
//
// analyseCut finds the stretches of the bottom side that are not
// background: a background colour model (GMM) is fitted to the top, left
// and right sides of the frame; every column of the bottom frame scores
// the mean -log likelihood of its pixels under that model, less the median
// of the model's own pixels. Columns scoring above params.cutNats (6),
// after a running median over a frame width, are the subject's. Runs
// shorter than cutMinRun of the width are ignored. When more than
// cutMaxFrac of the bottom side scores high it is a different background
// (a floor, a road) as often as a subject, so the columns stay background
// seeds and only pay no frame penalty, as the side-outlier rule does.
//
// segmentWhole then segments twice: without the cut (the first mask), and
// with the subject columns out of the background seeds, the border colour
// model and the frame penalty; it adds to the first mask the parts of the
// second that lie within cutJoin of it. A strip along the bottom edge that
// is not joined to the main subject (a sign, a kerb) is not added.
//
// Measured on GrabCut-50 (no hint): mean IoU 0.760 -> 0.778; person1 (a
// man cut at the chest) 0.56 -> 0.79, 181079 (a woman's skirt) 0.63 ->
// 0.85, stone1 0.97 -> 0.95 (the plain fit's change). A cutNats of 5
// scores 0.783, 8 scores 0.777, 12 scores 0.764 (fewer columns found).
const (
	cutMinRun  = 0.04 // shortest run of subject columns, fraction of the width
	cutMaxFrac = 0.85 // above this fraction of the bottom side, the columns are only freed
	cutJoin    = 0.03 // a second-pass part within this fraction of the longest side of the first mask joins it
)

// cutFrame is the analysis of the bottom side.
type cutFrame struct {
	subject []bool // per pixel: in the bottom frame and in a subject column
	free    []bool // per pixel: in the bottom frame, pays no frame penalty
}

// analyseCut returns the bottom side's subject columns, or nil when there
// are none.
func analyseCut(im *workImage, frac float64, comps int, cutNats float64) *cutFrame {
	w, h := im.w, im.h
	fw := max(1, int(frac*float64(w)+0.5))
	fh := max(1, int(frac*float64(h)+0.5))
	var model []int32
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if y < fh || x < fw || x >= w-fw {
				model = append(model, int32(y*w+x))
			}
		}
	}
	g := fitGMM(im.rgb, model, comps)
	own := make([]float64, len(model))
	for k, i := range model {
		own[k] = g.negLog(im.rgb[3*i : 3*i+3])
	}
	sort.Float64s(own)
	ref := own[len(own)/2]
	col := make([]float64, w)
	for x := 0; x < w; x++ {
		var s float64
		for y := h - fh; y < h; y++ {
			i := y*w + x
			s += g.negLog(im.rgb[3*i : 3*i+3])
		}
		col[x] = s/float64(fh) - ref
	}
	// running median over a frame width
	med := make([]float64, w)
	win := make([]float64, 0, 2*fw+1)
	for x := 0; x < w; x++ {
		win = win[:0]
		for k := max(0, x-fw); k <= min(w-1, x+fw); k++ {
			win = append(win, col[k])
		}
		sort.Float64s(win)
		med[x] = win[len(win)/2]
	}
	subj := make([]bool, w)
	minRun := max(2, int(cutMinRun*float64(w)))
	n := 0
	for x := 0; x < w; {
		if med[x] <= cutNats {
			x++
			continue
		}
		e := x
		for e < w && med[e] > cutNats {
			e++
		}
		if e-x >= minRun {
			for k := x; k < e; k++ {
				subj[k] = true
			}
			n += e - x
		}
		x = e
	}
	if n == 0 {
		return nil
	}
	cf := &cutFrame{subject: make([]bool, w*h), free: make([]bool, w*h)}
	onlyFree := float64(n) > cutMaxFrac*float64(w)
	for y := h - fh; y < h; y++ {
		for x := 0; x < w; x++ {
			if subj[x] {
				cf.free[y*w+x] = true
				cf.subject[y*w+x] = !onlyFree
			}
		}
	}
	return cf
}

// segmentWhole segments the work image and returns the cleaned foreground
// mask. When the bottom side has subject stretches (analyseCut), a second
// segmentation treats them as the subject's, and the parts of its result
// near the first mask are added to it: the torso under a head, the skirt
// under a blouse. Parts of the second result far from the first are
// dropped, so a strip along the bottom edge (a sign, a kerb) is not taken
// for a subject on its own.
func segmentWhole(im *workImage, p params, h hint) []bool {
	m, plain := segmentCut(im, p, h, nil)
	if h != nil || plain {
		return m
	}
	var veto []bool
	var sal []float32
	for round := 0; p.edgeReach > 0 && round < edgeReachRounds; round++ {
		v := edgeReach(im, p, m)
		if v == nil {
			break
		}
		if veto != nil {
			for i := range v {
				v[i] = v[i] || veto[i]
			}
		}
		m2, _ := segmentCut(im, p, h, v)
		if sal == nil {
			sal = colourSaliency(im, frameMask(im.w, im.h, p.frame), p.comps)
		}
		if meanOver(sal, m2) < edgeReachKeep*meanOver(sal, m) {
			break // what is left stands out less: the first mask was the subject, cut by the frame
		}
		m, veto = m2, v
	}
	if p.groundShadow {
		groundShadow(im, m, p.comps)
	}
	if p.aside {
		asideDrop(m, im.w, im.h)
	}
	if p.valley {
		valleyCut(m, im.w, im.h)
	}
	if p.below {
		if e := belowExtend(im, p, m); e != nil {
			m = e
		} else if p.figure {
			if e := figureBelow(im, p, m); e != nil {
				m = e
			}
		}
	}
	if p.across {
		if e := acrossExtend(im, p, m); e != nil {
			m = e
		}
	}
	if p.behind {
		behindDrop(im, p, m)
	}
	if p.solidHoles {
		solidHoles(im, m, p.comps)
	}
	return m
}

// segmentCut segments the work image, twice when the bottom side has
// subject stretches (analyseCut), and returns the cleaned mask and whether
// the plain-backdrop mode made it.
func segmentCut(im *workImage, p params, h hint, veto []bool) ([]bool, bool) {
	w, hh := im.w, im.h
	m1, plain := segment(im, p, h, nil, veto)
	cleanMask(m1, w, hh, p.keepFrac, p.holeFrac)
	if h != nil || plain || p.cutNats <= 0 {
		return m1, plain
	}
	cut := analyseCut(im, p.frame, p.comps, p.cutNats)
	if cut == nil {
		return m1, plain
	}
	m2, _ := segment(im, p, h, cut, veto)
	lab, sizes, _ := imageops.Components(m2, w, hh, true)
	join := make([]bool, len(sizes))
	near := dilate(m1, w, hh, max(1, int(cutJoin*float64(max(w, hh))+0.5)))
	for i, v := range near {
		if v && lab[i] >= 0 {
			join[lab[i]] = true
		}
	}
	for i := range m1 {
		if lab[i] >= 0 && join[lab[i]] {
			m1[i] = true
		}
	}
	cleanMask(m1, w, hh, p.keepFrac, p.holeFrac)
	return m1, plain
}

// dilate returns m grown by a square of radius r (separable running max).
func dilate(m []bool, w, h, r int) []bool {
	tmp := make([]bool, len(m))
	out := make([]bool, len(m))
	for y := 0; y < h; y++ {
		last := -1 << 30 // last set x in the row
		for x := 0; x < w+r; x++ {
			if x < w && m[y*w+x] {
				last = x
			}
			if xo := x - r; xo >= 0 && xo < w {
				tmp[y*w+xo] = x-last <= 2*r
			}
		}
	}
	for x := 0; x < w; x++ {
		last := -1 << 30
		for y := 0; y < h+r; y++ {
			if y < h && tmp[y*w+x] {
				last = y
			}
			if yo := y - r; yo >= 0 && yo < h {
				out[yo*w+x] = y-last <= 2*r
			}
		}
	}
	return out
}

// meanOver is the mean of v over the pixels marked in m (0 when none).
func meanOver(v []float32, m []bool) float64 {
	var s float64
	n := 0
	for i, b := range m {
		if b {
			s += float64(v[i])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}
