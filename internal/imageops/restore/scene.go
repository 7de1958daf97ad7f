package restore

import (
	"image"
	"math"
)

// scene draws a procedurally generated test picture: a sky-like vertical
// gradient, a ground band with value-noise texture, discs, a rectangle,
// stripes and a sinusoidal patch. It is synthetic on purpose: the
// evaluation data are research-licensed and never copied into the project.
func scene(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	hash := func(x, y int) float64 {
		v := uint32(x*374761393 + y*668265263)
		v = (v ^ (v >> 13)) * 1274126177
		return float64(v^(v>>16)) / float64(1<<32)
	}
	smooth := func(fx, fy float64) float64 { // value noise
		x0, y0 := int(math.Floor(fx)), int(math.Floor(fy))
		tx, ty := fx-float64(x0), fy-float64(y0)
		tx, ty = tx*tx*(3-2*tx), ty*ty*(3-2*ty)
		a := hash(x0, y0)*(1-tx) + hash(x0+1, y0)*tx
		b := hash(x0, y0+1)*(1-tx) + hash(x0+1, y0+1)*tx
		return a*(1-ty) + b*ty
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			u, v := float64(x)/float64(w), float64(y)/float64(h)
			// sky gradient
			r, g, b := 90+100*v, 140+80*v, 220-30*v
			if v > 0.6 { // textured ground
				t := 0.6*smooth(float64(x)/6, float64(y)/6) + 0.4*smooth(float64(x)/2.5, float64(y)/2.5)
				r, g, b = 50+110*t, 90+110*t, 40+110*t
			}
			// sun disc with soft edge
			if math.Hypot(float64(x)-0.78*float64(w), float64(y)-0.2*float64(h)) < 0.06*float64(w) {
				r, g, b = 250, 235, 170
			}
			// white cloud: union of three discs
			for _, c := range [][3]float64{{0.55, 0.15, 0.05}, {0.6, 0.12, 0.06}, {0.65, 0.16, 0.045}} {
				if math.Hypot(float64(x)-c[0]*float64(w), float64(y)-c[1]*float64(h)) < c[2]*float64(w) {
					r, g, b = 245, 245, 245
				}
			}
			// house: rectangle with stripes (siding) and a window
			if u > 0.12 && u < 0.42 && v > 0.38 && v < 0.7 {
				r, g, b = 180, 70, 60
				if (y/4)%2 == 0 {
					r, g, b = 160, 50, 40
				}
				if u > 0.2 && u < 0.3 && v > 0.45 && v < 0.58 {
					r, g, b = 40, 50, 70
				}
			}
			// roof triangle
			if v > 0.26 && v <= 0.38 && math.Abs(u-0.27) < (v-0.26)*1.6 {
				r, g, b = 80, 50, 45
			}
			// sinusoidal zone-plate patch
			if u > 0.55 && u < 0.9 && v > 0.45 && v < 0.85 {
				cx, cy := (u-0.725)*float64(w), (v-0.65)*float64(h)
				s := 0.5 + 0.5*math.Cos((cx*cx+cy*cy)/float64(w)*0.5)
				r, g, b = 60+150*s, 60+150*s, 70+140*s
			}
			// dark disc
			if math.Hypot(float64(x)-0.47*float64(w), float64(y)-0.85*float64(h)) < 0.05*float64(w) {
				r, g, b = 30, 30, 35
			}
			o := y*img.Stride + 4*x
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = clampByte(r), clampByte(g), clampByte(b), 255
		}
	}
	return img
}

// degrade lowers contrast around mid-grey (factor c), adds a colour cast
// (per-channel gains) and Gaussian noise sigma.
func degrade(img *image.NRGBA, c float64, gains [3]float64, sigma float64, seed uint64) *image.NRGBA {
	out := image.NewNRGBA(img.Rect)
	copy(out.Pix, img.Pix)
	for i := 0; i < len(out.Pix); i += 4 {
		for k := 0; k < 3; k++ {
			v := 128 + c*(float64(out.Pix[i+k])-128)
			out.Pix[i+k] = clampByte(v * gains[k])
		}
	}
	if sigma > 0 {
		return AddNoise(out, sigma, seed)
	}
	return out
}
