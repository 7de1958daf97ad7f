package inpaint

import (
	"errors"
	"fmt"
	"image"
	"image/draw"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/gengate/gengate/internal/imageops"
)

// params are the tuning knobs (fixed in production, varied by the tests
// and the evaluation harness).
type params struct {
	dilate    int     // grow the user hole by this many pixels
	thinMax   float32 // hole components whose inscribed radius ≤ thinMax are diffusion-filled
	rampLo    float32 // exemplar weight ramps from 0 at rampLo px from the boundary...
	rampHi    float32 // ...to 1 at rampHi px
	workMax   int     // pixels: finer pyramid levels get a single quick EM step
	emCoarse  int     // EM iterations at the coarsest level
	emFine    int     // EM iterations at the finest working level
	pmIters   int     // PatchMatch iterations per EM step
	pmFine    int     // PatchMatch iterations per EM step at the finest level
	minSide   int     // coarsest level keeps its shorter side ≥ minSide
	stopDist  float32 // stop coarsening once the hole's inscribed radius ≤ stopDist
	exemplars bool    // false: diffusion only (for comparisons)
	blendMax  float32 // the exemplar weight never exceeds this
	// stroke-like components get a lower exemplar weight: compactness
	// c = inscribed radius / radius of the disc of equal area (1 for a
	// disc, → 0 for a long stroke); the cap is strokeCap at c ≤ cLo,
	// rising linearly to 1 at c ≥ cHi
	cLo, cHi  float32
	strokeCap float32
	// ...and so do all components when the hole is a large share of the
	// image: the cap falls from 1 at a hole fraction ≤ fLo to strokeCap
	// at ≥ fHi
	fLo, fHi float32
}

var defaults = params{
	dilate:    0,
	thinMax:   4,
	rampLo:    0,
	rampHi:    8,
	workMax:   300_000,
	emCoarse:  8,
	emFine:    2,
	pmIters:   4,
	pmFine:    2,
	minSide:   24,
	stopDist:  3,
	exemplars: true,
	blendMax:  1,
	cLo:       0.3,
	cHi:       0.5,
	strokeCap: 0.4,
	fLo:       0.25,
	fHi:       0.45,
}

// Options tune Inpaint. The zero value is not the default: start from
// DefaultOptions.
type Options struct {
	// Dilate grows the hole by this many pixels before filling. The
	// default is 0: the mask is used exactly as given, so callers should
	// pass a mask that covers the whole object (its halo and shadow
	// included); raise Dilate for loosely drawn masks. Thin components
	// (strokes, scratches) are never grown.
	Dilate int
	// Detail caps the weight, 0..1, of the exemplar (copied texture) fill
	// against the smooth diffusion fill. Below the cap the weight is
	// chosen per pixel (see the package documentation: distance to the
	// hole boundary, shape of the hole component, hole share of the
	// image). 1 (the default) lets compact object holes get full texture;
	// lower values trade texture for a smaller pixel error (PSNR); 0 is
	// diffusion only.
	Detail float64
}

// DefaultOptions are what Inpaint uses: the exact mask, full detail
// (adaptive blend).
var DefaultOptions = Options{Dilate: 0, Detail: 1}

// Inpaint fills the hole (pixels ≥ 128 in hole, which must be the size of
// src) with content synthesised from the rest of the image and returns
// the result, using DefaultOptions: every pixel outside the hole is
// returned unchanged (alpha included), filled pixels are opaque. See the
// package documentation for the algorithm.
func Inpaint(src image.Image, hole *image.Gray) (*image.NRGBA, error) {
	return InpaintWith(src, hole, DefaultOptions)
}

// InpaintWith is Inpaint with explicit options.
func InpaintWith(src image.Image, hole *image.Gray, o Options) (*image.NRGBA, error) {
	p := defaults
	p.dilate = max(o.Dilate, 0)
	p.blendMax = float32(min(max(o.Detail, 0), 1))
	if p.blendMax == 0 {
		p.exemplars = false
	}
	return inpaintWith(src, hole, p)
}

// prep is the common set-up: size checks, the bool mask, the float image.
type prep struct {
	bits []bool
	out  *image.NRGBA // set when there is nothing to do
}

func prepare(src image.Image, hole *image.Gray) (*fimg, prep, error) {
	if src == nil || hole == nil {
		return nil, prep{}, errors.New("inpaint: nil image or mask")
	}
	sb, hb := src.Bounds(), hole.Bounds()
	if sb.Dx() != hb.Dx() || sb.Dy() != hb.Dy() {
		return nil, prep{}, fmt.Errorf("inpaint: mask is %dx%d but the image is %dx%d; they must be the same size",
			hb.Dx(), hb.Dy(), sb.Dx(), sb.Dy())
	}
	if sb.Empty() {
		return nil, prep{}, errors.New("inpaint: empty image")
	}
	bits := holeBits(hole)
	n := 0
	for _, v := range bits {
		if v {
			n++
		}
	}
	if n == 0 {
		return nil, prep{out: toNRGBA(src)}, nil
	}
	if n == len(bits) {
		return nil, prep{}, errors.New("inpaint: the hole covers the whole image; nothing is left to fill it from")
	}
	m := imageops.FromImage(src)
	img := newFimg(m.W, m.H)
	for i := range m.R {
		img.pix[3*i], img.pix[3*i+1], img.pix[3*i+2] = m.R[i], m.G[i], m.B[i]
	}
	return img, prep{bits: bits}, nil
}

func toNRGBA(src image.Image) *image.NRGBA {
	b := src.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), src, b.Min, draw.Src)
	return out
}

// finish copies src and overwrites the hole pixels with img's.
func finish(src image.Image, img *fimg, hole []bool) *image.NRGBA {
	out := toNRGBA(src)
	w := img.w
	for i, v := range hole {
		if !v {
			continue
		}
		o := (i/w)*out.Stride + 4*(i%w)
		out.Pix[o] = imageops.Clamp8(img.pix[3*i])
		out.Pix[o+1] = imageops.Clamp8(img.pix[3*i+1])
		out.Pix[o+2] = imageops.Clamp8(img.pix[3*i+2])
		out.Pix[o+3] = 255
	}
	return out
}

func inpaintWith(src image.Image, holeImg *image.Gray, p params) (*image.NRGBA, error) {
	img, pr, err := prepare(src, holeImg)
	if err != nil || img == nil {
		return pr.out, err
	}
	w, h := img.w, img.h
	hole := pr.bits
	if p.dilate > 0 {
		// grow only the thick components: thin strokes and scratches are
		// usually tight (and diffusion-filled), object masks rarely are
		d0 := distToKnown(pr.bits, w, h)
		thick := exemplarWeight(pr.bits, d0, w, h, params{thinMax: p.thinMax, blendMax: 1})
		grow := make([]bool, len(hole))
		for i, a := range thick {
			grow[i] = a > 0
		}
		grow = dilate(grow, w, h, p.dilate)
		hole = make([]bool, len(grow))
		for i := range hole {
			hole[i] = grow[i] || pr.bits[i]
		}
	}
	known := 0
	for _, v := range hole {
		if !v {
			known++
		}
	}
	if known == 0 {
		hole = pr.bits // dilation ate everything: use the exact mask
	}
	dist := distToKnown(hole, w, h)
	alpha := exemplarWeight(hole, dist, w, h, p)
	need := false
	maxRamp := float32(0)
	for i, a := range alpha {
		if hole[i] && a < 1 {
			maxRamp = max(maxRamp, dist[i])
		}
		if a > 0 {
			need = true
		}
	}
	if !p.exemplars {
		need = false
	}
	var diff *fimg
	if !need || maxRamp > 0 {
		diff = img.clone()
		limit := float32(math.Inf(1))
		if need {
			limit = maxRamp + 1
		}
		teleaLimit(diff, hole, 3, limit)
	}
	if !need {
		return finish(src, diff, hole), nil
	}
	ex := img.clone()
	if !exemplarFill(ex, hole, dist, p) {
		// no usable source patches (tiny image): diffusion everywhere
		diff = img.clone()
		telea(diff, hole, 3)
		return finish(src, diff, hole), nil
	}
	for i, v := range hole {
		if !v {
			continue
		}
		a := alpha[i]
		if a >= 1 {
			continue
		}
		for c := 0; c < 3; c++ {
			ex.pix[3*i+c] = a*ex.pix[3*i+c] + (1-a)*diff.pix[3*i+c]
		}
	}
	return finish(src, ex, hole), nil
}

// exemplarWeight is the per-pixel weight of the exemplar fill against the
// diffusion fill: 0 in thin hole components (scratches, strokes: diffusion
// is more accurate there), else a ramp from the hole boundary inwards
// (rampLo..rampHi px: near the known region diffusion is accurate, deep
// inside texture is needed), capped per component by its compactness
// (stroke-like components lean on diffusion, compact object-like ones get
// full texture) and by the hole's share of the image (the less context is
// left, the less a copied patch can be trusted), and by blendMax.
func exemplarWeight(hole []bool, dist []float32, w, h int, p params) []float32 {
	alpha := make([]float32, w*h)
	// connected components (8-neighbour) and their inscribed radius
	comp := make([]int32, w*h)
	for i := range comp {
		comp[i] = -1
	}
	var radii, areas []float32
	stack := make([]int32, 0, 1024)
	for i, v := range hole {
		if !v || comp[i] >= 0 {
			continue
		}
		id := int32(len(radii))
		r := float32(0)
		area := 0
		comp[i] = id
		stack = append(stack[:0], int32(i))
		for len(stack) > 0 {
			j := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			r = max(r, dist[j])
			area++
			x, y := j%w, j/w
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					k := ny*w + nx
					if hole[k] && comp[k] < 0 {
						comp[k] = id
						stack = append(stack, int32(k))
					}
				}
			}
		}
		radii = append(radii, r)
		areas = append(areas, float32(area))
	}
	caps := make([]float32, len(radii))
	fracCap := float32(1)
	if p.fHi > p.fLo {
		tot := float32(0)
		for _, a := range areas {
			tot += a
		}
		t := min(max((tot/float32(w*h)-p.fLo)/(p.fHi-p.fLo), 0), 1)
		fracCap = 1 - (1-p.strokeCap)*t
	}
	for id, r := range radii {
		caps[id] = fracCap
		if p.cHi > p.cLo {
			c := r / float32(math.Sqrt(float64(areas[id])/math.Pi))
			t := min(max((c-p.cLo)/(p.cHi-p.cLo), 0), 1)
			caps[id] = min(fracCap, p.strokeCap+(1-p.strokeCap)*t)
		}
	}
	for i, v := range hole {
		if !v {
			continue
		}
		if radii[comp[i]] <= p.thinMax {
			continue
		}
		a := float32(1)
		if p.rampHi > p.rampLo {
			a = (dist[i] - p.rampLo) / (p.rampHi - p.rampLo)
		}
		alpha[i] = min(max(a, 0), 1) * min(caps[comp[i]], p.blendMax)
	}
	return alpha
}

// ---- exemplar completion ----

const pr = 3 // patch radius: 7×7 patches

type level struct {
	w, h    int
	img     *fimg
	hole    []bool
	dist    []float32
	valid   []bool  // valid source patch centres
	vlist   []int32 // the same as a list
	targets []int32 // patch centres whose patch overlaps the hole, row-major
	tpos    []int32 // pixel → index in targets, -1 if none
	nnf     []int32 // per target: source centre pixel index
	cost    []float32
	cnt     []float32 // per target: pixels in its patch inside the image
}

func newLevel(img *fimg, hole []bool, dist []float32) *level {
	w, h := img.w, img.h
	lv := &level{w: w, h: h, img: img, hole: hole, dist: dist}
	// summed-area table of the hole for the "patch fully known" test
	sat := make([]int32, (w+1)*(h+1))
	for y := 0; y < h; y++ {
		var row int32
		for x := 0; x < w; x++ {
			if hole[y*w+x] {
				row++
			}
			sat[(y+1)*(w+1)+x+1] = sat[y*(w+1)+x+1] + row
		}
	}
	boxSum := func(x0, y0, x1, y1 int) int32 { // inclusive-exclusive, clamped
		x0, y0 = max(x0, 0), max(y0, 0)
		x1, y1 = min(x1, w), min(y1, h)
		return sat[y1*(w+1)+x1] - sat[y0*(w+1)+x1] - sat[y1*(w+1)+x0] + sat[y0*(w+1)+x0]
	}
	lv.valid = make([]bool, w*h)
	lv.tpos = make([]int32, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			lv.tpos[i] = -1
			s := boxSum(x-pr, y-pr, x+pr+1, y+pr+1)
			if s > 0 {
				lv.tpos[i] = int32(len(lv.targets))
				lv.targets = append(lv.targets, int32(i))
			} else if x >= pr && y >= pr && x < w-pr && y < h-pr {
				lv.valid[i] = true
				lv.vlist = append(lv.vlist, int32(i))
			}
		}
	}
	lv.nnf = make([]int32, len(lv.targets))
	lv.cost = make([]float32, len(lv.targets))
	lv.cnt = make([]float32, len(lv.targets))
	for k, t := range lv.targets {
		x, y := int(t)%w, int(t)/w
		cx := min(x+pr, w-1) - max(x-pr, 0) + 1
		cy := min(y+pr, h-1) - max(y-pr, 0) + 1
		lv.cnt[k] = float32(cx * cy)
	}
	return lv
}

// patchDist is the SSD between the target patch at t and the source patch
// at s (RGB, over the target patch's in-image pixels), abandoned as soon
// as it reaches best.
func (lv *level) patchDist(t, s int32, best float32) float32 {
	w, h := lv.w, lv.h
	pix := lv.img.pix
	tx, ty := int(t)%w, int(t)/w
	var sum float32
	if tx >= pr && ty >= pr && tx < w-pr && ty < h-pr {
		for dy := -pr; dy <= pr; dy++ {
			ta := 3 * (int(t) + dy*w - pr)
			sa := 3 * (int(s) + dy*w - pr)
			tr := pix[ta : ta+3*(2*pr+1)]
			sr := pix[sa : sa+3*(2*pr+1)]
			for k := range tr {
				d := tr[k] - sr[k]
				sum += d * d
			}
			if sum >= best {
				return sum
			}
		}
		return sum
	}
	for dy := -pr; dy <= pr; dy++ {
		yy := ty + dy
		if yy < 0 || yy >= h {
			continue
		}
		for dx := -pr; dx <= pr; dx++ {
			xx := tx + dx
			if xx < 0 || xx >= w {
				continue
			}
			a := 3 * (yy*w + xx)
			b := 3 * (int(s) + dy*w + dx)
			d0 := pix[a] - pix[b]
			d1 := pix[a+1] - pix[b+1]
			d2 := pix[a+2] - pix[b+2]
			sum += d0*d0 + d1*d1 + d2*d2
		}
		if sum >= best {
			return sum
		}
	}
	return sum
}

func parallel(n int, f func(part, lo, hi int)) {
	parts := runtime.GOMAXPROCS(0)
	if parts > n {
		parts = n
	}
	if parts <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < parts; k++ {
		lo, hi := k*n/parts, (k+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k, lo, hi)
		}()
	}
	wg.Wait()
}

// computeCosts evaluates every target's current match.
func (lv *level) computeCosts() {
	parallel(len(lv.targets), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			lv.cost[k] = lv.patchDist(lv.targets[k], lv.nnf[k], float32(math.Inf(1)))
		}
	})
}

// patchMatch runs iters PatchMatch iterations (Barnes et al. 2009):
// propagation from the left/upper (even iterations) or right/lower (odd)
// neighbour's shifted match, then random search in halving windows. The
// targets are split into row bands searched in parallel; a band does not
// propagate across its border, and the borders move every iteration.
func (lv *level) patchMatch(iters int, maxRadius int, seed uint64) {
	w, h := lv.w, lv.h
	nt := len(lv.targets)
	if nt == 0 || len(lv.vlist) == 0 {
		return
	}
	for it := 0; it < iters; it++ {
		fwd := it%2 == 0
		parts := runtime.GOMAXPROCS(0)
		// band borders in rows; odd iterations shift them by half a band
		bands := make([]int, 0, parts+2)
		bands = append(bands, 0)
		off := 0
		if it%2 == 1 {
			off = h / (2 * parts)
		}
		for k := 1; k < parts; k++ {
			bands = append(bands, k*h/parts+off)
		}
		bands = append(bands, h)
		var wg sync.WaitGroup
		for b := 0; b+1 < len(bands); b++ {
			r0, r1 := bands[b], bands[b+1]
			lo := sort.Search(nt, func(k int) bool { return int(lv.targets[k]) >= r0*w })
			hi := sort.Search(nt, func(k int) bool { return int(lv.targets[k]) >= r1*w })
			if lo >= hi {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(it*131+b)))
				lv.pmBand(lo, hi, r0, r1, fwd, maxRadius, rng)
			}()
		}
		wg.Wait()
	}
}

func (lv *level) pmBand(lo, hi, r0, r1 int, fwd bool, maxRadius int, rng *rand.Rand) {
	w, h := lv.w, lv.h
	step, start, end := 1, lo, hi
	nb := int32(-1) // neighbour offsets for propagation
	if !fwd {
		step, start, end = -1, hi-1, lo-1
		nb = 1
	}
	for k := start; k != end; k += step {
		t := lv.targets[k]
		best, bestC := lv.nnf[k], lv.cost[k]
		ty := int(t) / w
		// propagation: horizontal neighbour, then vertical
		for _, d := range [2]int32{nb, nb * int32(w)} {
			q := t + d
			if q < 0 || int(q) >= w*h {
				continue
			}
			qy := int(q) / w
			if qy < r0 || qy >= r1 || (d == nb && qy != ty) {
				continue
			}
			qk := lv.tpos[q]
			if qk < 0 {
				continue
			}
			c := lv.nnf[qk] - d
			if c < 0 || int(c) >= w*h || !lv.valid[c] || c == best {
				continue
			}
			// a horizontal shift must not wrap around a row
			if d == nb && int(c)/w != int(lv.nnf[qk])/w {
				continue
			}
			if cost := lv.patchDist(t, c, bestC); cost < bestC {
				best, bestC = c, cost
			}
		}
		// random search around the best match
		bx, by := int(best)%w, int(best)/w
		r := maxRadius
		// one global candidate from the whole source list
		if c := lv.vlist[rng.IntN(len(lv.vlist))]; c != best {
			if cost := lv.patchDist(t, c, bestC); cost < bestC {
				best, bestC = c, cost
			}
		}
		for ; r >= 1; r /= 2 {
			x := bx + rng.IntN(2*r+1) - r
			y := by + rng.IntN(2*r+1) - r
			if x < pr || y < pr || x >= w-pr || y >= h-pr {
				continue
			}
			c := int32(y*w + x)
			if !lv.valid[c] || c == best {
				continue
			}
			if cost := lv.patchDist(t, c, bestC); cost < bestC {
				best, bestC = c, cost
				bx, by = x, y
			}
		}
		lv.nnf[k], lv.cost[k] = best, bestC
	}
}

// vote rebuilds every hole pixel as the weighted mean of the colours the
// overlapping target patches' matches propose for it (Wexler, Shechtman,
// Irani, "Space-Time Completion of Video", TPAMI 2007): weight
// exp(-d/2σ²) with σ² the 75th percentile of the patch distances, times
// 1.3^-dist favouring patches near the known boundary.
func (lv *level) vote(uniform bool) {
	w, h := lv.w, lv.h
	nt := len(lv.targets)
	wt := make([]float32, nt)
	if uniform {
		for k := range wt {
			wt[k] = 1
		}
	} else {
		norm := make([]float32, 0, 4096)
		step := max(1, nt/4096)
		for k := 0; k < nt; k += step {
			norm = append(norm, lv.cost[k]/lv.cnt[k])
		}
		sort.Slice(norm, func(a, b int) bool { return norm[a] < norm[b] })
		s2 := norm[len(norm)*3/4]
		if s2 < 1 {
			s2 = 1
		}
		for k := range wt {
			d := lv.cost[k] / lv.cnt[k]
			wt[k] = float32(math.Exp(float64(-d/(2*s2)))) * float32(math.Pow(1.3, -float64(lv.dist[lv.targets[k]])))
		}
	}
	pix := lv.img.pix
	parallel(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				if !lv.hole[i] {
					continue
				}
				var s, a0, a1, a2 float32
				for dy := -pr; dy <= pr; dy++ {
					py := y - dy
					if py < 0 || py >= h {
						continue
					}
					for dx := -pr; dx <= pr; dx++ {
						px := x - dx
						if px < 0 || px >= w {
							continue
						}
						k := lv.tpos[py*w+px]
						if k < 0 {
							continue
						}
						q := 3 * (int(lv.nnf[k]) + dy*w + dx)
						c := wt[k]
						s += c
						a0 += c * pix[q]
						a1 += c * pix[q+1]
						a2 += c * pix[q+2]
					}
				}
				if s > 0 {
					pix[3*i], pix[3*i+1], pix[3*i+2] = a0/s, a1/s, a2/s
				}
			}
		}
	})
}

// downsample halves an image and its hole: a coarse pixel is the mean of
// its known children and is a hole pixel when fewer than half of them are
// known.
func downsample(img *fimg, hole []bool) (*fimg, []bool) {
	w, h := img.w, img.h
	cw, ch := (w+1)/2, (h+1)/2
	out := newFimg(cw, ch)
	oh := make([]bool, cw*ch)
	for y := 0; y < ch; y++ {
		for x := 0; x < cw; x++ {
			var s [3]float32
			n, tot := 0, 0
			for dy := 0; dy < 2; dy++ {
				for dx := 0; dx < 2; dx++ {
					fx, fy := 2*x+dx, 2*y+dy
					if fx >= w || fy >= h {
						continue
					}
					tot++
					i := fy*w + fx
					if hole[i] {
						continue
					}
					n++
					s[0] += img.pix[3*i]
					s[1] += img.pix[3*i+1]
					s[2] += img.pix[3*i+2]
				}
			}
			o := y*cw + x
			if 2*n < tot || n == 0 {
				oh[o] = true
			}
			if n > 0 {
				for c := 0; c < 3; c++ {
					out.pix[3*o+c] = s[c] / float32(n)
				}
			}
		}
	}
	return out, oh
}

// exemplarFill completes img's hole coarse to fine. It returns false when
// no level has any source patch to copy from.
func exemplarFill(img *fimg, hole []bool, dist []float32, p params) bool {
	// pyramid
	imgs := []*fimg{img}
	holes := [][]bool{hole}
	dists := [][]float32{dist}
	maxD := float32(0)
	for _, d := range dist {
		maxD = max(maxD, d)
	}
	for {
		cur := imgs[len(imgs)-1]
		if maxD <= p.stopDist || min(cur.w, cur.h)/2 < p.minSide {
			break
		}
		ci, chole := downsample(cur, holes[len(holes)-1])
		cd := distToKnown(chole, ci.w, ci.h)
		maxD = 0
		nh := 0
		for i, d := range cd {
			maxD = max(maxD, d)
			if chole[i] {
				nh++
			}
		}
		if nh == len(chole) {
			break // the coarse level would have no known pixel
		}
		imgs, holes, dists = append(imgs, ci), append(holes, chole), append(dists, cd)
	}
	L := len(imgs)
	var prev *level
	for l := L - 1; l >= 0; l-- {
		lv := newLevel(imgs[l], holes[l], dists[l])
		if len(lv.vlist) == 0 {
			// relax: any interior centre whose own pixel is known
			for i := range lv.valid {
				x, y := i%lv.w, i/lv.w
				if !lv.hole[i] && x >= pr && y >= pr && x < lv.w-pr && y < lv.h-pr {
					lv.valid[i] = true
					lv.vlist = append(lv.vlist, int32(i))
				}
			}
		}
		seed := uint64(l + 1)
		rng := rand.New(rand.NewPCG(seed, 99))
		if len(lv.vlist) == 0 {
			if l == 0 {
				return false
			}
			prev = nil
			continue
		}
		if prev == nil {
			// coarsest usable level: diffusion init, random field
			telea(lv.img, lv.hole, 3)
			for k := range lv.nnf {
				lv.nnf[k] = lv.vlist[rng.IntN(len(lv.vlist))]
			}
		} else {
			upsampleInto(prev.img, lv.img, lv.hole)
			for k, t := range lv.targets {
				x, y := int(t)%lv.w, int(t)/lv.w
				cx, cy := min(x/2, prev.w-1), min(y/2, prev.h-1)
				c := lv.vlist[rng.IntN(len(lv.vlist))]
				if ck := prev.tpos[cy*prev.w+cx]; ck >= 0 {
					s := int(prev.nnf[ck])
					sx, sy := 2*(s%prev.w)+x%2, 2*(s/prev.w)+y%2
					sx = min(max(sx, pr), lv.w-pr-1)
					sy = min(max(sy, pr), lv.h-pr-1)
					if lv.valid[sy*lv.w+sx] {
						c = int32(sy*lv.w + sx)
					}
				}
				lv.nnf[k] = c
			}
			lv.computeCosts()
			lv.vote(false)
		}
		em, pm, radius := p.emFine, p.pmIters, max(lv.w, lv.h)
		if prev == nil {
			em = p.emCoarse
		} else {
			// the upsampled field is already close: search locally
			radius = max(lv.w, lv.h) / 4
			if l > 0 {
				em = min(p.emFine+l, p.emCoarse)
			} else {
				pm = p.pmFine
			}
		}
		if lv.w*lv.h > p.workMax && l < L-1 {
			em, pm, radius = 1, 2, 8 // beyond the working resolution: refine only
		}
		for e := 0; e < em; e++ {
			lv.computeCosts()
			lv.patchMatch(pm, radius, seed*1000+uint64(e))
			lv.vote(false)
		}
		prev = lv
	}
	return true
}

// upsampleInto fills the hole pixels of fine with a bilinear upsampling of
// coarse (half size).
func upsampleInto(coarse, fine *fimg, hole []bool) {
	cw, ch := coarse.w, coarse.h
	for y := 0; y < fine.h; y++ {
		fy := (float32(y)+0.5)/2 - 0.5
		y0 := int(math.Floor(float64(fy)))
		ay := fy - float32(y0)
		y0c, y1c := min(max(y0, 0), ch-1), min(max(y0+1, 0), ch-1)
		for x := 0; x < fine.w; x++ {
			i := y*fine.w + x
			if !hole[i] {
				continue
			}
			fx := (float32(x)+0.5)/2 - 0.5
			x0 := int(math.Floor(float64(fx)))
			ax := fx - float32(x0)
			x0c, x1c := min(max(x0, 0), cw-1), min(max(x0+1, 0), cw-1)
			for c := 0; c < 3; c++ {
				v00 := coarse.pix[3*(y0c*cw+x0c)+c]
				v01 := coarse.pix[3*(y0c*cw+x1c)+c]
				v10 := coarse.pix[3*(y1c*cw+x0c)+c]
				v11 := coarse.pix[3*(y1c*cw+x1c)+c]
				fine.pix[3*i+c] = (1-ay)*((1-ax)*v00+ax*v01) + ay*((1-ax)*v10+ax*v11)
			}
		}
	}
}
