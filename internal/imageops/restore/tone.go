package restore

import (
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// The gates and strengths of the tone steps. They were set on the clean
// photos of Kodak24 and CBSD68 and on faded versions of Kodak24 (Fadings):
// every faded photo of the three fading kinds, no clean Kodak24 photo, 4
// of the 68 CBSD68 ones (misty scenes: 109053, 227092, 260058, 296007)
// and none of the 24 warm-cast ones look faded by these numbers; the four
// misty ones are told from fading by fadeTopWhite and by where their
// blacks are (floor.go).
// fadeChannelBlack was 16 until 2026-11-23; at 26 it no longer takes
// 103070, 196073 and 299086 (one channel's black at 20-25: a deep blue or
// red object) for faded, while the lowest channel black of a faded
// Kodak24 photo is 27 (kodim15, cool fade). A consensus cast of
// castGate or more is on 23 of 24 warm-cast photos and on no clean one
// (the largest clean one is 0.10, kodim02's red door).
const (
	fadeBlack        = 30   // a faded photo's black point is at least this
	fadeRange        = 190  // and its black-to-white span at most this
	fadeMinRange     = 24   // (a flatter picture has no range to restore)
	fadeChannelBlack = 26   // and every channel's black point this or more
	fadeTargetLo     = 10   // levels map the black point here
	fadeTargetHi     = 246  // and the white point here
	fadeChannelLimit = 1.3  // a channel's gain within 1/1.3..1.3 of luma's
	fadeSaturation   = 1.2  // colour given back to a faded photo
	castGate         = 0.12 // consensus cast that calls for colour balance
	fadeWhite        = 250  // a channel whose white point is this or more is not dimmed
	// a faded photo's luma 99.9th percentile is under this: a print fades
	// at both ends, so not even small highlights keep the paper's white
	// (109053, a coyote in backlit dust: blacks lifted by a uniform veil,
	// rim-lit fur at 249; the faded set at most 226)
	fadeTopWhite = 245

	fadeColorStrength = 0.7 // grey-edge balance after a fade repair
	castColorStrength = 1.0 // grey-edge balance of a measured cast
)

// fadeNoiseMargin narrows the fade gate by this many noise deviations
// above fadeNoiseFree when the photo was denoised: noise clipped at 0
// lifts the black point and denoising narrows the range, so that on
// Kodak24 at σ 50 four of six denoised photos measured as faded by the
// plain gate (black points 32-47). Film grain (σ 3-6) needs no margin.
// fadeTopWhite moves up by the same margin (what noise is left lifts the
// brightest pixels).
const (
	fadeNoiseMargin = 0.5
	fadeNoiseFree   = 6.0
)

// castNoiseMargin raises castGate by this much per level of noise removed
// above fadeNoiseFree:
// clipped noise shifts the channel means, and at σ 50 a denoised kodim02
// showed an agreed cast of 0.14.
const castNoiseMargin = 0.002

// casted reports whether an agreed cast calls for colour balance; sigma is
// the noise deviation removed before it was measured (0 if none).
func casted(cast [3]float64, sigma float64) bool {
	return castOf(cast) >= castGate+castNoiseMargin*max(sigma-fadeNoiseFree, 0)
}

// faded reports whether t shows fading: lifted blacks, a narrow range and
// no white highlights. It is the global gate: floor (floor.go) then tells
// fading from haze and pale scenes.
// sigma is the noise deviation removed before t was measured (0 if none).
func faded(t tone, sigma float64) bool {
	r, m := t.yhi-t.ylo, fadeNoiseMargin*max(sigma-fadeNoiseFree, 0)
	return t.ylo >= fadeBlack+m && r <= fadeRange-m && r >= fadeMinRange &&
		min(t.lo[0], t.lo[1], t.lo[2]) >= fadeChannelBlack+m && !fullWhites(t) &&
		t.ytop < fadeTopWhite+m
}

// fullWhites reports whether two or more channels reach fadeWhite at
// their 99.5th percentile: the photo has paper-white highlights, so its
// lifted blacks are mist or a low-key scene, not a faded print (a print
// fades at both ends; a cast may leave one dye's white alone). On clean
// CBSD68 this keeps 210088 and 253055 (misty, with white highlights) from
// the fade repair; every photo of the three fading kinds of Fadings has at
// most one channel at 250 or more.
func fullWhites(t tone) bool {
	n := 0
	for _, h := range t.hi {
		if h >= fadeWhite {
			n++
		}
	}
	return n >= 2
}

// castOf is how far a cast estimate is from neutral: its largest channel
// deviation from 1.
func castOf(e [3]float64) float64 {
	return math.Max(math.Abs(e[0]-1), math.Max(math.Abs(e[1]-1), math.Abs(e[2]-1)))
}

// tone is what the colour and contrast steps measure on a photo before
// deciding whether it needs them.
type tone struct {
	lo, hi   [3]float64 // each channel's 0.5th and 99.5th percentile
	ylo, yhi float64    // the same for luma
	ytop     float64    // and the luma's 99.9th percentile
	edge     [3]float64 // grey-edge illuminant estimate, normalised to mean 1
	chroma   float64    // mean distance of a pixel from its grey, in levels
}

// percentiles returns the q-quantiles of p (0..255 values), from a
// 256-bin histogram.
func percentiles(p []float32, qs ...float64) []float64 {
	var hist [256]int
	for _, v := range p {
		hist[bin(v)]++
	}
	out := make([]float64, len(qs))
	for k, q := range qs {
		want := int(math.Ceil(q * float64(len(p))))
		n := 0
		for v := range hist {
			n += hist[v]
			if n >= max(want, 1) {
				out[k] = float64(v)
				break
			}
		}
	}
	return out
}

// measureTone measures m.
func measureTone(m *imageops.RGB) tone {
	var t tone
	for c, p := range [][]float32{m.R, m.G, m.B} {
		q := percentiles(p, 0.005, 0.995)
		t.lo[c], t.hi[c] = q[0], q[1]
	}
	q := percentiles(lumaOf(m), 0.005, 0.995, 0.999)
	t.ylo, t.yhi, t.ytop = q[0], q[1], q[2]
	t.edge = greyEdge(m)
	var s float64
	for i := range m.R {
		r, g, b := float64(m.R[i]), float64(m.G[i]), float64(m.B[i])
		mean := (r + g + b) / 3
		s += (math.Abs(r-mean) + math.Abs(g-mean) + math.Abs(b-mean)) / 3
	}
	t.chroma = s / float64(max(len(m.R), 1))
	return t
}

// greyEdge estimates the illuminant with the grey-edge hypothesis (van de
// Weijer, Gevers, Gijsenij 2007: the mean gradient magnitude, Minkowski
// p=1, is achromatic), normalised to a mean of 1; {1,1,1} when the picture
// is too small or too flat to say.
func greyEdge(m *imageops.RGB) [3]float64 {
	flat := [3]float64{1, 1, 1}
	if m.W < 3 || m.H < 3 {
		return flat
	}
	var e [3]float64
	var mean float64
	n := 0
	for c, p := range [][]float32{m.R, m.G, m.B} {
		var s float64
		for y := 1; y < m.H-1; y++ {
			for x := 1; x < m.W-1; x++ {
				i := y*m.W + x
				gx := float64(p[i+1] - p[i-1])
				gy := float64(p[i+m.W] - p[i-m.W])
				g := math.Sqrt(gx*gx+gy*gy) / 2
				s += g
				if c == 1 {
					mean += g
					n++
				}
			}
		}
		e[c] = s
	}
	if n == 0 || mean/float64(n) < 0.5 || e[0] <= 0 || e[1] <= 0 || e[2] <= 0 {
		return flat
	}
	avg := (e[0] + e[1] + e[2]) / 3
	return [3]float64{e[0] / avg, e[1] / avg, e[2] / avg}
}

// saturate scales every pixel's distance from its luma by k.
func saturate(m *imageops.RGB, k float32) {
	for i := range m.R {
		l := 0.299*m.R[i] + 0.587*m.G[i] + 0.114*m.B[i]
		m.R[i] = l + k*(m.R[i]-l)
		m.G[i] = l + k*(m.G[i]-l)
		m.B[i] = l + k*(m.B[i]-l)
	}
}

// levelsLimited maps the luma range t.ylo..t.yhi onto tlo..thi and each
// channel with its own black and white points, its gain held within
// 1/limit..limit of the luma gain.
func levelsLimited(m *imageops.RGB, t tone, tlo, thi, limit float64) {
	gy := (thi - tlo) / math.Max(t.yhi-t.ylo, 8)
	for c, p := range [][]float32{m.R, m.G, m.B} {
		g := (thi - tlo) / math.Max(t.hi[c]-t.lo[c], 8)
		g = math.Min(gy*limit, math.Max(gy/limit, g))
		// keep the channel's mid-point where the per-channel map puts it
		mid := (t.lo[c] + t.hi[c]) / 2
		off := (tlo+thi)/2 - mid*g
		for i := range p {
			p[i] = p[i]*float32(g) + float32(off)
		}
	}
}

// castEstimate is the colour cast three illuminant estimators agree on:
// grey edge, grey world (the channel means) and white patch (the 99.5th
// percentiles), each normalised to a mean of 1. Per channel it is the
// estimate nearest 1 when all three lie on the same side of 1, else 1: a
// scene that is simply colourful (a red door, yellow caps) moves one or two
// of them, a cast moves all three.
func castEstimate(m *imageops.RGB, t tone) [3]float64 {
	var mean [3]float64
	for c, p := range [][]float32{m.R, m.G, m.B} {
		var s float64
		for _, v := range p {
			s += float64(v)
		}
		mean[c] = s / float64(max(len(p), 1))
	}
	norm := func(v [3]float64) [3]float64 {
		a := (v[0] + v[1] + v[2]) / 3
		if a <= 0 {
			return [3]float64{1, 1, 1}
		}
		return [3]float64{v[0] / a, v[1] / a, v[2] / a}
	}
	ests := [][3]float64{t.edge, norm(mean), norm(t.hi)}
	out := [3]float64{1, 1, 1}
	for c := range out {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, e := range ests {
			lo, hi = math.Min(lo, e[c]), math.Max(hi, e[c])
		}
		switch {
		case lo > 1:
			out[c] = lo
		case hi < 1:
			out[c] = hi
		}
	}
	return out
}
