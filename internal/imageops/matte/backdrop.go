package matte

import (
	"math"
	"sort"

	"github.com/gengate/gengate/internal/imageops"
)

// Plain backdrops. A product or studio shot has a backdrop that a smooth
// surface explains to within the noise (paper, a wall, a sky). When the
// border frame is such a backdrop, the object is whatever the backdrop
// model does not explain, which is far more reliable than saliency: it
// finds a grey object on a white backdrop, and an object cut by the frame
// (a bust cut at the chest) is simply the part of the frame the model does
// not explain.
//
// The model (a quadratic per RGB channel, see backdrop) is fitted to the
// frame robustly: first to the frame without its bottom side, then refitted
// three times to the frame pixels within three
// times the median residual of the previous fit, so that the parts of the
// object crossing the frame do not pull it. The backdrop is plain when the
// fit explains at least plainMinInlier of the frame, and explains it
// closely: an RGB RMS below plainMaxNoise, or (for noisy photos) below
// plainNoiseRatio times the pixel noise the frame shows, capped at
// plainCapNoise. Both are measured at the working resolution (400 px),
// where the downscale has already averaged most sensor noise away. The
// wooden tables and tarmac of the GrabCut set measure 6 to 10 with a pixel
// noise below 2, so they stay on the saliency path, which handles their
// hard cast shadows and grain better; the studio composites (paper with
// a gradient, vignetting and sensor noise σ 2-3) measure 1.5 to 5.3.
const (
	plainMinInlier  = 0.55
	plainMaxNoise   = 5.0  // a fit this close (RGB RMS) is plain whatever the pixel noise
	plainNoiseRatio = 1.5  // or a fit within this factor of the pixel noise
	plainCapNoise   = 12.0 // but never a fit worse than this
	plainNear       = 3.0  // distance (in noise units) still backdrop
	plainFar        = 6.5  // distance (in noise units) surely not backdrop
	plainMinScale   = 3.0  // smallest noise unit (RGB levels)
	shadowStep      = 0.05 // largest luminance-ratio step inside a soft shadow
	casterMin       = 0.25 // least part of an object region that is not its shadow
)

// plainBackdrop is the analysis of a plain backdrop.
type plainBackdrop struct {
	model    *backdrop
	noise    float64   // RGB RMS of the inlier frame pixels around the model
	pixNoise float64   // white noise of the inlier frame pixels (RGB RMS)
	inlier   float64   // fraction of the frame the model explains
	off      []float32 // per pixel: 0 explained by the backdrop .. 1 surely not
}

// analysePlain fits the backdrop robustly and returns its analysis, or nil
// when the backdrop is not plain.
func analysePlain(im *workImage, frame []bool) *plainBackdrop {
	pb := fitPlain(im, frame)
	if pb == nil || pb.inlier < plainMinInlier {
		return nil
	}
	if pb.noise > plainMaxNoise && (pb.noise > plainNoiseRatio*pb.pixNoise || pb.noise > plainCapNoise) {
		return nil
	}
	pb.fillOff(im)
	return pb
}

// fitPlain fits the backdrop model robustly to the frame; nil when the
// system is singular.
func fitPlain(im *workImage, frame []bool) *plainBackdrop {
	w, h := im.w, im.h
	sel := append([]bool(nil), frame...)
	// The first fit leaves the bottom side out, where subjects are cut by
	// the frame most often (a portrait's clothes): a subject filling most of
	// it would pull the first fit too far for the refits to recover. The
	// refits take the bottom side back where it fits.
	fh := 0
	for y := h - 1; y >= 0 && frame[y*w+w/2]; y-- {
		fh++
	}
	for i := (h - fh) * w; i < w*h; i++ {
		sel[i] = false
	}
	var b *backdrop
	resid := make([]float64, w*h)
	for round := 0; round < 4; round++ {
		b = fitBackdrop(im, sel)
		if b == nil {
			return nil
		}
		var rs []float64
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				if !frame[i] {
					continue
				}
				resid[i] = b.dist(im, x, y)
				if sel[i] {
					rs = append(rs, resid[i])
				}
			}
		}
		if round == 3 {
			break
		}
		sort.Float64s(rs)
		thr := math.Max(3*rs[len(rs)/2], 3*plainMinScale)
		for i := range sel {
			sel[i] = frame[i] && resid[i] < thr
		}
	}
	nFrame, nIn := 0, 0
	for i := range frame {
		if frame[i] {
			nFrame++
			if sel[i] {
				nIn++
			}
		}
	}
	return &plainBackdrop{model: b, noise: b.resid, pixNoise: pixelNoise(im, sel),
		inlier: float64(nIn) / float64(max(1, nFrame))}
}

// pixelNoise is Immerkær's estimate (1996) of the white noise in the
// pixels marked in sel, as an RGB RMS like backdrop.resid: sqrt(pi/2)/6 ·
// mean |response| of the difference of two Laplacians, which cancels
// locally linear structure, per channel.
func pixelNoise(im *workImage, sel []bool) float64 {
	w, h := im.w, im.h
	const k = 1.2533141373155003 / 6
	var tot float64
	for c := 0; c < 3; c++ {
		p := func(i int) float64 { return float64(im.rgb[3*i+c]) }
		var s float64
		n := 0
		for y := 1; y < h-1; y++ {
			for x := 1; x < w-1; x++ {
				i := y*w + x
				if !sel[i] {
					continue
				}
				v := 4*p(i) - 2*(p(i-1)+p(i+1)+p(i-w)+p(i+w)) + p(i-w-1) + p(i-w+1) + p(i+w-1) + p(i+w+1)
				s += math.Abs(v)
				n++
			}
		}
		if n == 0 {
			return 0
		}
		e := k * s / float64(n)
		tot += e * e
	}
	return math.Sqrt(tot)
}

// fillOff sets off: 0 for pixels within plainNear noise units of the
// model, 1 beyond plainFar, smooth between.
func (pb *plainBackdrop) fillOff(im *workImage) {
	w, h, b := im.w, im.h, pb.model
	s := math.Max(pb.noise, plainMinScale)
	pb.off = make([]float32, w*h)
	parallel(h, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			for x := 0; x < w; x++ {
				d := b.dist(im, x, y) / s
				pb.off[y*w+x] = float32(smooth(plainNear, plainFar, d))
			}
		}
	})
}

// dist is the RGB distance of the work pixel (x, y) from the model.
func (b *backdrop) dist(im *workImage, x, y int) float64 {
	i := y*im.w + x
	var ss float64
	for c := 0; c < 3; c++ {
		d := float64(im.rgb[3*i+c]) - b.at(x, y, c)
		ss += d * d
	}
	return math.Sqrt(ss)
}

// softShadows keeps the shadow scores of only the pixels a soft shadow
// can reach: those joined to the backdrop by a path along which the
// luminance ratio to the backdrop changes by less than shadowStep per
// pixel. A cast shadow fades into the backdrop through its penumbra; a
// grey object on a grey backdrop, however shadow-like its colour, has a
// sharp edge where it meets the lit backdrop and is left alone (where it
// meets its own shadow it may not have one: see needCaster).
func softShadows(im *workImage, bd *backdrop, shadow []float32, off []float32) {
	w, h := im.w, im.h
	ratio := make([]float32, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			ms := bd.at(x, y, 0) + bd.at(x, y, 1) + bd.at(x, y, 2)
			ps := float64(im.rgb[3*i] + im.rgb[3*i+1] + im.rgb[3*i+2])
			if ms > 0 {
				ratio[i] = float32(ps / ms)
			}
		}
	}
	reached := make([]bool, w*h)
	var stack []int32
	for i := range off {
		if off[i] == 0 {
			reached[i] = true
			stack = append(stack, int32(i))
		}
	}
	for len(stack) > 0 {
		i := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		x, y := i%w, i/w
		for k := 0; k < 8; k++ {
			nx, ny := x+gridDX[k], y+gridDY[k]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			j := ny*w + nx
			if reached[j] || shadow[j] == 0 {
				continue
			}
			if d := ratio[j] - ratio[i]; d > shadowStep || d < -shadowStep {
				continue
			}
			reached[j] = true
			stack = append(stack, int32(j))
		}
	}
	for i := range shadow {
		if !reached[i] {
			shadow[i] = 0
		}
	}
}

// needCaster clears the shadow scores of every object region (8-connected
// pixels the backdrop does not explain) of which less than casterMin would
// be left once its shadow is removed: a cast shadow needs an object to
// cast it. Without this, an achromatic object on a backdrop of its own hue
// whose edge meets its drop shadow smoothly is taken for shadow whole.
func needCaster(shadow, off []float32, w, h int) {
	region := make([]bool, w*h)
	for i, o := range off {
		region[i] = o > 0.5
	}
	lab, sizes, _ := imageops.Components(region, w, h, true)
	caster := make([]int, len(sizes))
	for i, l := range lab {
		if l >= 0 && shadow[i] < 0.5 {
			caster[l]++
		}
	}
	for i, l := range lab {
		if l >= 0 && float64(caster[l]) < casterMin*float64(sizes[l]) {
			shadow[i] = 0
		}
	}
}
