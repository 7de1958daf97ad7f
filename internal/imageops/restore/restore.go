package restore

import (
	"image"
	"math"
	"sort"

	"github.com/gengate/gengate/internal/imageops"
	"github.com/gengate/gengate/internal/imageops/inpaint"
)

// Options selects the steps of Restore. The zero value runs the whole
// pipeline with the default strengths.
type Options struct {
	// Sigma is the noise deviation (0..255) to remove; 0 estimates it with
	// EstimateNoise. Denoising runs when the deviation is above MinSigma
	// and, for an estimate under textureMaxSigma, when the estimate on the
	// picture averaged over 2×2 blocks shows it to be noise, not texture.
	Sigma float64
	// MinSigma is the noise level under which denoising is skipped
	// (default 2).
	MinSigma float64

	// RemoveScratches detects long thin scratches (DetectScratches) and
	// fills them with the inpainter after denoising. Off by default: long
	// straight structures of a scene (masts, wires) can be taken for
	// scratches.
	RemoveScratches bool

	SkipDenoise bool
	SkipDeblock bool
	// SkipCLAHE skips the contrast steps: the fade repair and CLAHE.
	SkipCLAHE        bool
	SkipColorBalance bool
	SkipSharpen      bool

	// CLAHEStrength blends CLAHE's equalised luminance with the original
	// (1 is full CLAHE). 0, the default, runs no CLAHE: on faded photos it
	// cost PSNR after the levels (docs/notes/restoration.md). CLAHEClip is
	// the clip limit in multiples of the mean bin height (default 2).
	CLAHEStrength, CLAHEClip float64
	// SharpenAmount is the unsharp-mask gain. 0 sharpens with 0.35 after
	// deblocking or scratch filling only; more than 0 sharpens any photo.
	SharpenAmount float64
	// ColorStrength is how much of the estimated colour cast is removed
	// when the photo is measured to have one (default 1, or 0.7 after a
	// fade repair); each channel's correction is limited to 0.8..1.25
	// whatever the strength, then the gains are scaled so that none is
	// under 1 unless a white point would pass 255.
	ColorStrength float64
}

// DenoiseOnly returns Options that only denoise (for evaluation).
func DenoiseOnly(sigma float64) Options {
	return Options{Sigma: sigma, SkipDeblock: true, SkipCLAHE: true, SkipColorBalance: true, SkipSharpen: true}
}

// Report tells what Restore found and did.
type Report struct {
	Blockiness float64 // ratio of 8×8 grid edge energy to the rest (1 = none)
	Deblocked  bool
	Sigma      float64 // noise deviation used (estimated or given)
	// HalfSigma is the blind estimate on the picture averaged over 2×2
	// blocks, measured when a low estimated Sigma may be texture;
	// Texture says it was (HalfSigma ≥ textureRatio·Sigma) and denoising
	// was skipped.
	HalfSigma float64
	Texture   bool
	Denoised  bool
	Gains     [3]float64 // colour-balance gains applied to R, G, B
	Scratches float64    // fraction of the pixels filled as scratches

	// BlackPoint and Range are the luma's 0.5th percentile and the span to
	// its 99.5th, measured after denoising; Faded says they showed fading
	// (lifted blacks and a narrow range), which levels, saturation and
	// CLAHE then repaired.
	BlackPoint, Range float64
	Faded             bool
	// Floor is where the blacks are (floor.go), measured when the black
	// point and range look faded; Faded needs it uniform across the frame
	// (not haze or a pale scene).
	Floor FloorStats
	// Cast is the colour cast the illuminant estimators agree on (R, G, B,
	// mean 1); the colour balance runs when the photo is faded or this
	// cast is at least castGate from neutral.
	Cast      [3]float64
	Sharpened bool
}

// Restore runs the photo-restoration pipeline on img: JPEG deblocking
// when an 8×8 block grid is detected, blind noise estimation and BM3D
// denoising when the noise is above MinSigma, scratch filling when asked
// (RemoveScratches), a levels and saturation repair when the photo
// measures as faded, grey-edge colour balance when it is faded or shows a
// cast the illuminant estimators agree on, and a gentle thresholded unsharp
// mask after deblocking or filling. A photo that needs none of them comes
// back as it was. Alpha is kept.
func Restore(img image.Image, opts Options) (*image.NRGBA, error) {
	out, _, err := RestoreReport(img, opts)
	return out, err
}

// RestoreReport is Restore that also says what it found and did.
func RestoreReport(img image.Image, opts Options) (*image.NRGBA, Report, error) {
	var rep Report
	if img == nil || img.Bounds().Empty() {
		return nil, rep, ErrEmpty
	}
	m := imageops.FromImage(img)
	if !opts.SkipDeblock {
		rep.Blockiness, rep.Deblocked = deblock(m)
	}
	if !opts.SkipDenoise {
		sigma := opts.Sigma
		if sigma <= 0 {
			if rep.Deblocked {
				sigma = EstimateNoise(m.NRGBA())
			} else {
				sigma = EstimateNoise(img)
			}
		}
		rep.Sigma = sigma
		minS := opts.MinSigma
		if minS <= 0 {
			minS = 2
		}
		if opts.Sigma <= 0 && sigma > minS && sigma < textureMaxSigma {
			rep.HalfSigma = halfNoise(m)
			rep.Texture = rep.HalfSigma >= textureRatio*sigma
		}
		if sigma > minS && !rep.Texture {
			denoiseRGB(m, sigma)
			rep.Denoised = true
		}
	}
	if opts.RemoveScratches {
		// detected on the input, whose noise sets the threshold; filled
		// in the denoised image
		hole := DetectScratches(img)
		n := 0
		for _, v := range hole.Pix {
			if v >= 128 {
				n++
			}
		}
		if n > 0 {
			filled, err := inpaint.Inpaint(m.NRGBA(), hole)
			if err != nil {
				return nil, rep, err
			}
			m = imageops.FromImage(filled)
			rep.Scratches = float64(n) / float64(len(hole.Pix))
		}
	}
	// Tone and colour are changed only where the photo is measured to
	// need them (tone.go): a good photo passes through.
	t := measureTone(m)
	rep.BlackPoint, rep.Range = t.ylo, t.yhi-t.ylo
	removed := 0.0
	if rep.Denoised {
		removed = rep.Sigma
	}
	rep.Faded = faded(t, removed)
	if rep.Faded {
		// lifted blacks and a narrow range: a faded print if its black
		// floor is the same across the frame, the fade has a cast or the
		// range is very narrow (floor.go); else haze or a pale scene
		rep.Floor = floor(m, t)
		rep.Faded = rep.Floor.uniform() || tintedFade(castEstimate(m, t), removed) || washedOut(t, removed)
	}
	if rep.Faded && !opts.SkipCLAHE {
		levelsLimited(m, t, fadeTargetLo, fadeTargetHi, fadeChannelLimit)
		saturate(m, fadeSaturation)
		t = measureTone(m)
	}
	rep.Cast = castEstimate(m, t)
	rep.Gains = [3]float64{1, 1, 1}
	if !opts.SkipColorBalance {
		s := opts.ColorStrength
		switch {
		case s > 0:
		case rep.Faded:
			// what is left after the levels: a gentle balance
			s = fadeColorStrength
		default:
			s = castColorStrength
		}
		if rep.Faded || casted(rep.Cast, removed) {
			rep.Gains = colorBalance(m, s, t.hi)
		}
	}
	if !opts.SkipCLAHE && opts.CLAHEStrength > 0 {
		c := opts.CLAHEClip
		if c <= 0 {
			c = 2
		}
		claheRGB(m, c, opts.CLAHEStrength)
	}
	// Sharpening gives back the crispness that deblocking or filling
	// took. Not after denoising: it cost 0.65 dB at σ 15 on Kodak24 and
	// took clean photos with film grain (denoised at σ 3-6) from 41.7 dB
	// or more to 33-35 dB from themselves.
	if !opts.SkipSharpen && (opts.SharpenAmount > 0 || rep.Deblocked || rep.Scratches > 0) {
		a := opts.SharpenAmount
		if a <= 0 {
			a = 0.35
		}
		sharpen(m, a, 1.0, 2)
		rep.Sharpened = true
	}
	return withAlpha(m.NRGBA(), img), rep, nil
}

func lumaOf(m *imageops.RGB) []float32 {
	y := make([]float32, m.W*m.H)
	for i := range y {
		y[i] = 0.299*m.R[i] + 0.587*m.G[i] + 0.114*m.B[i]
	}
	return y
}

// addLuma adds the change from old to new luminance to every channel.
func addLuma(m *imageops.RGB, old, new []float32) {
	for i := range old {
		d := new[i] - old[i]
		m.R[i] += d
		m.G[i] += d
		m.B[i] += d
	}
}

// ---- CLAHE ----

// clahe equalises plane y (0..255) with contrast-limited adaptive
// histogram equalisation (Zuiderveld 1994): about 8×8 tiles, 256-bin
// histograms clipped at clip times the mean bin height with the excess
// redistributed, and bilinear interpolation between the four nearest tile
// mappings.
func clahe(y []float32, w, h int, clip float64) []float32 {
	tx, ty := min(8, max(1, w/16)), min(8, max(1, h/16))
	tw, th := (w+tx-1)/tx, (h+ty-1)/ty
	maps := make([][256]float32, tx*ty)
	for j := 0; j < ty; j++ {
		for i := 0; i < tx; i++ {
			var hist [256]float64
			x0, y0 := i*tw, j*th
			x1, y1 := min(x0+tw, w), min(y0+th, h)
			n := float64((x1 - x0) * (y1 - y0))
			if n <= 0 {
				for v := range maps[j*tx+i] {
					maps[j*tx+i][v] = float32(v)
				}
				continue
			}
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					hist[bin(y[yy*w+xx])]++
				}
			}
			limit := clip * n / 256
			for it := 0; it < 4; it++ {
				var excess float64
				for v := range hist {
					if hist[v] > limit {
						excess += hist[v] - limit
						hist[v] = limit
					}
				}
				if excess < 1e-9 {
					break
				}
				add := excess / 256
				for v := range hist {
					hist[v] += add
				}
			}
			var cdf float64
			for v := range hist {
				cdf += hist[v]
				maps[j*tx+i][v] = float32(255 * cdf / n)
			}
		}
	}
	out := make([]float32, len(y))
	for yy := 0; yy < h; yy++ {
		fy := (float64(yy)+0.5)/float64(th) - 0.5
		j0 := int(math.Floor(fy))
		wy := float32(fy - float64(j0))
		j1 := min(j0+1, ty-1)
		j0 = max(j0, 0)
		for xx := 0; xx < w; xx++ {
			fx := (float64(xx)+0.5)/float64(tw) - 0.5
			i0 := int(math.Floor(fx))
			wx := float32(fx - float64(i0))
			i1 := min(i0+1, tx-1)
			i0 = max(i0, 0)
			b := bin(y[yy*w+xx])
			a := maps[j0*tx+i0][b]*(1-wx) + maps[j0*tx+i1][b]*wx
			c := maps[j1*tx+i0][b]*(1-wx) + maps[j1*tx+i1][b]*wx
			out[yy*w+xx] = a*(1-wy) + c*wy
		}
	}
	return out
}

func bin(v float32) int {
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return int(v + 0.5)
}

func claheRGB(m *imageops.RGB, clip, strength float64) {
	y := lumaOf(m)
	e := clahe(y, m.W, m.H, clip)
	s := float32(strength)
	for i := range e {
		e[i] = y[i] + s*(e[i]-y[i])
	}
	addLuma(m, y, e)
}

// ---- colour balance ----

// colorBalance estimates the illuminant with the grey-edge hypothesis
// (greyEdge) and removes strength of the cast, each channel's correction
// limited to 0.8..1.25 before the gains are scaled together so that the
// smallest is 1: the channels a cast dimmed are raised rather than the
// others darkened, unless that takes a channel's white point (white:
// the 99.5th percentiles) past 255, where they are scaled down to reach
// it. Until 2026-11-23 the luminance was kept instead, which left a photo
// whose channels a cast had dimmed darker than it was (warm-cast Kodak24:
// 26.19 dB then). Flat or nearly flat images are left alone.
func colorBalance(m *imageops.RGB, strength float64, white [3]float64) [3]float64 {
	gains := [3]float64{1, 1, 1}
	e := greyEdge(m)
	if e == gains {
		return gains
	}
	for c := range gains {
		g := 1 / e[c]
		g = 1 + strength*(g-1)
		gains[c] = math.Min(1.25, math.Max(0.8, g))
	}
	// darken no channel, unless a white point would pass 255
	l := min(gains[0], gains[1], gains[2])
	l = max(l, max(gains[0]*white[0], gains[1]*white[1], gains[2]*white[2])/255)
	for c := range gains {
		gains[c] /= l
	}
	if math.Abs(gains[0]-1) < 0.01 && math.Abs(gains[1]-1) < 0.01 && math.Abs(gains[2]-1) < 0.01 {
		return [3]float64{1, 1, 1}
	}
	for c, p := range [][]float32{m.R, m.G, m.B} {
		g := float32(gains[c])
		for i := range p {
			p[i] *= g
		}
	}
	return gains
}

// ---- sharpening ----

// sharpen is an unsharp mask on luminance: detail = Y - blur(Y); details
// under thr levels are ignored (so leftover noise is not amplified) and
// the rest is added back with gain amount.
func sharpen(m *imageops.RGB, amount, sigma float64, thr float32) {
	y := lumaOf(m)
	b := imageops.GaussBlur(y, m.W, m.H, sigma)
	a := float32(amount)
	ny := make([]float32, len(y))
	for i := range y {
		d := y[i] - b[i]
		switch {
		case d > thr:
			d -= thr
		case d < -thr:
			d += thr
		default:
			d = 0
		}
		ny[i] = y[i] + a*d
	}
	addLuma(m, y, ny)
}

// ---- JPEG deblocking ----

// blockiness measures the 8×8 grid on plane y: for every column (row)
// boundary it takes the mean "excess step", |jump − mean of the slopes on
// either side| capped at blockCap, and compares the strongest of the 8 grid phases with the
// median of the others. It returns the ratio (1 = no grid), the grid
// phases (x, y), and the excess step left by the grid in levels.
// blockCap limits each excess step in blockiness so that a few strong
// edges that happen to share a grid phase do not look like a JPEG grid.
const blockCap = 10

func blockiness(y []float32, w, h int) (ratio float64, ox, oy int, step float64) {
	var cx, cy, ux, uy [8]float64
	var nx, ny [8]int
	for r := 0; r < h; r++ {
		row := y[r*w : r*w+w]
		for x := 2; x < w-1; x++ {
			e := float64(row[x]-row[x-1]) - float64(row[x-1]-row[x-2]+row[x+1]-row[x])/2
			cx[x%8] += math.Min(math.Abs(e), blockCap)
			ux[x%8] += math.Abs(e)
			nx[x%8]++
		}
	}
	for r := 2; r < h-1; r++ {
		for x := 0; x < w; x++ {
			e := float64(y[r*w+x]-y[(r-1)*w+x]) - float64(y[(r-1)*w+x]-y[(r-2)*w+x]+y[(r+1)*w+x]-y[r*w+x])/2
			cy[r%8] += math.Min(math.Abs(e), blockCap)
			uy[r%8] += math.Abs(e)
			ny[r%8]++
		}
	}
	phase := func(c [8]float64, n [8]int) (int, float64, float64) {
		var v [8]float64
		best := 0
		for i := range v {
			if n[i] > 0 {
				v[i] = c[i] / float64(n[i])
			}
			if v[i] > v[best] {
				best = i
			}
		}
		var rest []float64
		for i := range v {
			if i != best {
				rest = append(rest, v[i])
			}
		}
		sort.Float64s(rest)
		return best, v[best], rest[len(rest)/2]
	}
	if w < 16 || h < 16 {
		return 1, 0, 0, 0
	}
	ox, bx, mx := phase(cx, nx)
	oy, by, my := phase(cy, ny)
	if mx <= 0 || my <= 0 {
		return 1, ox, oy, 0
	}
	// A JPEG grid shows in both directions; periodic content (stripes)
	// usually in one only, so the weaker direction decides.
	ratio = math.Min(bx/mx, by/my)
	// the step is measured without the cap
	_, bx, mx = phase(ux, nx)
	_, by, my = phase(uy, ny)
	return ratio, ox, oy, (bx + by - mx - my) / 2
}

// deblock detects a JPEG-like 8×8 grid and, when found (ratio > 1.25),
// smooths the block borders with an adaptive filter in the spirit of the
// H.264 loop filter: a border step is treated as an artefact only where it
// is small (under alpha, tied to the measured grid step) and both sides
// are smooth (slopes under beta); the excess step is then spread as a
// linear ramp over up to four pixels on each side. Real edges stay.
func deblock(m *imageops.RGB) (float64, bool) {
	ratio, ox, oy, step := blockiness(lumaOf(m), m.W, m.H)
	if ratio < 1.25 || step < 0.5 {
		return ratio, false
	}
	alpha := float32(3*step + 4)
	beta := float32(step + 2)
	for _, p := range [][]float32{m.R, m.G, m.B} {
		for pass := 0; pass < 2; pass++ {
			// vertical borders: between x-1 and x with x%8 == ox
			for x := ox; x < m.W; x += 8 {
				if x < 4 || x > m.W-4 {
					continue
				}
				for r := 0; r < m.H; r++ {
					filterEdge(p, r*m.W+x, 1, alpha, beta)
				}
			}
			for yy := oy; yy < m.H; yy += 8 {
				if yy < 4 || yy > m.H-4 {
					continue
				}
				for x := 0; x < m.W; x++ {
					filterEdge(p, yy*m.W+x, m.W, alpha, beta)
				}
			}
		}
	}
	return ratio, true
}

// filterEdge filters across the border just before index q0 (stride s).
func filterEdge(p []float32, q0, s int, alpha, beta float32) {
	P0, P1, P2, P3 := p[q0-s], p[q0-2*s], p[q0-3*s], p[q0-4*s]
	Q0, Q1, Q2, Q3 := p[q0], p[q0+s], p[q0+2*s], p[q0+3*s]
	d := Q0 - P0
	if abs32(d) >= alpha || abs32(P1-P0) >= beta || abs32(Q1-Q0) >= beta {
		return
	}
	e := d - ((P0-P1)+(Q1-Q0))/2
	if abs32(P3-P0) < 2*beta && abs32(Q3-Q0) < 2*beta && abs32(P2-P1) < beta && abs32(Q2-Q1) < beta {
		// smooth on both sides: long ramp
		p[q0-s] += e * 4 / 9
		p[q0-2*s] += e * 3 / 9
		p[q0-3*s] += e * 2 / 9
		p[q0-4*s] += e * 1 / 9
		p[q0] -= e * 4 / 9
		p[q0+s] -= e * 3 / 9
		p[q0+2*s] -= e * 2 / 9
		p[q0+3*s] -= e * 1 / 9
		return
	}
	p[q0-s] += e / 3
	p[q0-2*s] += e / 6
	p[q0] -= e / 3
	p[q0+s] -= e / 6
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
