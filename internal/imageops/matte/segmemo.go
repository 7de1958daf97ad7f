package matte

import "math"

// segMemo keeps the analyses of a work image that depend only on the image
// and the frame, which segment would otherwise repeat at every call (a
// picture is segmented up to six times: the bottom-cut and edge-reach
// rounds of cutframe.go and edgereach.go). The work image must not change
// after the first segment; nothing writes to it.
type segMemo struct {
	plainFrac  float64
	plainDone  bool
	plain      *plainBackdrop
	sideFrac   float64
	sideComps  int
	sideDone   bool
	side       [4]float64
	shadowFrac float64
	shadowDone bool
	shadow     []float32
	grid       *gridGraph
	pair       []float32
	pairGamma  float64
}

func (im *workImage) segMemo() *segMemo {
	if im.memo == nil {
		im.memo = &segMemo{}
	}
	return im.memo
}

// plainFor is analysePlain(im, frame), frame being frameMask at frac.
// The result is shared: callers only read it.
func (im *workImage) plainFor(frame []bool, frac float64) *plainBackdrop {
	m := im.segMemo()
	if !m.plainDone || m.plainFrac != frac {
		m.plain, m.plainFrac, m.plainDone = analysePlain(im, frame), frac, true
	}
	return m.plain
}

// sideOutlierFor is sideOutlier(im, frac, comps).
func (im *workImage) sideOutlierFor(frac float64, comps int) [4]float64 {
	m := im.segMemo()
	if !m.sideDone || m.sideFrac != frac || m.sideComps != comps {
		m.side, m.sideFrac, m.sideComps, m.sideDone = sideOutlier(im, frac, comps), frac, comps, true
	}
	return m.side
}

// shadowMapFor is shadowMap(im, frame), frame being frameMask at frac.
// The result is shared: callers only read it.
func (im *workImage) shadowMapFor(frame []bool, frac float64) []float32 {
	m := im.segMemo()
	if !m.shadowDone || m.shadowFrac != frac {
		m.shadow, m.shadowFrac, m.shadowDone = shadowMap(im, frame), frac, true
	}
	return m.shadow
}

// gridFor returns the graph segment cuts on, reset by the caller before
// each solve, and its pairwise capacities for gamma (pairWeights): both
// are the same at every call on this image.
func (im *workImage) gridFor(gamma float64) (*gridGraph, []float32) {
	m := im.segMemo()
	if m.grid == nil {
		m.grid = newGridGraph(im.w, im.h)
	}
	if m.pair == nil || m.pairGamma != gamma {
		m.pair, m.pairGamma = pairWeights(im, m.grid, gamma), gamma
	}
	return m.grid, m.pair
}

// pairWeights returns GrabCut's contrast-sensitive pairwise weight of every
// arc of g: gamma·exp(-β‖zi-zj‖²), divided by √2 on diagonals, with β the
// inverse of twice the mean squared colour difference of neighbours. An
// arc and its sister get the same weight, computed once.
func pairWeights(im *workImage, g *gridGraph, gamma float64) []float32 {
	w, hh := im.w, im.h
	n := w * hh
	var sumd float64
	var cnt int
	for y := 0; y < hh; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			for k := 4; k < 8; k++ { // forward neighbours
				j := g.neighbour(int32(8*i + k))
				if j < 0 {
					continue
				}
				sumd += dist2(im.rgb, i, int(j))
				cnt++
			}
		}
	}
	beta := 0.0
	if sumd > 0 {
		beta = 1 / (2 * sumd / float64(cnt))
	}
	pair := make([]float32, 8*n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for k := 4; k < 8; k++ { // forward arcs; the sister is j's arc 7-k
				j := g.neighbour(int32(8*i + k))
				if j < 0 {
					continue
				}
				wgt := gamma * math.Exp(-beta*dist2(im.rgb, i, int(j)))
				if gridDX[k] != 0 && gridDY[k] != 0 {
					wgt /= math.Sqrt2
				}
				pair[8*i+k] = float32(wgt)
				pair[8*int(j)+7-k] = float32(wgt)
			}
		}
	})
	return pair
}
