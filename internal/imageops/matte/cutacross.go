package matte

import (
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// A subject cut across where the picture has no edge. A graph cut
// follows the subject's outline, where the colour changes; when the
// colour models and the saliency give up on the lower part of a subject
// (a boy's belly and shorts, of the colours of another child's at the
// bottom edge), the cheapest cut runs straight across the body, through
// skin that goes on unchanged below it. The mask then ends in a
// horizontal stretch of its lower boundary across which the image does
// not change: an outline no subject has.
//
// acrossExtend looks along the lower boundary of the mask's largest
// component for the longest horizontal run (within a row either way) of
// pixels whose colour three rows above and three rows below differ by
// less than acrossDeltaE (CIE76). When the run is at least acrossRun of
// the square root of the component's area, GrabCut runs again as a user
// box would have it (below.go's boxExtension: the component's columns,
// widened by belowWiden, from its top to the bottom edge), and the part of
// that mask joined to the component is added when it passes boxExtension's
// tests (it keeps belowAgree of the component, reaches the bottom edge,
// touches the box's sides in at most belowSide of its rows under the run,
// is at least acrossArea of the component) and it goes on under the cut:
// the pixels just below at least acrossBelow of the run's columns are in
// it. It does not run on a plain backdrop (segmentWhole returns before).
//
// On GrabCut-50 the runs over 0.05 of the root area are 208001 0.168 (a
// stem going into shade: its extension is not joined, the box refuses),
// 271008 0.124, person8 0.073, bool 0.062 and 106024 0.053; only 271008
// passes (extension 0.275 of the component, under the whole run): IoU
// 0.423 -> 0.542, no other image moves. Each constant moved by ±20 %
// gives the same figures; at acrossDeltaE 7.2, 189080's collar (run
// 0.080, extension 0.115) and person8's shirt (0.142) reach the area
// test, which refuses them (at 0.1 they would fall 0.970 -> 0.913 and
// 0.912 -> 0.905): a body under a head, not a collar. acrossDeltaE,
// acrossReach and acrossBelow were set before measuring; acrossRun and
// acrossArea were read off the set.
const (
	acrossDeltaE = 6.0  // a boundary pixel with less than this ΔE between the rows above and below has no edge
	acrossRun    = 0.08 // shortest run of boundary with no edge, fraction of the square root of the component's area
	acrossBelow  = 0.8  // share of the run's columns under which the extension must go on
	acrossArea   = 0.2  // smallest extension, fraction of the component's area: a body under a head, not a collar
	acrossReach  = 3    // rows either side of the boundary whose mean colours are compared
)

// acrossExtend returns m with the subject's continuation across a cut
// with no edge added, or nil when there is none.
func acrossExtend(im *workImage, p params, m []bool) []bool {
	w, h := im.w, im.h
	lab, sizes, _ := imageops.Components(m, w, h, true)
	if len(sizes) == 0 {
		return nil
	}
	best := largestComponent(sizes)
	xa, xb, ry := edgelessRun(im, m, lab, best)
	if float64(xb-xa+1) < acrossRun*math.Sqrt(float64(sizes[best])) {
		return nil
	}
	x0, x1, y0, _ := labelBox(lab, best, w, h)
	pad := int(belowWiden * float64(x1-x0+1))
	ext, _ := boxExtension(im, p, m, lab, best, max(0, x0-pad), min(w-1, x1+pad), y0, ry, acrossArea)
	if ext == nil {
		return nil
	}
	under := 0
	for x := xa; x <= xb; x++ {
		for y := ry; y <= min(h-1, ry+acrossReach); y++ {
			if ext[y*w+x] {
				under++
				break
			}
		}
	}
	if float64(under) < acrossBelow*float64(xb-xa+1) {
		return nil // the extension does not go on under the cut
	}
	out := make([]bool, w*h)
	for i := range out {
		out[i] = m[i] || ext[i]
	}
	return out
}

// edgelessRun returns the longest horizontal run xa..xb of columns whose
// lower boundary of component best (a pixel of it over one outside m)
// lies in row ry or a row either side of it and has no edge: the mean
// L*a*b* of the acrossReach rows above and of those below differ by less
// than acrossDeltaE. xb < xa when there is none.
func edgelessRun(im *workImage, m []bool, lab []int32, best int32) (xa, xb, ry int) {
	w, h := im.w, im.h
	weak := make([]bool, w*h) // weak[y*w+x]: (x,y) is a lower boundary pixel with no edge
	for y := 0; y < h-1; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if lab[i] != best || m[i+w] {
				continue
			}
			var a, b [3]float64
			na, nb := 0, 0
			for k := 0; k < acrossReach; k++ {
				if y-k >= 0 {
					for c := 0; c < 3; c++ {
						a[c] += float64(im.lab[3*((y-k)*w+x)+c])
					}
					na++
				}
				if y+1+k < h {
					for c := 0; c < 3; c++ {
						b[c] += float64(im.lab[3*((y+1+k)*w+x)+c])
					}
					nb++
				}
			}
			var d float64
			for c := 0; c < 3; c++ {
				v := a[c]/float64(na) - b[c]/float64(nb)
				d += v * v
			}
			weak[i] = d < acrossDeltaE*acrossDeltaE
		}
	}
	xa, xb = 0, -1
	for y := 0; y < h-1; y++ {
		start := -1
		for x := 0; x <= w; x++ {
			on := false
			if x < w {
				for dy := -1; dy <= 1 && !on; dy++ {
					if yy := y + dy; yy >= 0 && yy < h-1 {
						on = weak[yy*w+x]
					}
				}
			}
			switch {
			case on && start < 0:
				start = x
			case !on && start >= 0:
				if x-1-start > xb-xa {
					xa, xb, ry = start, x-1, y
				}
				start = -1
			}
		}
	}
	return xa, xb, ry
}
