package matte

import (
	"math"
	"sort"

	"github.com/gengate/gengate/internal/imageops"
)

// Parts that reach out of the picture. With no hint, the saliency can pick
// background structure that stands out from its surroundings: a bright
// stained-glass window behind a statue, hedges and a church behind a
// gravestone. Such structure usually runs out of the picture through the
// top, left or right side, where photographed subjects rarely are cut
// (they are cut by the bottom edge: a portrait at the chest, cutframe.go).
// On GrabCut-50 no ground-truth object touches the top, left or right
// image edge for more than 0.08 × the square root of its area, but for
// one (the churchyard, whose ground truth counts the church cut by the
// frame), while the masks that picked background structure touched them
// for 0.2-1.6 (the boundary connectivity of Zhu et al., "Saliency
// Optimization from Robust Background Detection", CVPR 2014, applied to
// the mask's components).
//
// edgeReach finds the components of a mask whose contact with the top,
// left and right image edges, over the square root of their area, is above
// params.edgeReach, and that do not reach the bottom edge: a component
// cut by the bottom edge too is a subject in close-up (a headshot whose
// hair is cut by the top edge and shoulders by the sides), not background
// behind one. The colours where such a component meets those edges
// (its pixels within a frame width of them) are modelled by a GMM; the
// component's pixels joined to that contact through pixels the model
// explains (-log p within the contact's own 90th percentile) are the part
// reaching out of the picture, and segmentWhole segments again with them
// as certain background (hard background in the graph cut, border seeds of
// the saliency). On a plain backdrop (backdrop.go) this does not run: there
// the object is what the backdrop does not explain, even where the frame
// cuts it.
const (
	edgeReachPct    = 0.90 // the contact's own likelihood percentile that bounds the part reaching out
	edgeReachRounds = 2    // at most this many extra segmentations
	edgeReachKeep   = 0.5  // the new mask's mean colour saliency must be at least this fraction of the old one's
)

// edgeReach returns the veto mask (pixels reaching out of the picture) for
// m, or nil when no component of m reaches out.
func edgeReach(im *workImage, p params, m []bool) []bool {
	w, h := im.w, im.h
	lab, sizes, _ := imageops.Components(m, w, h, true)
	if len(sizes) == 0 {
		return nil
	}
	contact := make([]int, len(sizes))
	bottom := make([]bool, len(sizes))
	for x := 0; x < w; x++ {
		if c := lab[x]; c >= 0 { // top row
			contact[c]++
		}
		if c := lab[(h-1)*w+x]; c >= 0 {
			bottom[c] = true
		}
	}
	for y := 0; y < h; y++ {
		if c := lab[y*w]; c >= 0 { // left column
			contact[c]++
		}
		if c := lab[y*w+w-1]; c >= 0 && w > 1 { // right column
			contact[c]++
		}
	}
	fw := max(1, int(p.frame*float64(w)+0.5))
	fh := max(1, int(p.frame*float64(h)+0.5))
	var veto []bool
	for c, sz := range sizes {
		if bottom[c] || float64(contact[c])/math.Sqrt(float64(sz)) <= p.edgeReach {
			continue
		}
		// the component's pixels near the edges it touches
		var top, left, right bool
		for x := 0; x < w; x++ {
			top = top || lab[x] == int32(c)
		}
		for y := 0; y < h; y++ {
			left = left || lab[y*w] == int32(c)
			right = right || lab[y*w+w-1] == int32(c)
		}
		var seeds []int32
		for i, l := range lab {
			if l != int32(c) {
				continue
			}
			x, y := i%w, i/w
			if (top && y < fh) || (left && x < fw) || (right && x >= w-fw) {
				seeds = append(seeds, int32(i))
			}
		}
		g := fitGMM(im.rgb, seeds, p.comps)
		own := make([]float64, len(seeds))
		for k, i := range seeds {
			own[k] = g.negLog(im.rgb[3*i : 3*i+3])
		}
		sort.Float64s(own)
		limit := own[min(len(own)-1, int(edgeReachPct*float64(len(own))))]
		// flood from the seeds through explained pixels of the component
		if veto == nil {
			veto = make([]bool, w*h)
		}
		stack := append([]int32(nil), seeds...)
		for _, i := range seeds {
			veto[i] = true
		}
		for len(stack) > 0 {
			i := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			x, y := i%w, i/w
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					j := ny*w + nx
					if veto[j] || lab[j] != int32(c) || g.negLog(im.rgb[3*j:3*j+3]) > limit {
						continue
					}
					veto[j] = true
					stack = append(stack, int32(j))
				}
			}
		}
	}
	return veto
}
