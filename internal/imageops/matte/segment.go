package matte

import (
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// params holds the tunables of the low-resolution segmentation.
type params struct {
	workSide     int     // longest side of the working resolution
	frame        float64 // border frame width as a fraction of each side
	comps        int     // GMM components per model
	iters        int     // GrabCut iterations
	gamma        float64 // pairwise weight (GrabCut: 50)
	salWeight    float64 // unary weight of the saliency prior (nats)
	framePen     float64 // extra cost (nats) of foreground inside the frame
	keepFrac     float64 // keep components at least this fraction of the largest
	holeFrac     float64 // fill background holes smaller than this fraction of the foreground
	centerSigma  float64 // centre prior width (fraction of the diagonal); 0 disables
	shadowPen    float64 // unary cost (nats) of foreground on a detected cast shadow; 0 disables
	sideOutlier  float64 // a border side this many nats less likely than the others loses the frame penalty; 0 disables
	plainWeight  float64 // unary weight (nats) of the backdrop model on a plain backdrop; 0 disables the plain mode
	cutNats      float64 // bottom-side column score of a subject cut by the edge (cutframe.go); 0 disables
	edgeReach    float64 // top/left/right edge contact over sqrt(area) of a component reaching out of the picture (edgereach.go); 0 disables
	aside        bool    // drop components beside the subject (aside.go)
	solidHoles   bool    // fill enclosed holes that do not show the surroundings (holefill.go)
	groundShadow bool    // drop parts that are shadows cast on the ground (groundshadow.go)
	below        bool    // add the subject's continuation below it (below.go)
	figure       bool    // add a figure under a fragmented mask's central component (figure.go)
	valley       bool    // keep one of two things standing side by side (valley.go)
	across       bool    // add the subject's continuation across a cut with no edge (cutacross.go)
	behind       bool    // drop background passing behind the subject (behind.go)
}

var defaultParams = params{
	workSide:     400,
	frame:        0.04,
	comps:        5,
	iters:        5,
	gamma:        50,
	salWeight:    2.0,
	framePen:     6.0,
	keepFrac:     0.15,
	holeFrac:     0.02,
	centerSigma:  0.6,
	shadowPen:    4.0,
	sideOutlier:  10.0,
	plainWeight:  4.0,
	cutNats:      6.0,
	edgeReach:    0.15,
	aside:        true,
	solidHoles:   true,
	groundShadow: true,
	below:        true,
	figure:       true,
	valley:       true,
	across:       true,
	behind:       true,
}

// workImage is the reduced-resolution image the segmentation runs on.
type workImage struct {
	w, h int
	rgb  []float32 // interleaved 0..255
	lab  []float32 // interleaved L*a*b*
	memo *segMemo  // analyses every segment of this image repeats (segmemo.go)
}

// frameMask marks the border frame.
func frameMask(w, h int, frac float64) []bool {
	fw := int(math.Round(frac * float64(w)))
	fh := int(math.Round(frac * float64(h)))
	if fw < 1 {
		fw = 1
	}
	if fh < 1 {
		fh = 1
	}
	m := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if x < fw || x >= w-fw || y < fh || y >= h-fh {
				m[y*w+x] = true
			}
		}
	}
	return m
}

// mbdSaliency is the minimum-barrier distance of every pixel to the image
// border (Zhang et al., "Minimum Barrier Salient Object Detection at 80
// FPS", ICCV 2015), computed per L*a*b* channel by raster scanning and
// summed. Pixels whose paths to the border must cross a strong colour
// barrier score high.
// Pixels marked in extraSeed are seeds too.
func mbdSaliency(im *workImage, notSeed, extraSeed []bool) []float32 {
	w, h := im.w, im.h
	n := w * h
	total := make([]float32, n)
	scale := [3]float32{1, 1, 1}
	for c := 0; c < 3; c++ {
		I := make([]float32, n)
		for i := 0; i < n; i++ {
			I[i] = im.lab[3*i+c] * scale[c]
		}
		D := make([]float32, n)
		U := make([]float32, n)
		L := make([]float32, n)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				U[i], L[i] = I[i], I[i]
				if ((x == 0 || y == 0 || x == w-1 || y == h-1) && (notSeed == nil || !notSeed[i])) || (extraSeed != nil && extraSeed[i]) {
					D[i] = 0
				} else {
					D[i] = float32(math.Inf(1))
				}
			}
		}
		// relax(i, j) lowers pixel i's barrier to that of the path through
		// its neighbour j; a pixel's state stays in registers across its
		// two neighbours of each sweep.
		relax := func(Ii float32, j int, d, u0, l0 float32) (float32, float32, float32) {
			u := U[j]
			if Ii > u {
				u = Ii
			}
			l := L[j]
			if Ii < l {
				l = Ii
			}
			if b := u - l; b < d {
				return b, u, l
			}
			return d, u0, l0
		}
		for pass := 0; pass < 3; pass++ {
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					i := y*w + x
					Ii, d, u, l := I[i], D[i], U[i], L[i]
					if x > 0 {
						d, u, l = relax(Ii, i-1, d, u, l)
					}
					if y > 0 {
						d, u, l = relax(Ii, i-w, d, u, l)
					}
					D[i], U[i], L[i] = d, u, l
				}
			}
			for y := h - 1; y >= 0; y-- {
				for x := w - 1; x >= 0; x-- {
					i := y*w + x
					Ii, d, u, l := I[i], D[i], U[i], L[i]
					if x < w-1 {
						d, u, l = relax(Ii, i+1, d, u, l)
					}
					if y < h-1 {
						d, u, l = relax(Ii, i+w, d, u, l)
					}
					D[i], U[i], L[i] = d, u, l
				}
			}
		}
		for i := range total {
			total[i] += D[i]
		}
	}
	normalize(total)
	return total
}

// normalize maps v to 0..1 by its 1st and 99th percentiles.
func normalize(v []float32) {
	if len(v) == 0 {
		return
	}
	lo, hi := rankValues(v, len(v)/100, len(v)-1-len(v)/100)
	if hi <= lo {
		hi = lo + 1
	}
	for i := range v {
		t := (v[i] - lo) / (hi - lo)
		if t < 0 {
			t = 0
		}
		if t > 1 {
			t = 1
		}
		v[i] = t
	}
}

// colourSaliency scores how unlike the border frame each pixel's colour
// is: -log p under a GMM of the frame colours, normalised.
func colourSaliency(im *workImage, frame []bool, comps int) []float32 {
	var sel []int32
	for i, f := range frame {
		if f {
			sel = append(sel, int32(i))
		}
	}
	bg := fitGMM(im.rgb, sel, comps)
	n := im.w * im.h
	out := make([]float32, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = float32(bg.negLog(im.rgb[3*i : 3*i+3]))
		}
	})
	normalize(out)
	return out
}

// otsu returns the threshold in 0..1 maximising between-class variance.
func otsu(v []float32) float32 {
	var hist [256]float64
	for _, x := range v {
		b := int(x * 255)
		if b < 0 {
			b = 0
		}
		if b > 255 {
			b = 255
		}
		hist[b]++
	}
	total := float64(len(v))
	var sum float64
	for i, c := range hist {
		sum += float64(i) * c
	}
	var wb, sb, best float64
	bt := 128
	for t := 0; t < 256; t++ {
		wb += hist[t]
		if wb == 0 {
			continue
		}
		wf := total - wb
		if wf == 0 {
			break
		}
		sb += float64(t) * hist[t]
		mb, mf := sb/wb, (sum-sb)/wf
		if bv := wb * wf * (mb - mf) * (mb - mf); bv > best {
			best, bt = bv, t
		}
	}
	return (float32(bt) + 0.5) / 255
}

// hint constrains a segmentation (used by the boxed evaluation only):
// 0 = free, 1 = hard background.
type hint []uint8

// segment runs saliency-initialised GrabCut on the work image and returns
// the foreground mask (1 = foreground) and whether the plain-backdrop mode
// made it. cut, when not nil, marks the bottom-side stretches a subject
// runs out of the picture through (cutframe.go).
//
// veto, when not nil, marks pixels that are background for certain (the
// parts of a first mask that reach out of the picture, edgereach.go): they
// are hard background in the graph cut and border seeds of the saliency.
func segment(im *workImage, p params, h hint, cut *cutFrame, veto []bool) ([]bool, bool) {
	w, hh := im.w, im.h
	n := w * hh
	frame := frameMask(w, hh, p.frame)
	// A border side whose colours are far less likely under a GMM of the
	// other three sides than those sides are under it is probably cut
	// through the object (a person cut by the bottom edge): its pixels
	// stay background seeds for the saliency, but foreground there pays
	// no frame penalty.
	penFrame := frame
	var plain *plainBackdrop
	if h == nil && p.plainWeight > 0 {
		plain = im.plainFor(frame, p.frame)
		if plain != nil {
			cut = nil // the backdrop model finds the subject in the frame itself
		}
	}
	if plain != nil {
		// the frame pays the penalty only where the backdrop explains it
		penFrame = make([]bool, n)
		for i := range penFrame {
			penFrame[i] = frame[i] && plain.off[i] < 0.5
		}
	} else if h == nil && p.sideOutlier > 0 {
		d := im.sideOutlierFor(p.frame, p.comps)
		for s := 0; s < 4; s++ {
			if d[s] > p.sideOutlier {
				sm := sideMask(w, hh, p.frame, s)
				pf := make([]bool, len(frame))
				for i := range pf {
					pf[i] = penFrame[i] && !sm[i]
				}
				penFrame = pf
			}
		}
	}
	seedFrame := frame
	if cut != nil {
		sf := make([]bool, n)
		pf := make([]bool, n)
		for i := range sf {
			sf[i] = frame[i] && !cut.subject[i]
			pf[i] = penFrame[i] && !cut.free[i]
		}
		seedFrame, penFrame = sf, pf
	}
	var sal, shadow []float32
	if plain != nil && p.shadowPen > 0 {
		shadow = shadowScores(im, plain.model)
		if shadow != nil {
			softShadows(im, plain.model, shadow, plain.off)
			needCaster(shadow, plain.off, w, hh)
		}
	} else if h == nil && p.shadowPen > 0 {
		shadow = im.shadowMapFor(frame, p.frame)
	}
	salWeight := p.salWeight
	if plain != nil {
		// on a plain backdrop the object is what the backdrop model does
		// not explain, less what is a soft shadow
		salWeight = p.plainWeight
		sal = make([]float32, n)
		for i := range sal {
			sal[i] = plain.off[i]
			if shadow != nil {
				sal[i] *= 1 - shadow[i]
			}
		}
	} else if h == nil {
		var notSeed []bool
		if cut != nil {
			notSeed = cut.subject
		}
		mbd := mbdSaliency(im, notSeed, veto)
		colSeeds := seedFrame
		if veto != nil {
			colSeeds = make([]bool, n)
			for i := range colSeeds {
				colSeeds[i] = seedFrame[i] || veto[i]
			}
		}
		col := colourSaliency(im, colSeeds, p.comps)
		sal = make([]float32, n)
		for i := range sal {
			sal[i] = 0.5*mbd[i] + 0.5*col[i]
		}
		if p.centerSigma > 0 {
			diag := math.Hypot(float64(w), float64(hh))
			s2 := 2 * (p.centerSigma * diag) * (p.centerSigma * diag)
			for y := 0; y < hh; y++ {
				for x := 0; x < w; x++ {
					dx, dy := float64(x)-float64(w-1)/2, float64(y)-float64(hh-1)/2
					sal[y*w+x] *= float32(math.Exp(-(dx*dx + dy*dy) / s2))
				}
			}
		}
		normalize(sal)
		if shadow != nil {
			for i := range sal {
				sal[i] *= 1 - shadow[i]
			}
		}
	}
	fg := make([]bool, n)
	if h == nil {
		t := otsu(sal)
		if t < 0.2 {
			t = 0.2
		}
		if t > 0.6 {
			t = 0.6
		}
		if plain != nil {
			t, seedFrame = 0.5, penFrame
		}
		any := false
		for i := range fg {
			fg[i] = sal[i] > t && !seedFrame[i] && (veto == nil || !veto[i])
			any = any || fg[i]
		}
		if !any { // nothing salient: seed the centre
			for y := hh / 4; y < 3*hh/4; y++ {
				for x := w / 4; x < 3*w/4; x++ {
					fg[y*w+x] = veto == nil || !veto[y*w+x]
				}
			}
		}
	} else {
		for i := range fg {
			fg[i] = h[i] == 0
		}
	}

	g, pair := im.gridFor(p.gamma)
	tw, prevTw := make([]float32, n), make([]float32, n)
	var fgSel, bgSel []int32
	for it := 0; it < p.iters; it++ {
		fgSel, bgSel = fgSel[:0], bgSel[:0]
		for i := range fg {
			if fg[i] {
				fgSel = append(fgSel, int32(i))
			} else {
				bgSel = append(bgSel, int32(i))
			}
		}
		if len(fgSel) == 0 || len(bgSel) == 0 {
			break
		}
		fgm := fitGMM(im.rgb, fgSel, p.comps)
		bgm := fitGMM(im.rgb, bgSel, p.comps)
		parallel(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if (h != nil && h[i] == 1) || (veto != nil && veto[i]) {
					tw[i] = -1e9
					continue
				}
				z := im.rgb[3*i : 3*i+3]
				dfg := fgm.negLog(z)
				dbg := bgm.negLog(z)
				if sal != nil {
					s := float64(sal[i])
					dfg += salWeight * (1 - s)
					dbg += salWeight * s
				}
				if penFrame[i] {
					dfg += p.framePen
				}
				if shadow != nil {
					dfg += p.shadowPen * float64(shadow[i])
				}
				// source cap = cost of background, sink cap = cost of foreground
				tw[i] = float32(dbg - dfg)
			}
		})
		if it == 0 {
			g.load(pair, tw)
		} else { // from the last iteration's flow (maxflow.go reload)
			g.reload(tw, prevTw)
		}
		tw, prevTw = prevTw, tw
		g.maxflow()
		changed := 0
		for i := 0; i < n; i++ {
			v := g.inSource(i)
			if v != fg[i] {
				changed++
			}
			fg[i] = v
		}
		if changed < n/1000 {
			break
		}
	}
	return fg, plain != nil
}

func dist2(rgb []float32, i, j int) float64 {
	a := float64(rgb[3*i] - rgb[3*j])
	b := float64(rgb[3*i+1] - rgb[3*j+1])
	c := float64(rgb[3*i+2] - rgb[3*j+2])
	return a*a + b*b + c*c
}

// cleanMask keeps the largest 8-connected foreground component and those
// at least keepFrac of its size, then fills background holes (components
// not touching the border) smaller than holeFrac of the foreground area.
func cleanMask(m []bool, w, h int, keepFrac, holeFrac float64) {
	lab, sizes, touches := imageops.Components(m, w, h, true)
	if len(sizes) == 0 {
		return
	}
	score := make([]float64, len(sizes))
	for i := range m {
		if m[i] {
			score[lab[i]]++
		}
	}
	largest := 0.0
	for _, s := range score {
		if s > largest {
			largest = s
		}
	}
	fgArea := 0
	for i := range m {
		if m[i] {
			c := lab[i]
			if score[c] < keepFrac*largest {
				m[i] = false
			} else {
				fgArea++
			}
		}
	}
	lab, sizes, touches = imageops.Components(m, w, h, false)
	for i := range m {
		if !m[i] {
			c := lab[i]
			if !touches[c] && float64(sizes[c]) < holeFrac*float64(fgArea) {
				m[i] = true
			}
		}
	}
}

// sideMask marks the frame pixels of one side (0 top, 1 bottom, 2 left, 3 right).
func sideMask(w, h int, frac float64, side int) []bool {
	fw := max(1, int(math.Round(frac*float64(w))))
	fh := max(1, int(math.Round(frac*float64(h))))
	m := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var in bool
			switch side {
			case 0:
				in = y < fh
			case 1:
				in = y >= h-fh
			case 2:
				in = x < fw
			case 3:
				in = x >= w-fw
			}
			m[y*w+x] = in
		}
	}
	return m
}

// sideOutlier scores how unlike the other three sides each border side's
// colours are: mean -log p of its frame pixels under a GMM of the other
// sides, minus the same for the other sides under their own GMM.
func sideOutlier(im *workImage, frac float64, comps int) [4]float64 {
	w, h := im.w, im.h
	var masks [4][]bool
	for s := 0; s < 4; s++ {
		masks[s] = sideMask(w, h, frac, s)
	}
	var out [4]float64
	for s := 0; s < 4; s++ {
		var other, own []int32
		for i := 0; i < w*h; i++ {
			o := false
			for t := 0; t < 4; t++ {
				if t != s && masks[t][i] {
					o = true
				}
			}
			if o {
				other = append(other, int32(i))
			} else if masks[s][i] {
				own = append(own, int32(i))
			}
		}
		g := fitGMM(im.rgb, other, comps)
		var a, b float64
		for _, i := range own {
			a += g.negLog(im.rgb[3*i : 3*i+3])
		}
		for _, i := range other {
			b += g.negLog(im.rgb[3*i : 3*i+3])
		}
		out[s] = a/float64(max(1, len(own))) - b/float64(max(1, len(other)))
	}
	return out
}
