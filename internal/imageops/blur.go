package imageops

import "math"

// GaussBlur is a separable Gaussian blur of a w×h plane (row-major) with
// the kernel cut at 3 sigma and borders clamped. Sums run in the plane's
// own precision.
func GaussBlur[T float32 | float64](p []T, w, h int, sigma float64) []T {
	r := int(math.Ceil(3 * sigma))
	k := make([]T, 2*r+1)
	var ks float64
	for i := -r; i <= r; i++ {
		v := math.Exp(-float64(i*i) / (2 * sigma * sigma))
		k[i+r] = T(v)
		ks += v
	}
	for i := range k {
		k[i] /= T(ks)
	}
	tmp := make([]T, len(p))
	out := make([]T, len(p))
	for y := 0; y < h; y++ {
		row := p[y*w : y*w+w]
		for x := 0; x < w; x++ {
			var s T
			for i, kv := range k {
				s += kv * row[min(max(x+i-r, 0), w-1)]
			}
			tmp[y*w+x] = s
		}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s T
			for i, kv := range k {
				s += kv * tmp[min(max(y+i-r, 0), h-1)*w+x]
			}
			out[y*w+x] = s
		}
	}
	return out
}
