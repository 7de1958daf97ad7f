package restore

import (
	"image"
	"math"

	"github.com/gengate/gengate/internal/imageops"
)

// DetectScratches finds thin bright or dark line defects (film scratches,
// creases, hairs) and returns them as a hole mask for an inpainter: 255
// where a pixel should be filled, 0 elsewhere, same size as img (origin 0,0).
//
// For each of eight orientations (about every 22.5°) a pixel responds when
// it is brighter (or darker) than both pixels 3 px away across the line by
// more than a threshold (the larger of 18 levels and 4× the noise
// estimate), i.e. a ridge at most ~4 px wide. A response only counts when
// it is long: at least 14 of the 21 pixels along the line direction
// respond in the same orientation and polarity (the 21 pixels are taken
// one per row or column, whichever the line runs along). The mask is then dilated
// by one pixel to cover the scratch's soft edges. Edges of large objects
// do not respond (only one side differs), nor do textures (not long).
func DetectScratches(img image.Image) *image.Gray {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := image.NewGray(image.Rect(0, 0, w, h))
	if w < 8 || h < 8 {
		return out
	}
	m := imageops.FromImage(img)
	y := blur(lumaOf(m), w, h, 0.7)
	thr := float32(math.Max(18, 4*EstimateNoise(img)))
	// eight line directions, every 22.5° roughly: (dx, dy) along the line
	dirs := [8][2]float64{{1, 0}, {0, 1}, {1, 1}, {1, -1}, {2, 1}, {2, -1}, {1, 2}, {-1, 2}}
	const across, half, need = 3.0, 10, 14
	hit := make([]int8, w*h)
	mask := make([]bool, w*h)
	at := func(x, y0 int) (int, bool) {
		if x < 0 || y0 < 0 || x >= w || y0 >= h {
			return 0, false
		}
		return y0*w + x, true
	}
	for _, d := range dirs {
		l := math.Hypot(d[0], d[1])
		nx := int(math.Round(-d[1] / l * across))
		ny := int(math.Round(d[0] / l * across))
		lm := math.Max(math.Abs(d[0]), math.Abs(d[1]))
		var ax, ay [2*half + 1]int // offsets along the line, one per row or column
		for k := -half; k <= half; k++ {
			ax[k+half] = int(math.Round(float64(k) * d[0] / lm))
			ay[k+half] = int(math.Round(float64(k) * d[1] / lm))
		}
		for i := range hit {
			hit[i] = 0
		}
		for yy := 0; yy < h; yy++ {
			for xx := 0; xx < w; xx++ {
				a, ok1 := at(xx+nx, yy+ny)
				c, ok2 := at(xx-nx, yy-ny)
				if !ok1 || !ok2 {
					continue
				}
				v := y[yy*w+xx]
				if v-y[a] > thr && v-y[c] > thr {
					hit[yy*w+xx] = 1
				} else if y[a]-v > thr && y[c]-v > thr {
					hit[yy*w+xx] = -1
				}
			}
		}
		for yy := 0; yy < h; yy++ {
			for xx := 0; xx < w; xx++ {
				s := hit[yy*w+xx]
				if s == 0 {
					continue
				}
				n := 0
				for k := range ax {
					if j, ok := at(xx+ax[k], yy+ay[k]); ok && hit[j] == s {
						n++
					}
				}
				if n >= need {
					mask[yy*w+xx] = true
				}
			}
		}
	}
	for yy := 0; yy < h; yy++ {
		for xx := 0; xx < w; xx++ {
			if !mask[yy*w+xx] {
				continue
			}
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if j, ok := at(xx+dx, yy+dy); ok {
						out.Pix[(j/w)*out.Stride+j%w] = 255
					}
				}
			}
		}
	}
	return out
}
