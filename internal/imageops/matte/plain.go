package matte

import (
	"image"
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// Plain-background subset of the GrabCut set, chosen from the ground truth
// and the image alone (never from our results). With the image scaled to
// a longest side of 400 px and the background taken as the GT-background
// pixels more than plainErode px from any GT foreground or boundary-band
// pixel, an image is "a single object on a plain background" when
//
//   - its GT foreground is one 8-connected component, ignoring specks
//     smaller than plainSpeck (0.5 %) of the image;
//   - the background has little colour variation: after removing a linear
//     gradient (a least-squares plane a+bx+cy per L*a*b* channel) the
//     residual standard deviation sqrt(var L* + var a* + var b*) is below
//     plainStd (ΔE);
//   - the background has little texture: the mean L*a*b* distance between
//     4-neighbours is below plainGrad (ΔE).
//
// Both thresholds sit in the widest gap of their sorted values over the 50
// images between the clearly plain and the clearly cluttered ones (std
// 13.7 → 15.0, texture 2.35 → 2.72; GENGATE_MATTE_PLAIN=1 go test -run
// TestPlainStats prints the table).
const (
	plainSpeck = 0.005
	plainErode = 4
	plainStd   = 14.0
	plainGrad  = 2.5
)

// plainStats returns the number of GT foreground components (ignoring
// specks), the background's residual L*a*b* standard deviation after
// removing a linear gradient, and its mean neighbour difference.
func plainStats(img image.Image, fg, ignore []bool, w, h int) (comps int, std, grad float64) {
	_, sizes, _ := imageops.Components(fg, w, h, true)
	for _, s := range sizes {
		if float64(s) >= plainSpeck*float64(w*h) {
			comps++
		}
	}
	work := newWorkImage(toNRGBA(img), 400)
	ww, wh, lab := work.w, work.h, work.lab
	// obj: work pixels that contain any GT foreground or band pixel
	obj := make([]bool, ww*wh)
	for y := 0; y < h; y++ {
		wy := y * wh / h
		for x := 0; x < w; x++ {
			if fg[y*w+x] || ignore[y*w+x] {
				obj[wy*ww+x*ww/w] = true
			}
		}
	}
	// dilate by plainErode (separable square)
	tmp := make([]bool, ww*wh)
	near := make([]bool, ww*wh)
	for y := 0; y < wh; y++ {
		for x := 0; x < ww; x++ {
			for d := -plainErode; d <= plainErode; d++ {
				if nx := x + d; nx >= 0 && nx < ww && obj[y*ww+nx] {
					tmp[y*ww+x] = true
					break
				}
			}
		}
	}
	for y := 0; y < wh; y++ {
		for x := 0; x < ww; x++ {
			for d := -plainErode; d <= plainErode; d++ {
				if ny := y + d; ny >= 0 && ny < wh && tmp[ny*ww+x] {
					near[y*ww+x] = true
					break
				}
			}
		}
	}
	// linear gradient: normal equations on (1, x, y) per channel
	var m [3][3]float64
	var r [3][3]float64
	cnt := 0
	var gsum float64
	gcnt := 0
	for y := 0; y < wh; y++ {
		for x := 0; x < ww; x++ {
			i := y*ww + x
			if near[i] {
				continue
			}
			f := [3]float64{1, float64(x) / float64(ww), float64(y) / float64(wh)}
			for a := 0; a < 3; a++ {
				for b := 0; b < 3; b++ {
					m[a][b] += f[a] * f[b]
				}
				for c := 0; c < 3; c++ {
					r[c][a] += float64(lab[3*i+c]) * f[a]
				}
			}
			cnt++
			for _, j := range [2]int{i + 1, i + ww} {
				if (j == i+1 && x+1 >= ww) || (j == i+ww && y+1 >= wh) || near[j] {
					continue
				}
				var d float64
				for c := 0; c < 3; c++ {
					e := float64(lab[3*i+c] - lab[3*j+c])
					d += e * e
				}
				gsum += math.Sqrt(d)
				gcnt++
			}
		}
	}
	if cnt < 10 || gcnt == 0 {
		return comps, math.Inf(1), math.Inf(1)
	}
	var coef [3][3]float64
	for c := 0; c < 3; c++ {
		coef[c] = solve3(m, r[c])
	}
	var ss float64
	for y := 0; y < wh; y++ {
		for x := 0; x < ww; x++ {
			i := y*ww + x
			if near[i] {
				continue
			}
			fx, fy := float64(x)/float64(ww), float64(y)/float64(wh)
			for c := 0; c < 3; c++ {
				d := float64(lab[3*i+c]) - (coef[c][0] + coef[c][1]*fx + coef[c][2]*fy)
				ss += d * d
			}
		}
	}
	return comps, math.Sqrt(ss / float64(cnt)), gsum / float64(gcnt)
}

// isPlain applies the subset definition to plainStats' results.
func isPlain(comps int, std, grad float64) bool {
	return comps == 1 && std < plainStd && grad < plainGrad
}

// solve3 solves the 3×3 system m·x = r by Cramer's rule.
func solve3(m [3][3]float64, r [3]float64) [3]float64 {
	det := func(a [3][3]float64) float64 {
		return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) - a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) + a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	}
	d := det(m)
	var x [3]float64
	if d == 0 {
		return x
	}
	for k := 0; k < 3; k++ {
		a := m
		for i := 0; i < 3; i++ {
			a[i][k] = r[i]
		}
		x[k] = det(a) / d
	}
	return x
}
