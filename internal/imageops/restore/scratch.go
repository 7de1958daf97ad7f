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
// one per row or column, whichever the line runs along). Of the responses,
// only thin lines at least scratchMinLen of the image's shorter side long
// are kept (8-connected pieces whose longer bounding-box side reaches that
// length, at most scratchMaxWidth px wide on average): thin structures of
// the scene (window bars, twigs, hair) are short; a scratch runs across
// the picture. The kept lines then grow, by at most 10 px, into connected
// pixels that respond in any orientation (hysteresis, as in Canny's edge
// detector), which recovers their ends, where fewer than 14 of the 21
// pixels respond. Long straight structures of the scene (masts, wires,
// building edges) still respond, which is why photo-restoration fills
// scratches only when asked (removeScratches). The mask is then dilated
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
	y := imageops.GaussBlur(lumaOf(m), w, h, 0.7)
	thr := float32(math.Max(18, 4*EstimateNoise(img)))
	// eight line directions, every 22.5° roughly: (dx, dy) along the line
	dirs := [8][2]float64{{1, 0}, {0, 1}, {1, 1}, {1, -1}, {2, 1}, {2, -1}, {1, 2}, {-1, 2}}
	const across, half, need = 3.0, 10, 14
	hit := make([]int8, w*h)
	mask := make([]bool, w*h)
	ridge := make([]bool, w*h) // responds in some orientation
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
					ridge[yy*w+xx] = true
				} else if y[a]-v > thr && y[c]-v > thr {
					hit[yy*w+xx] = -1
					ridge[yy*w+xx] = true
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
	if !keepLong(mask, w, h) {
		return out
	}
	growEnds(mask, ridge, w, h, half)
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

// Scratch-mask limits (see DetectScratches). On the 92 clean photos of
// Kodak24 and CBSD68 the line detector alone marks 2.7 % of pixels on
// average (window bars, branches, masts); the length limit brings that
// down (TestScratchFalsePositives).
const (
	scratchMinLen   = 0.2
	scratchMaxWidth = 5.0
)

// keepLong keeps the long thin pieces of mask, in place, and reports
// whether any is left.
func keepLong(mask []bool, w, h int) bool {
	minLen := max(24, int(scratchMinLen*float64(min(w, h))))
	lab, sizes, _ := imageops.Components(mask, w, h, true)
	type box struct{ x0, y0, x1, y1 int }
	boxes := make([]box, len(sizes))
	for k := range boxes {
		boxes[k] = box{w, h, -1, -1}
	}
	for i, l := range lab {
		if l >= 0 {
			b, x, y := &boxes[l], i%w, i/w
			b.x0, b.y0, b.x1, b.y1 = min(b.x0, x), min(b.y0, y), max(b.x1, x), max(b.y1, y)
		}
	}
	keep := make([]bool, len(sizes))
	kept := false
	for k, b := range boxes {
		l := max(b.x1-b.x0, b.y1-b.y0) + 1
		keep[k] = l >= minLen && float64(sizes[k]) <= scratchMaxWidth*float64(l)
		kept = kept || keep[k]
	}
	for i, l := range lab {
		if l >= 0 && !keep[l] {
			mask[i] = false
		}
	}
	return kept
}

// growEnds adds to mask the pixels marked in ridge that are 8-connected
// to it within steps pixels.
func growEnds(mask, ridge []bool, w, h, steps int) {
	var front []int32
	for i, m := range mask {
		if m {
			front = append(front, int32(i))
		}
	}
	for s := 0; s < steps && len(front) > 0; s++ {
		var next []int32
		for _, i32 := range front {
			i := int(i32)
			x, y := i%w, i/w
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					if j := ny*w + nx; ridge[j] && !mask[j] {
						mask[j] = true
						next = append(next, int32(j))
					}
				}
			}
		}
		front = next
	}
}
