package restore

import (
	"errors"
	"image"

	"github.com/gengate/gengate/internal/imageops"
)

// ErrEmpty is returned for an image with no pixels.
var ErrEmpty = errors.New("restore: empty image")

// Denoise removes additive white Gaussian noise of standard deviation
// sigma (0..255 scale) with colour BM3D (hard-thresholding step then
// Wiener step, in an opponent colour space). sigma <= 0 returns a copy.
// Alpha is kept.
func Denoise(img image.Image, sigma float64) (*image.NRGBA, error) {
	if img == nil || img.Bounds().Empty() {
		return nil, ErrEmpty
	}
	m := imageops.FromImage(img)
	if sigma > 0 {
		denoiseRGB(m, sigma)
	}
	return withAlpha(m.NRGBA(), img), nil
}

// denoiseRGB runs BM3D on m in place, padding images under 8×8.
func denoiseRGB(m *imageops.RGB, sigma float64) {
	if m.W >= 8 && m.H >= 8 {
		bm3dRGB(m.R, m.G, m.B, m.W, m.H, sigma)
		return
	}
	pw, ph := max(m.W, 8), max(m.H, 8)
	p := imageops.NewRGB(pw, ph)
	for y := 0; y < ph; y++ {
		for x := 0; x < pw; x++ {
			s := min(y, m.H-1)*m.W + min(x, m.W-1)
			d := y*pw + x
			p.R[d], p.G[d], p.B[d] = m.R[s], m.G[s], m.B[s]
		}
	}
	bm3dRGB(p.R, p.G, p.B, pw, ph, sigma)
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			s, d := y*pw+x, y*m.W+x
			m.R[d], m.G[d], m.B[d] = p.R[s], p.G[s], p.B[s]
		}
	}
}

// withAlpha copies the alpha channel of src (un-premultiplied) into out.
func withAlpha(out *image.NRGBA, src image.Image) *image.NRGBA {
	b := src.Bounds()
	if n, ok := src.(*image.NRGBA); ok {
		for y := 0; y < b.Dy(); y++ {
			row := n.Pix[(y)*n.Stride:]
			for x := 0; x < b.Dx(); x++ {
				out.Pix[y*out.Stride+4*x+3] = row[4*x+3]
			}
		}
		return out
	}
	if _, ok := src.(interface{ Opaque() bool }); ok && src.(interface{ Opaque() bool }).Opaque() {
		return out
	}
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			_, _, _, a := src.At(b.Min.X+x, b.Min.Y+y).RGBA()
			out.Pix[y*out.Stride+4*x+3] = uint8(a >> 8)
		}
	}
	return out
}
