package matte

import "math"

// Shadow handling. A cast shadow on a plain backdrop is darker than the
// backdrop but keeps its chromaticity, while an object usually differs in
// chromaticity or is brighter. The backdrop is modelled as a smooth
// surface (a least-squares quadratic in x, y per RGB channel, covering a
// linear gradient and vignetting) fitted to the border frame; when that
// model explains the frame well (residual RMS below
// shadowMaxResid, i.e. the backdrop is plain) every pixel gets a shadow
// score in 0..1 from
//
//   - its luminance ratio to the model, between shadowMinRatio and
//     shadowMaxRatio (darker, but not black), and
//   - its distance in normalised rg chromaticity to the model, below
//     shadowChroma (same hue and saturation).
//
// Shadow pixels are removed from the initial foreground and pay a unary
// cost for being foreground.
const (
	shadowMaxResid = 14.0  // RGB RMS of the frame around its model
	shadowMinRatio = 0.25  // darkest shadow relative to the backdrop
	shadowMaxRatio = 0.94  // anything brighter is backdrop, not shadow
	shadowChroma   = 0.025 // normalised rg distance of a shadow
	shadowMinLum   = 40.0  // backdrop too dark for chromaticity below this
)

// shadowMap returns the shadow score of every work pixel, or nil when the
// backdrop is not plain enough to model.
func shadowMap(im *workImage, frame []bool) []float32 {
	bd := fitBackdrop(im, frame)
	if bd == nil || bd.resid > shadowMaxResid {
		return nil
	}
	return shadowScores(im, bd)
}

// shadowScores returns the shadow score of every work pixel against the
// backdrop model bd, or nil when no pixel scores.
func shadowScores(im *workImage, bd *backdrop) []float32 {
	w, h := im.w, im.h
	model := func(x, y int, c int) float64 { return bd.at(x, y, c) }
	out := make([]float32, w*h)
	any := false
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			mr, mg, mb := model(x, y, 0), model(x, y, 1), model(x, y, 2)
			ms := mr + mg + mb
			if ms < 3*shadowMinLum {
				continue
			}
			pr, pg, pb := float64(im.rgb[3*i]), float64(im.rgb[3*i+1]), float64(im.rgb[3*i+2])
			ps := pr + pg + pb
			ratio := ps / ms
			if ratio < shadowMinRatio || ratio > 1 || ps <= 0 {
				continue
			}
			dr, dg := pr/ps-mr/ms, pg/ps-mg/ms
			cd := math.Hypot(dr, dg)
			if cd >= shadowChroma {
				continue
			}
			s := 1 - cd/shadowChroma
			if ratio > shadowMaxRatio {
				s *= (1 - ratio) / (1 - shadowMaxRatio)
			}
			out[i] = float32(s)
			any = true
		}
	}
	if !any {
		return nil
	}
	return out
}

// backdrop is a smooth model of the border-frame colour: per RGB channel a
// least-squares quadratic surface in (x, y), which covers a linear
// gradient and the radial fall-off of vignetting and studio lighting.
type backdrop struct {
	w, h  int
	coef  [3][backdropFeats]float64
	resid float64 // RGB RMS of the frame around the model
}

const backdropFeats = 6

func backdropFeat(x, y, w, h int) [backdropFeats]float64 {
	fx, fy := float64(x)/float64(w)-0.5, float64(y)/float64(h)-0.5
	return [backdropFeats]float64{1, fx, fy, fx * fx, fy * fy, fx * fy}
}

// at is the model colour of channel c at (x, y).
func (b *backdrop) at(x, y, c int) float64 {
	f := backdropFeat(x, y, b.w, b.h)
	var v float64
	for k, a := range b.coef[c] {
		v += a * f[k]
	}
	return v
}

// fitBackdrop fits the backdrop model by least squares to the pixels
// marked in frame; resid is their RGB RMS around it. It returns nil when
// too few pixels are marked or the system is singular.
func fitBackdrop(im *workImage, frame []bool) *backdrop {
	const nf = backdropFeats
	w, h := im.w, im.h
	var A [nf][nf + 3]float64
	cnt := 0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if !frame[i] {
				continue
			}
			f := backdropFeat(x, y, w, h)
			for a := 0; a < nf; a++ {
				for b := 0; b < nf; b++ {
					A[a][b] += f[a] * f[b]
				}
				for c := 0; c < 3; c++ {
					A[a][nf+c] += f[a] * float64(im.rgb[3*i+c])
				}
			}
			cnt++
		}
	}
	if cnt < 4*nf {
		return nil
	}
	// Gauss-Jordan elimination with partial pivoting
	for col := 0; col < nf; col++ {
		p := col
		for r := col + 1; r < nf; r++ {
			if math.Abs(A[r][col]) > math.Abs(A[p][col]) {
				p = r
			}
		}
		A[col], A[p] = A[p], A[col]
		d := A[col][col]
		if math.Abs(d) < 1e-12 {
			return nil
		}
		for k := range A[col] {
			A[col][k] /= d
		}
		for r := 0; r < nf; r++ {
			if r != col {
				m := A[r][col]
				for k := range A[r] {
					A[r][k] -= m * A[col][k]
				}
			}
		}
	}
	b := &backdrop{w: w, h: h}
	for c := 0; c < 3; c++ {
		for a := 0; a < nf; a++ {
			b.coef[c][a] = A[a][nf+c]
		}
	}
	var ss float64
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if !frame[i] {
				continue
			}
			for c := 0; c < 3; c++ {
				d := float64(im.rgb[3*i+c]) - b.at(x, y, c)
				ss += d * d
			}
		}
	}
	b.resid = math.Sqrt(ss / float64(cnt))
	return b
}
