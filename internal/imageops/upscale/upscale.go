package upscale

import (
	"errors"
	"fmt"
	"image"
	"image/draw"
)

// MaxOutputPixels bounds the output size Upscale accepts (memory: about
// 40 bytes per output pixel while working).
const MaxOutputPixels = 100 << 20

// Upscale enlarges src by an integer factor scale (2, 3 or 4) and returns a
// (W·scale)×(H·scale) image. Colour is reconstructed by regularised
// back-projection against a bicubic degradation model (see the package
// documentation); a non-opaque alpha channel is enlarged with plain
// Lanczos-4 and carried over, colour being processed premultiplied.
func Upscale(src image.Image, scale int) (*image.NRGBA, error) {
	return upscale(src, scale, true)
}

// lanczos is the baseline: Lanczos-4 interpolation of every channel.
func lanczos(src image.Image, scale int) (*image.NRGBA, error) {
	return upscale(src, scale, false)
}

func upscale(src image.Image, scale int, sr bool) (*image.NRGBA, error) {
	if scale < 2 || scale > 4 {
		return nil, fmt.Errorf("upscale: scale %d not supported (2, 3 or 4)", scale)
	}
	if src == nil {
		return nil, errors.New("upscale: nil image")
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil, errors.New("upscale: empty image")
	}
	if int64(w)*int64(h)*int64(scale*scale) > MaxOutputPixels {
		return nil, fmt.Errorf("upscale: %dx%d x%d exceeds %d output pixels", w, h, scale, MaxOutputPixels)
	}
	gray := false
	switch src.(type) {
	case *image.Gray, *image.Gray16:
		gray = true
	}
	nch := 3
	if gray {
		nch = 1
	}
	ch, alpha, opaque := planes(src, nch)

	// Colour goes to Y (BT.601 weights) and two colour differences; the
	// back-projection works on Y, the differences get Lanczos-4.
	if !gray {
		parallel(h, func(lo, hi int) {
			for i := lo * w; i < hi*w; i++ {
				r, g, b := ch[0].p[i], ch[1].p[i], ch[2].p[i]
				y := 0.299*r + 0.587*g + 0.114*b
				ch[0].p[i], ch[1].p[i], ch[2].p[i] = y, b-y, r-y
			}
		})
	}
	ylr := ch[0]
	sigma := noiseSigma(ylr)
	pl := newPlan(w, h, scale, epsFor(sigma))
	defer pl.ar.release()
	out := make([]*plane, nch)
	for c := range ch {
		if sr && c == 0 {
			out[c] = pl.linear(ch[c])
		} else {
			out[c] = pl.up(ch[c])
		}
	}
	if sr {
		iters := 2
		if w*h*scale*scale > bigOutput {
			iters = 1
		}
		if sigma > iterOff {
			iters = 0
		}
		pl.refine(out[0], ylr, iters)
	}
	var aup *plane
	if !opaque {
		aup = pl.up(alpha)
	}
	img := toNRGBA(out, aup)
	pl.ar.put(out...)
	pl.ar.put(aup)
	return img, nil
}

// toNRGBA packs planes (1 = grey; 3 = Y, B−Y, R−Y), premultiplied by a
// when a != nil, into an 8-bit image.
func toNRGBA(ch []*plane, a *plane) *image.NRGBA {
	W, H := ch[0].w, ch[0].h
	img := image.NewNRGBA(image.Rect(0, 0, W, H))
	parallel(H, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			row := img.Pix[y*img.Stride : y*img.Stride+4*W]
			for x := 0; x < W; x++ {
				i := y*W + x
				yv := ch[0].p[i]
				r, g, b := yv, yv, yv
				if len(ch) == 3 {
					b = yv + ch[1].p[i]
					r = yv + ch[2].p[i]
					g = (yv - 0.299*r - 0.114*b) / 0.587
				}
				av := uint8(255)
				if a != nil {
					av = clamp8(a.p[i])
					if av == 0 {
						r, g, b = 0, 0, 0
					} else {
						k := 255 / float32(av)
						r, g, b = r*k, g*k, b*k
					}
				}
				row[4*x] = clamp8(r)
				row[4*x+1] = clamp8(g)
				row[4*x+2] = clamp8(b)
				row[4*x+3] = av
			}
		}
	})
	return img
}

func clamp8(v float32) uint8 {
	if v <= 0 || v != v {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v + 0.5)
}

// planes splits src into nch colour planes, premultiplied by alpha, and the
// alpha plane; opaque reports alpha == 255 everywhere.
func planes(src image.Image, nch int) (ch []*plane, alpha *plane, opaque bool) {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	ch = make([]*plane, nch)
	for c := range ch {
		ch[c] = newPlane(w, h)
	}
	alpha = newPlane(w, h)
	var pix []uint8
	stride := 0
	premul := false
	if m, ok := src.(*image.NRGBA); ok {
		pix, stride = m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], m.Stride
	} else {
		// draw has fast paths into RGBA (YCbCr, Gray, RGBA, NRGBA, ...).
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.Draw(m, m.Rect, src, b.Min, draw.Src)
		pix, stride, premul = m.Pix, m.Stride, true
	}
	opaqueRows := make([]bool, h)
	parallel(h, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			row := pix[y*stride:]
			op := true
			for x := 0; x < w; x++ {
				i := y*w + x
				a := row[4*x+3]
				alpha.p[i] = float32(a)
				k := float32(1)
				if a != 255 {
					op = false
					if !premul {
						k = float32(a) / 255
					}
				}
				for c := range ch {
					ch[c].p[i] = k * float32(row[4*x+c])
				}
			}
			opaqueRows[y] = op
		}
	})
	opaque = true
	for _, op := range opaqueRows {
		opaque = opaque && op
	}
	return ch, alpha, opaque
}
