package matte

import (
	"image"
	"image/color"
	"math"
)

// productShot procedurally draws a w×h "product photo": a shaded object (a
// rounded bottle-like shape made of a disc body and a neck) with a soft
// drop shadow on a vertical gradient backdrop with fine texture. It
// returns the image and the true object mask. cx, cy place the object
// centre as fractions of the size; size scales it (fraction of the shorter
// side); textured adds a woven pattern to the backdrop; shadow is the
// drop shadow's darkening (0..1, 0 = none).
func productShot(w, h int, cx, cy, size float64, textured bool, shadow float64) (*image.NRGBA, []bool) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	mask := make([]bool, w*h)
	s := size * float64(min(w, h))
	ox, oy := cx*float64(w), cy*float64(h)
	rBody := 0.5 * s
	neckW, neckH := 0.16*s, 0.55*s
	inside := func(x, y float64) bool {
		dx, dy := x-ox, y-oy
		if dx*dx+dy*dy <= rBody*rBody {
			return true
		}
		// neck: rounded rectangle above the body
		if math.Abs(dx) <= neckW && dy <= 0 && dy >= -(rBody+neckH) {
			return true
		}
		// cap
		cdx, cdy := dx, dy+rBody+neckH
		return cdx*cdx+cdy*cdy <= (neckW*1.3)*(neckW*1.3)
	}
	shadowDX, shadowDY := 0.12*s, 0.08*s
	parallel(h, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			for x := 0; x < w; x++ {
				fx, fy := float64(x)+0.5, float64(y)+0.5
				t := fy / float64(h)
				// backdrop: warm light grey to darker, with texture
				r := 236 - 40*t
				g := 232 - 42*t
				b := 226 - 46*t
				if textured {
					v := 6 * math.Sin(fx*0.9) * math.Sin(fy*0.9)
					v += 4 * math.Sin((fx+fy)*0.21)
					r, g, b = r+v, g+v, b+v
				}
				// soft shadow: distance falloff from the shifted shape ellipse
				sdx, sdy := (fx-ox-shadowDX)/(rBody*1.05), (fy-oy-shadowDY)/(rBody*0.95)
				d := math.Sqrt(sdx*sdx + sdy*sdy)
				sh := shadow * (1 - smooth(0.7, 1.3, d))
				r, g, b = r*(1-sh), g*(1-sh), b*(1-sh)
				// object with anti-aliased edge (supersample 2×2)
				cov := 0.0
				for _, o := range [4][2]float64{{-.25, -.25}, {.25, -.25}, {-.25, .25}, {.25, .25}} {
					if inside(fx+o[0], fy+o[1]) {
						cov += 0.25
					}
				}
				if cov > 0 {
					// shading: lambert on a sphere-like normal from the body centre
					nx, ny := (fx-ox)/rBody, (fy-oy)/rBody
					nz := 1 - nx*nx - ny*ny
					if nz < 0 {
						nz = 0
					}
					l := 0.35 + 0.65*math.Max(0, (-0.4*nx-0.5*ny+0.77*math.Sqrt(nz)))
					or, og, ob := 30+150*l, 70+120*l, 140+110*l
					// specular highlight
					hx, hy := nx+0.35, ny+0.4
					spec := 120 * math.Exp(-(hx*hx+hy*hy)/0.02)
					or, og, ob = or+spec, og+spec, ob+spec
					r = r*(1-cov) + or*cov
					g = g*(1-cov) + og*cov
					b = b*(1-cov) + ob*cov
				}
				mask[y*w+x] = cov >= 0.5
				o := y*img.Stride + 4*x
				img.Pix[o] = clampU8(float32(r))
				img.Pix[o+1] = clampU8(float32(g))
				img.Pix[o+2] = clampU8(float32(b))
				img.Pix[o+3] = 255
			}
		}
	})
	return img, mask
}

func smooth(e0, e1, x float64) float64 {
	t := (x - e0) / (e1 - e0)
	if t < 0 {
		t = 0
	}
	if t > 1 {
		t = 1
	}
	return t * t * (3 - 2*t)
}

// checkerboard composites a cut-out (NRGBA with alpha) over a grey
// checkerboard, the usual way transparency is shown.
func checkerboard(cut *image.NRGBA) *image.NRGBA {
	b := cut.Rect
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	cell := max(8, min(b.Dx(), b.Dy())/32)
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			bg := 204.0
			if (x/cell+y/cell)%2 == 1 {
				bg = 153
			}
			c := cut.NRGBAAt(b.Min.X+x, b.Min.Y+y)
			a := float64(c.A) / 255
			out.SetNRGBA(x, y, color.NRGBA{
				uint8(float64(c.R)*a + bg*(1-a) + 0.5),
				uint8(float64(c.G)*a + bg*(1-a) + 0.5),
				uint8(float64(c.B)*a + bg*(1-a) + 0.5), 255})
		}
	}
	return out
}
