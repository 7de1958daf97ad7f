package matte

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// MinSide is the smallest width or height accepted: below it there is no
// border frame and interior to tell apart.
const MinSide = 8

// ErrEmpty is returned for a nil or zero-size image.
var ErrEmpty = errors.New("matte: empty image")

// RemoveBackground cuts the main object out of src with no user hint. The
// result has src's size (origin 0,0), the original colours
// (un-premultiplied) and alpha = the foreground matte; fully transparent
// pixels have their colour cleared to 0.
func RemoveBackground(src image.Image) (*image.NRGBA, error) {
	img, alpha, err := run(src, defaultParams)
	if err != nil {
		return nil, err
	}
	parallel(img.Rect.Dy(), func(lo, hi int) {
		for y := lo; y < hi; y++ {
			row := img.Pix[y*img.Stride : y*img.Stride+4*img.Rect.Dx()]
			ar := alpha.Pix[y*alpha.Stride:]
			for x := 0; x < len(row)/4; x++ {
				a := ar[x]
				if a == 0 {
					row[4*x], row[4*x+1], row[4*x+2] = 0, 0, 0
				}
				row[4*x+3] = a
			}
		}
	})
	return img, nil
}

// Matte returns the foreground matte (0 background .. 255 foreground) of
// src at its full size, origin (0,0).
func Matte(src image.Image) (*image.Gray, error) {
	_, alpha, err := run(src, defaultParams)
	return alpha, err
}

func checkSize(src image.Image) error {
	if src == nil {
		return ErrEmpty
	}
	b := src.Bounds()
	if b.Empty() {
		return ErrEmpty
	}
	if b.Dx() < MinSide || b.Dy() < MinSide {
		return fmt.Errorf("matte: image %dx%d too small (need at least %dx%d)", b.Dx(), b.Dy(), MinSide, MinSide)
	}
	return nil
}

// run does the whole pipeline and returns the NRGBA copy of src and the matte.
func run(src image.Image, p params) (*image.NRGBA, *image.Gray, error) {
	return runHint(src, p, nil)
}

func runHint(src image.Image, p params, hintFull []uint8) (*image.NRGBA, *image.Gray, error) {
	if err := checkSize(src); err != nil {
		return nil, nil, err
	}
	img := toNRGBA(src)
	W, H := img.Rect.Dx(), img.Rect.Dy()
	im := newWorkImage(img, p.workSide)
	ww, wh := im.w, im.h
	var h hint
	if hintFull != nil {
		h = make(hint, ww*wh)
		for y := 0; y < wh; y++ {
			for x := 0; x < ww; x++ {
				h[y*ww+x] = hintFull[(y*H/wh)*W+x*W/ww]
			}
		}
	}
	mask := segmentWhole(im, p, h)
	alpha := refine(img, mask, ww, wh)
	return img, alpha, nil
}

// newWorkImage area-averages img to a longest side of at most side.
func newWorkImage(img *image.NRGBA, side int) *workImage {
	ww, wh := fitSide(img.Rect.Dx(), img.Rect.Dy(), side)
	im := &workImage{w: ww, h: wh, rgb: downscale(img, ww, wh)}
	im.lab = toLab(im.rgb)
	return im
}

// fitSide scales w×h so that the longest side is at most side.
func fitSide(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, int(math.Round(float64(h)*float64(side)/float64(w))))
	}
	return max(1, int(math.Round(float64(w)*float64(side)/float64(h)))), side
}

// guideSide is the longest side at which the guided filter's coefficients
// are computed; above it they are upsampled (He & Sun, "Fast Guided
// Filter", 2015) and applied to the full-resolution guide.
const guideSide = 1600

// refine upsamples the low-resolution mask to img's size and snaps its
// edges to the image with a guided filter (He, Sun & Tang) evaluated in a
// band around the mask boundary; elsewhere alpha is 0 or 255.
func refine(img *image.NRGBA, mask []bool, ww, wh int) *image.Gray {
	W, H := img.Rect.Dx(), img.Rect.Dy()
	gw, gh := fitSide(W, H, guideSide)
	n := gw * gh
	// guide: grey at mid resolution, 0..1
	rgb := downscale(img, gw, gh)
	I := make([]float32, n)
	for i := range I {
		I[i] = (0.299*rgb[3*i] + 0.587*rgb[3*i+1] + 0.114*rgb[3*i+2]) / 255
	}
	rgb = nil
	// p: bilinear upsampling of the mask
	P := make([]float32, n)
	sx, sy := float64(ww)/float64(gw), float64(wh)/float64(gh)
	parallel(gh, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			fy := (float64(y)+0.5)*sy - 0.5
			for x := 0; x < gw; x++ {
				fx := (float64(x)+0.5)*sx - 0.5
				P[y*gw+x] = bilinearMask(mask, ww, wh, fx, fy)
			}
		}
	})
	scale := float64(gw) / float64(ww)
	r := int(math.Round(1.5*scale)) + 1
	const eps = 1e-3
	tmp := make([]float32, n)
	mI := make([]float32, n)
	mP := make([]float32, n)
	boxFilter(I, mI, tmp, gw, gh, r)
	boxFilter(P, mP, tmp, gw, gh, r)
	band := make([]bool, n)
	for i := range band {
		band[i] = mP[i] > 0.001 && mP[i] < 0.999
	}
	II := make([]float32, n)
	IP := make([]float32, n)
	for i := range II {
		II[i] = I[i] * I[i]
		IP[i] = I[i] * P[i]
	}
	boxFilter(II, II, tmp, gw, gh, r)
	boxFilter(IP, IP, tmp, gw, gh, r)
	A, B := II, IP // reuse
	for i := range A {
		varI := II[i] - mI[i]*mI[i]
		cov := IP[i] - mI[i]*mP[i]
		a := cov / (varI + eps)
		A[i] = a
		B[i] = mP[i] - a*mI[i]
	}
	boxFilter(A, A, tmp, gw, gh, r)
	boxFilter(B, B, tmp, gw, gh, r)

	out := image.NewGray(image.Rect(0, 0, W, H))
	ux, uy := float64(gw)/float64(W), float64(gh)/float64(H)
	parallel(H, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			fy := (float64(y)+0.5)*uy - 0.5
			y0 := int(math.Floor(fy))
			ty := float32(fy - float64(y0))
			y0c, y1c := clampI(y0, gh), clampI(y0+1, gh)
			ny := clampI(int(math.Round(fy)), gh)
			row := img.Pix[y*img.Stride:]
			orow := out.Pix[y*out.Stride:]
			for x := 0; x < W; x++ {
				fx := (float64(x)+0.5)*ux - 0.5
				nx := clampI(int(math.Round(fx)), gw)
				ni := ny*gw + nx
				if !band[ni] {
					if P[ni] >= 0.5 {
						orow[x] = 255
					} else {
						orow[x] = 0
					}
					continue
				}
				x0 := int(math.Floor(fx))
				tx := float32(fx - float64(x0))
				x0c, x1c := clampI(x0, gw), clampI(x0+1, gw)
				i00, i01, i10, i11 := y0c*gw+x0c, y0c*gw+x1c, y1c*gw+x0c, y1c*gw+x1c
				a := (A[i00]*(1-tx)+A[i01]*tx)*(1-ty) + (A[i10]*(1-tx)+A[i11]*tx)*ty
				b := (B[i00]*(1-tx)+B[i01]*tx)*(1-ty) + (B[i10]*(1-tx)+B[i11]*tx)*ty
				g := (0.299*float32(row[4*x]) + 0.587*float32(row[4*x+1]) + 0.114*float32(row[4*x+2])) / 255
				v := a*g + b
				orow[x] = clampU8(v * 255)
			}
		}
	})
	return out
}

func clampI(v, n int) int {
	if v < 0 {
		return 0
	}
	if v >= n {
		return n - 1
	}
	return v
}

func clampU8(v float32) uint8 {
	if v <= 0 || v != v {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v + 0.5)
}

func bilinearMask(m []bool, w, h int, fx, fy float64) float32 {
	x0, y0 := int(math.Floor(fx)), int(math.Floor(fy))
	tx, ty := float32(fx-float64(x0)), float32(fy-float64(y0))
	at := func(x, y int) float32 {
		if m[clampI(y, h)*w+clampI(x, w)] {
			return 1
		}
		return 0
	}
	return (at(x0, y0)*(1-tx)+at(x0+1, y0)*tx)*(1-ty) + (at(x0, y0+1)*(1-tx)+at(x0+1, y0+1)*tx)*ty
}
