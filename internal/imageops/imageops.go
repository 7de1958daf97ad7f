// Package imageops holds what the built-in CPU image operations share: a
// float RGB image type, conversions to and from image.Image, connected
// regions of a mask (Components), and the quality metrics (PSNR, SSIM,
// IoU) their evaluation reports. The operations themselves live in one
// subpackage each (upscale, matte, inpaint, restore);
// internal/engine/builtin serves them as an engine.
package imageops

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"os"

	_ "image/jpeg" // decoders for Load
	_ "image/png"
)

// RGB is a colour image as three float32 planes in 0..255, row-major.
type RGB struct {
	W, H    int
	R, G, B []float32
}

// NewRGB returns a black w×h image.
func NewRGB(w, h int) *RGB {
	n := w * h
	return &RGB{W: w, H: h, R: make([]float32, n), G: make([]float32, n), B: make([]float32, n)}
}

// FromImage converts any image to RGB, dropping alpha (composited on
// nothing: colour values are taken un-premultiplied).
func FromImage(img image.Image) *RGB {
	b := img.Bounds()
	out := NewRGB(b.Dx(), b.Dy())
	nrgba, ok := img.(*image.NRGBA)
	if !ok {
		nrgba = image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(nrgba, nrgba.Bounds(), img, b.Min, draw.Src)
	}
	for y := 0; y < out.H; y++ {
		row := nrgba.Pix[y*nrgba.Stride:]
		for x := 0; x < out.W; x++ {
			i := y*out.W + x
			out.R[i] = float32(row[4*x])
			out.G[i] = float32(row[4*x+1])
			out.B[i] = float32(row[4*x+2])
		}
	}
	return out
}

// NRGBA converts back to an opaque 8-bit image, rounding and clamping.
func (m *RGB) NRGBA() *image.NRGBA {
	out := image.NewNRGBA(image.Rect(0, 0, m.W, m.H))
	for i := 0; i < m.W*m.H; i++ {
		out.Pix[4*i] = Clamp8(m.R[i])
		out.Pix[4*i+1] = Clamp8(m.G[i])
		out.Pix[4*i+2] = Clamp8(m.B[i])
		out.Pix[4*i+3] = 255
	}
	return out
}

// Clamp8 rounds v to the nearest byte value.
func Clamp8(v float32) uint8 {
	if v <= 0 || v != v {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v + 0.5)
}

// Load decodes a PNG or JPEG file (for evaluation and tests).
func Load(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// Luma returns the ITU-R BT.601 studio-range luma plane used by the
// super-resolution protocol: Y = 16 + (65.481 R + 128.553 G + 24.966 B)/255.
func Luma(img image.Image) []float64 {
	m := FromImage(img)
	y := make([]float64, m.W*m.H)
	for i := range y {
		y[i] = 16 + (65.481*float64(m.R[i])+128.553*float64(m.G[i])+24.966*float64(m.B[i]))/255
	}
	return y
}

// Gray returns the plain average-free grey plane 0.299R+0.587G+0.114B.
func Gray(img image.Image) []float64 {
	m := FromImage(img)
	y := make([]float64, m.W*m.H)
	for i := range y {
		y[i] = 0.299*float64(m.R[i]) + 0.587*float64(m.G[i]) + 0.114*float64(m.B[i])
	}
	return y
}

// PSNR is the peak signal-to-noise ratio (peak 255) between two planes of
// the same w×h size, with shave pixels left out at every border.
func PSNR(a, b []float64, w, h, shave int) float64 {
	var sum float64
	n := 0
	for y := shave; y < h-shave; y++ {
		for x := shave; x < w-shave; x++ {
			d := a[y*w+x] - b[y*w+x]
			sum += d * d
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	if sum == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(sum/float64(n)))
}

// PSNRRGB is the PSNR over all three colour channels of two images of the
// same size.
func PSNRRGB(a, b image.Image) float64 {
	ma, mb := FromImage(a), FromImage(b)
	if ma.W != mb.W || ma.H != mb.H {
		return math.NaN()
	}
	var sum float64
	for i := range ma.R {
		for _, d := range [3]float64{float64(ma.R[i] - mb.R[i]), float64(ma.G[i] - mb.G[i]), float64(ma.B[i] - mb.B[i])} {
			d = math.Round(d) // compare 8-bit values
			sum += d * d
		}
	}
	if sum == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(sum/float64(3*len(ma.R))))
}

// SSIM is Wang et al. 2004 structural similarity on one plane: 11×11
// Gaussian window (sigma 1.5), K1 0.01, K2 0.03, peak 255, borders shaved.
func SSIM(a, b []float64, w, h, shave int) float64 {
	const r = 5
	var g [2*r + 1]float64
	var gs float64
	for i := -r; i <= r; i++ {
		g[i+r] = math.Exp(-float64(i*i) / (2 * 1.5 * 1.5))
		gs += g[i+r]
	}
	for i := range g {
		g[i] /= gs
	}
	c1, c2 := math.Pow(0.01*255, 2), math.Pow(0.03*255, 2)
	var sum float64
	n := 0
	for y := shave + r; y < h-shave-r; y++ {
		for x := shave + r; x < w-shave-r; x++ {
			var ma, mb, saa, sbb, sab float64
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					wt := g[dy+r] * g[dx+r]
					va, vb := a[(y+dy)*w+x+dx], b[(y+dy)*w+x+dx]
					ma += wt * va
					mb += wt * vb
					saa += wt * va * va
					sbb += wt * vb * vb
					sab += wt * va * vb
				}
			}
			saa -= ma * ma
			sbb -= mb * mb
			sab -= ma * mb
			sum += ((2*ma*mb + c1) * (2*sab + c2)) / ((ma*ma + mb*mb + c1) * (saa + sbb + c2))
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// IoU is the intersection over union of two binary masks (true =
// foreground); ignore, when not nil, marks pixels left out of the count.
func IoU(got, want, ignore []bool) float64 {
	var inter, union int
	for i := range got {
		if ignore != nil && ignore[i] {
			continue
		}
		if got[i] && want[i] {
			inter++
		}
		if got[i] || want[i] {
			union++
		}
	}
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// Result is one line of an evaluation table (gengate eval builtin).
type Result struct {
	Model  string  // catalog model id: "image-upscaler", ...
	Metric string  // "Set5 PSNR-Y x2", ...
	Value  float64 // what gengate measured
	Unit   string  // "dB", "IoU", "s/MP", ...
	Peer   string  // the peer's figure here, as text ("Lanczos 34.45")
	Target string  // the target, as text ("≥ 35.3")
	Pass   bool    // Value meets Target
}

// Opaque reports whether every pixel of img is fully opaque.
func Opaque(img image.Image) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0xffff {
				return false
			}
		}
	}
	return true
}

var _ color.Color = color.NRGBA{}
