package restore

import (
	"image"
	"math"
	"sort"

	"github.com/gengate/gengate/internal/imageops"
)

// Noise-estimate settings: block size, the percentile of block estimates
// used, and the factor that makes that percentile unbiased on pure
// Gaussian noise (measured by simulation, see TestNoiseCalibration).
var (
	noiseBlock      = 16
	noisePercentile = 0.20
	noiseCalib      = 1.0797
)

// EstimateNoise is a blind estimate of the standard deviation (0..255
// scale) of additive white Gaussian noise in img, per colour channel.
//
// It uses Immerkær's fast noise variance estimation (1996): the image is
// filtered with the difference of two Laplacians
//
//	 1 -2  1
//	-2  4 -2
//	 1 -2  1
//
// which cancels locally linear structure, and sigma = sqrt(pi/2)/6 ·
// mean|response|. To be robust to texture and edges the estimate is made
// per 16×16 block and a low percentile of the block estimates is taken,
// with a correction factor for the bias of that percentile on pure noise.
// Blocks touching clipped pixels (0 or 255) are skipped, because clipping
// hides noise. The three channels are estimated separately and averaged.
func EstimateNoise(img image.Image) float64 {
	if img == nil || img.Bounds().Empty() {
		return 0
	}
	m := imageops.FromImage(img)
	var sum float64
	for _, p := range [][]float32{m.R, m.G, m.B} {
		sum += estimatePlane(p, m.W, m.H)
	}
	return sum / 3
}

func estimatePlane(p []float32, w, h int) float64 {
	if w < 3 || h < 3 {
		return 0
	}
	bs := noiseBlock
	if w-2 < bs || h-2 < bs { // tiny image: one block
		bs = min(w-2, h-2)
	}
	const k = 1.2533141373155003 / 6 // sqrt(pi/2)/6
	type blk struct{ e, mean float64 }
	var ests, all []blk
	var allSum float64
	var allN int
	for by := 1; by+bs <= h-1; by += bs {
		for bx := 1; bx+bs <= w-1; bx += bs {
			var s, mean float64
			clipped := 0
			for y := by; y < by+bs; y++ {
				for x := bx; x < bx+bs; x++ {
					i := y*w + x
					c := p[i]
					mean += float64(c)
					if c <= 0 || c >= 255 {
						clipped++
					}
					up, dn := p[i-w], p[i+w]
					v := 4*c - 2*(p[i-1]+p[i+1]+up+dn) + p[i-w-1] + p[i-w+1] + p[i+w-1] + p[i+w+1]
					s += math.Abs(float64(v))
				}
			}
			e := k * s / float64(bs*bs)
			allSum += s
			allN += bs * bs
			b := blk{e, mean / float64(bs*bs)}
			all = append(all, b)
			if clipped*4 <= bs*bs { // at most 25 % clipped
				ests = append(ests, b)
			}
		}
	}
	if len(ests) < 4 {
		ests = all
	}
	if len(ests) == 0 {
		return 0
	}
	if len(ests) < 8 { // too few blocks for a percentile: global estimate
		return k * allSum / float64(allN)
	}
	pick := func(bs []blk) float64 {
		v := make([]float64, len(bs))
		for i, b := range bs {
			v[i] = b.e
		}
		sort.Float64s(v)
		return v[int(noisePercentile*float64(len(v)-1)+0.5)] * noiseCalib
	}
	est := pick(ests)
	// Clipping at 0 and 255 hides part of the noise in dark and bright
	// blocks: keep only blocks whose mean is 2 sigma away from both ends.
	for it := 0; it < 2; it++ {
		var keep []blk
		for _, b := range ests {
			if b.mean > 2*est && b.mean < 255-2*est {
				keep = append(keep, b)
			}
		}
		if len(keep) < 8 {
			break
		}
		est = pick(keep)
	}
	return est
}

// The texture check of a low blind estimate. White noise of deviation σ
// measures σ/2 on the picture averaged over 2×2 blocks (ratio 0.48-0.75
// at σ 8-15 added to six CBSD68 and six Kodak24 photos, 0.98 on kodim05,
// the most textured, at σ 8: the closest call); fine texture and the
// JPEG-correlated grain of a clean original measure as much or more there
// (ratio 1.02-3.1 on the clean photos that estimate above σ 2; 1.09 on
// CBSD68 291000, whose texture reads as σ 10 and which denoising took to
// 36.74 dB from itself). So an estimate under textureMaxSigma whose half-
// scale estimate is at least textureRatio times it is texture, and the
// photo is not denoised. Added noise of σ 3-5 on the most textured photos
// (kodim05, ratio 1.3-1.7) is left too: there the texture hides it.
// Estimates of textureMaxSigma or more (σ 15 and above) are never checked.
const (
	textureRatio    = 1.0
	textureMaxSigma = 12.0
)

// halfNoise is EstimateNoise's estimate on m averaged over 2×2 blocks.
// White noise of deviation σ is σ/2 there; texture and the correlated
// noise of a JPEG original keep most of their strength.
func halfNoise(m *imageops.RGB) float64 {
	w, h := m.W/2, m.H/2
	if w < 3 || h < 3 {
		return 0
	}
	var sum float64
	for _, p := range [][]float32{m.R, m.G, m.B} {
		q := make([]float32, w*h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := 2*y*m.W + 2*x
				q[y*w+x] = (p[i] + p[i+1] + p[i+m.W] + p[i+m.W+1]) / 4
			}
		}
		sum += estimatePlane(q, w, h)
	}
	return sum / 3
}
