package matte

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// TestGroundShadow: on procedurally built outdoor scenes (sunlit textured
// ground), a car's flat shadow on the road, joined to the car's underside
// and kept in the mask, is dropped, while the car stays; a figure's dark
// upright legs, which also end on the ground, stay.
func TestGroundShadow(t *testing.T) {
	const w, h = 240, 160
	type rect struct{ x0, y0, x1, y1 int }
	in := func(r rect, x, y int) bool { return x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1 }
	ground := func(x, y int) color.NRGBA {
		fx, fy := float64(x), float64(y)
		v := 10*math.Sin(fx*0.41)*math.Sin(fy*0.33) + 6*math.Sin((fx+3*fy)*0.13)
		return color.NRGBA{uint8(150 + v), uint8(140 + v), uint8(125 + v), 255}
	}
	scene := func(parts []rect, cols []func(c color.NRGBA) color.NRGBA) (*workImage, []bool) {
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		mask := make([]bool, w*h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := ground(x, y)
				for k, r := range parts {
					if in(r, x, y) {
						c = cols[k](c)
						mask[y*w+x] = true
					}
				}
				img.SetNRGBA(x, y, c)
			}
		}
		return newWorkImage(img, defaultParams.workSide), mask
	}
	white := func(c color.NRGBA) color.NRGBA { return color.NRGBA{c.R/8 + 215, c.G/8 + 215, c.B/8 + 218, 255} }
	red := func(c color.NRGBA) color.NRGBA { return color.NRGBA{c.R/8 + 190, 30, 35, 255} }
	shade := func(c color.NRGBA) color.NRGBA { // the ground at 45 %, a little bluer
		return color.NRGBA{uint8(float64(c.R) * 0.42), uint8(float64(c.G) * 0.45), uint8(float64(c.B) * 0.52), 255}
	}
	dark := func(c color.NRGBA) color.NRGBA { return color.NRGBA{c.R/10 + 40, c.G/10 + 40, c.B/10 + 45, 255} }

	t.Run("a car's shadow on the road", func(t *testing.T) {
		car, stripe, shadow := rect{80, 50, 170, 105}, rect{80, 70, 170, 80}, rect{40, 105, 175, 125}
		im, m := scene([]rect{car, stripe, shadow}, []func(color.NRGBA) color.NRGBA{white, red, shade})
		groundShadow(im, m, defaultParams.comps)
		if m[115*w+100] || m[115*w+50] {
			t.Error("the shadow under the car was kept")
		}
		if !m[60*w+120] || !m[100*w+120] || !m[75*w+120] {
			t.Error("the car lost its pixels")
		}
	})
	t.Run("a figure's dark legs", func(t *testing.T) {
		body, leg1, leg2 := rect{90, 30, 150, 90}, rect{95, 90, 115, 140}, rect{125, 90, 145, 140}
		im, m := scene([]rect{body, leg1, leg2}, []func(color.NRGBA) color.NRGBA{red, dark, dark})
		groundShadow(im, m, defaultParams.comps)
		if !m[130*w+105] || !m[130*w+135] || !m[60*w+120] {
			t.Error("the figure lost its legs or body")
		}
	})
}
