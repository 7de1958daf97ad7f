package inpaint

import (
	"errors"
	"image"
	"image/color"
)

// MaskFrom turns a user-supplied mask into a hole mask (255 = remove,
// 0 = keep) of the same size, with its origin at (0, 0). Thresholds are
// at 50 %.
//
// Three conventions are recognised:
//   - an opaque image is a luminance mask: bright pixels (white on black)
//     are removed;
//   - an image with transparency whose visible pixels are all white or
//     light grey is a mask painted on a transparent layer (as the DeepFill
//     examples are): the painted, opaque pixels are removed;
//   - any other image with transparency is an alpha mask, the convention
//     of editors and of image-edit APIs (OpenAI /images/edits: "fully
//     transparent areas indicate where the image should be edited"): the
//     transparent pixels are removed.
func MaskFrom(img image.Image) (*image.Gray, error) {
	if img == nil {
		return nil, errors.New("inpaint: nil mask")
	}
	b := img.Bounds()
	if b.Empty() {
		return nil, errors.New("inpaint: empty mask")
	}
	out := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	hasAlpha := false
	opaque, painted := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.A != 255 {
				hasAlpha = true
			}
			if c.A >= 128 {
				opaque++
				lo, hi := min(c.R, c.G, c.B), max(c.R, c.G, c.B)
				if lo >= 128 && hi-lo < 32 {
					painted++
				}
			}
		}
	}
	// mode: 0 luminance, 1 painted on transparent, 2 alpha
	mode := 0
	if hasAlpha {
		mode = 2
		if opaque > 0 && painted*100 >= opaque*99 {
			mode = 1
		}
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			var hole bool
			switch mode {
			case 0:
				hole = color.GrayModel.Convert(c).(color.Gray).Y >= 128
			case 1:
				hole = c.A >= 128 && color.GrayModel.Convert(c).(color.Gray).Y >= 128
			default:
				hole = c.A < 128
			}
			if hole {
				out.Pix[(y-b.Min.Y)*out.Stride+(x-b.Min.X)] = 255
			}
		}
	}
	return out, nil
}

// holeBits reads a hole mask (any value ≥ 128 = hole) into a bool slice of
// w×h, the mask's origin mapped to (0, 0).
func holeBits(m *image.Gray) []bool {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	out := make([]bool, w*h)
	for y := 0; y < h; y++ {
		row := m.Pix[y*m.Stride:]
		for x := 0; x < w; x++ {
			out[y*w+x] = row[x] >= 128
		}
	}
	return out
}

// dilate grows a mask by r pixels (square structuring element).
func dilate(m []bool, w, h, r int) []bool {
	if r <= 0 {
		return append([]bool(nil), m...)
	}
	tmp := make([]bool, len(m))
	for y := 0; y < h; y++ {
		// horizontal pass with a running count
		cnt := 0
		row := m[y*w : y*w+w]
		for x := 0; x < r && x < w; x++ {
			if row[x] {
				cnt++
			}
		}
		for x := 0; x < w; x++ {
			if x+r < w && row[x+r] {
				cnt++
			}
			if x-r-1 >= 0 && row[x-r-1] {
				cnt--
			}
			tmp[y*w+x] = cnt > 0
		}
	}
	out := make([]bool, len(m))
	for x := 0; x < w; x++ {
		cnt := 0
		for y := 0; y < r && y < h; y++ {
			if tmp[y*w+x] {
				cnt++
			}
		}
		for y := 0; y < h; y++ {
			if y+r < h && tmp[(y+r)*w+x] {
				cnt++
			}
			if y-r-1 >= 0 && tmp[(y-r-1)*w+x] {
				cnt--
			}
			out[y*w+x] = cnt > 0
		}
	}
	return out
}

// distToKnown is the chamfer (3-4) distance, in pixels, from every hole
// pixel to the nearest known pixel (0 outside the hole).
func distToKnown(hole []bool, w, h int) []float32 {
	const inf = 1 << 30
	d := make([]int32, w*h)
	for i, v := range hole {
		if v {
			d[i] = inf
		}
	}
	at := func(x, y int) int32 {
		if x < 0 || y < 0 || x >= w || y >= h {
			return inf // the image border is not a known pixel
		}
		return d[y*w+x]
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if d[i] == 0 {
				continue
			}
			v := d[i]
			v = min(v, at(x-1, y)+3, at(x, y-1)+3, at(x-1, y-1)+4, at(x+1, y-1)+4)
			d[i] = v
		}
	}
	for y := h - 1; y >= 0; y-- {
		for x := w - 1; x >= 0; x-- {
			i := y*w + x
			if d[i] == 0 {
				continue
			}
			v := d[i]
			v = min(v, at(x+1, y)+3, at(x, y+1)+3, at(x+1, y+1)+4, at(x-1, y+1)+4)
			d[i] = v
		}
	}
	out := make([]float32, w*h)
	for i, v := range d {
		out[i] = float32(v) / 3
	}
	return out
}
