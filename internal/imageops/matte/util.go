package matte

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"runtime"
	"sync"
)

// parallel splits [0,n) into contiguous chunks, one per CPU, and runs fn on
// each chunk concurrently.
func parallel(n int, fn func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p > n {
		p = n
	}
	if p <= 1 || n < 64 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := 0; t < p; t++ {
		lo, hi := t*n/p, (t+1)*n/p
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// toNRGBA returns src as an NRGBA image with origin (0,0), with fast paths
// for the types decoders produce. The result may share nothing with src.
func toNRGBA(src image.Image) *image.NRGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	switch s := src.(type) {
	case *image.NRGBA:
		parallel(h, func(lo, hi int) {
			for y := lo; y < hi; y++ {
				copy(out.Pix[y*out.Stride:y*out.Stride+4*w], s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):])
			}
		})
	case *image.RGBA:
		parallel(h, func(lo, hi int) {
			for y := lo; y < hi; y++ {
				sp := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
				dp := out.Pix[y*out.Stride:]
				for x := 0; x < w; x++ {
					r, g, bb, a := sp[4*x], sp[4*x+1], sp[4*x+2], sp[4*x+3]
					if a != 255 && a != 0 {
						r = uint8((uint32(r)*255 + uint32(a)/2) / uint32(a))
						g = uint8((uint32(g)*255 + uint32(a)/2) / uint32(a))
						bb = uint8((uint32(bb)*255 + uint32(a)/2) / uint32(a))
					}
					dp[4*x], dp[4*x+1], dp[4*x+2], dp[4*x+3] = r, g, bb, a
				}
			}
		})
	case *image.YCbCr:
		parallel(h, func(lo, hi int) {
			for y := lo; y < hi; y++ {
				dp := out.Pix[y*out.Stride:]
				for x := 0; x < w; x++ {
					yi := s.YOffset(b.Min.X+x, b.Min.Y+y)
					ci := s.COffset(b.Min.X+x, b.Min.Y+y)
					r, g, bb := color.YCbCrToRGB(s.Y[yi], s.Cb[ci], s.Cr[ci])
					dp[4*x], dp[4*x+1], dp[4*x+2], dp[4*x+3] = r, g, bb, 255
				}
			}
		})
	case *image.Gray:
		parallel(h, func(lo, hi int) {
			for y := lo; y < hi; y++ {
				sp := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
				dp := out.Pix[y*out.Stride:]
				for x := 0; x < w; x++ {
					v := sp[x]
					dp[4*x], dp[4*x+1], dp[4*x+2], dp[4*x+3] = v, v, v, 255
				}
			}
		})
	default:
		draw.Draw(out, out.Bounds(), src, b.Min, draw.Src)
	}
	return out
}

// downscale area-averages the RGB of img to w2×h2, returning interleaved
// float32 RGB (3 values per pixel).
func downscale(img *image.NRGBA, w2, h2 int) []float32 {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	out := make([]float32, 3*w2*h2)
	sx, sy := float64(w)/float64(w2), float64(h)/float64(h2)
	parallel(h2, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			y0 := int(float64(y) * sy)
			y1 := int(math.Ceil(float64(y+1) * sy))
			if y1 > h {
				y1 = h
			}
			if y1 <= y0 {
				y1 = y0 + 1
			}
			for x := 0; x < w2; x++ {
				x0 := int(float64(x) * sx)
				x1 := int(math.Ceil(float64(x+1) * sx))
				if x1 > w {
					x1 = w
				}
				if x1 <= x0 {
					x1 = x0 + 1
				}
				var r, g, b uint32
				for yy := y0; yy < y1; yy++ {
					p := img.Pix[yy*img.Stride+4*x0 : yy*img.Stride+4*x1]
					for i := 0; i < len(p); i += 4 {
						r += uint32(p[i])
						g += uint32(p[i+1])
						b += uint32(p[i+2])
					}
				}
				n := float32((y1 - y0) * (x1 - x0))
				o := 3 * (y*w2 + x)
				out[o] = float32(r) / n
				out[o+1] = float32(g) / n
				out[o+2] = float32(b) / n
			}
		}
	})
	return out
}

// toLab converts interleaved sRGB 0..255 to CIE L*a*b* (D65).
func toLab(rgb []float32) []float32 {
	var lin [256]float64
	for i := range lin {
		c := float64(i) / 255
		if c <= 0.04045 {
			lin[i] = c / 12.92
		} else {
			lin[i] = math.Pow((c+0.055)/1.055, 2.4)
		}
	}
	lf := func(v float32) float64 {
		i := int(v)
		if i >= 255 {
			return lin[255]
		}
		if i < 0 {
			return 0
		}
		f := float64(v) - float64(i)
		return lin[i]*(1-f) + lin[i+1]*f
	}
	fx := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	out := make([]float32, len(rgb))
	n := len(rgb) / 3
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r, g, b := lf(rgb[3*i]), lf(rgb[3*i+1]), lf(rgb[3*i+2])
			x := (0.4124*r + 0.3576*g + 0.1805*b) / 0.95047
			y := 0.2126*r + 0.7152*g + 0.0722*b
			z := (0.0193*r + 0.1192*g + 0.9505*b) / 1.08883
			X, Y, Z := fx(x), fx(y), fx(z)
			out[3*i] = float32(116*Y - 16)
			out[3*i+1] = float32(500 * (X - Y))
			out[3*i+2] = float32(200 * (Y - Z))
		}
	})
	return out
}

// boxFilter computes the mean of src over (2r+1)² windows clipped to the
// image (w×h), writing into dst. tmp must hold w*h values.
func boxFilter(src, dst, tmp []float32, w, h, r int) {
	// horizontal running sums into tmp
	parallel(h, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			row := src[y*w : y*w+w]
			out := tmp[y*w : y*w+w]
			var s float64
			hiX := r
			if hiX > w-1 {
				hiX = w - 1
			}
			for x := 0; x <= hiX; x++ {
				s += float64(row[x])
			}
			for x := 0; x < w; x++ {
				x0, x1 := x-r, x+r
				if x0 < 0 {
					x0 = 0
				}
				if x1 > w-1 {
					x1 = w - 1
				}
				out[x] = float32(s / float64(x1-x0+1))
				if x+r+1 < w {
					s += float64(row[x+r+1])
				}
				if x-r >= 0 {
					s -= float64(row[x-r])
				}
			}
		}
	})
	// vertical: process column strips for cache friendliness
	parallel(w, func(lo, hi int) {
		n := hi - lo
		s := make([]float64, n)
		// weights: horizontal pass already normalised per column count, so
		// only divide by vertical count here.
		for y := 0; y <= r && y < h; y++ {
			row := tmp[y*w+lo : y*w+hi]
			for i := range row {
				s[i] += float64(row[i])
			}
		}
		for y := 0; y < h; y++ {
			y0, y1 := y-r, y+r
			if y0 < 0 {
				y0 = 0
			}
			if y1 > h-1 {
				y1 = h - 1
			}
			inv := 1 / float64(y1-y0+1)
			out := dst[y*w+lo : y*w+hi]
			for i := range out {
				out[i] = float32(s[i] * inv)
			}
			if y+r+1 < h {
				add := tmp[(y+r+1)*w+lo : (y+r+1)*w+hi]
				for i := range add {
					s[i] += float64(add[i])
				}
			}
			if y-r >= 0 {
				sub := tmp[(y-r)*w+lo : (y-r)*w+hi]
				for i := range sub {
					s[i] -= float64(sub[i])
				}
			}
		}
	})
}

// labelBox is the bounding box, bounds included, of the pixels labelled
// l in lab (w wide, h high); x1 and y1 are -1 when there are none.
func labelBox(lab []int32, l int32, w, h int) (x0, x1, y0, y1 int) {
	x0, x1, y0, y1 = w, -1, h, -1
	for i, v := range lab {
		if v == l {
			x, y := i%w, i/w
			x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
		}
	}
	return x0, x1, y0, y1
}

// boxAgrees reports whether a box's segmentation m2 keeps at least
// belowAgree of the component labelled best (size pixels): it sees the
// same subject.
func boxAgrees(m2 []bool, lab []int32, best int32, size int) bool {
	agree := 0
	for i, l := range lab {
		if l == best && m2[i] {
			agree++
		}
	}
	return float64(agree) >= belowAgree*float64(size)
}

// largestComponent is the label of the largest of the components whose
// sizes imageops.Components gave (the first of equal ones); sizes must
// not be empty.
func largestComponent(sizes []int) int32 {
	best := int32(0)
	for c, n := range sizes {
		if n > sizes[best] {
			best = int32(c)
		}
	}
	return best
}
