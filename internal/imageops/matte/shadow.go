package matte

import "math"

// Shadow handling. A cast shadow on a plain backdrop is darker than the
// backdrop but keeps its chromaticity, while an object usually differs in
// chromaticity or is brighter. The backdrop is modelled as a linear
// gradient (a least-squares plane per RGB channel) fitted to the border
// frame; when that model explains the frame well (residual RMS below
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
	shadowMaxResid = 14.0  // RGB RMS of the frame around its plane
	shadowMinRatio = 0.25  // darkest shadow relative to the backdrop
	shadowMaxRatio = 0.94  // anything brighter is backdrop, not shadow
	shadowChroma   = 0.025 // normalised rg distance of a shadow
	shadowMinLum   = 40.0  // backdrop too dark for chromaticity below this
)

// shadowMap returns the shadow score of every work pixel, or nil when the
// backdrop is not plain enough to model.
func shadowMap(im *workImage, frame []bool) []float32 {
	w, h := im.w, im.h
	var m [3][3]float64
	var r [3][3]float64
	cnt := 0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if !frame[i] {
				continue
			}
			f := [3]float64{1, float64(x) / float64(w), float64(y) / float64(h)}
			for a := 0; a < 3; a++ {
				for b := 0; b < 3; b++ {
					m[a][b] += f[a] * f[b]
				}
				for c := 0; c < 3; c++ {
					r[c][a] += float64(im.rgb[3*i+c]) * f[a]
				}
			}
			cnt++
		}
	}
	if cnt < 16 {
		return nil
	}
	var coef [3][3]float64
	for c := 0; c < 3; c++ {
		coef[c] = solve3(m, r[c])
	}
	model := func(x, y int, c int) float64 {
		return coef[c][0] + coef[c][1]*float64(x)/float64(w) + coef[c][2]*float64(y)/float64(h)
	}
	var ss float64
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if !frame[i] {
				continue
			}
			for c := 0; c < 3; c++ {
				d := float64(im.rgb[3*i+c]) - model(x, y, c)
				ss += d * d
			}
		}
	}
	if math.Sqrt(ss/float64(cnt)) > shadowMaxResid {
		return nil
	}
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
