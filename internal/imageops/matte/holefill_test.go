package matte

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// TestSolidHoles: on a procedurally built scene (two objects on a
// textured blue-green ground), a pocket of the first object in dark
// colours the surroundings do not have (a cockpit under a wing) is filled,
// while the second object's see-through hole, which shows the ground, and
// the ground around both stay background.
func TestSolidHoles(t *testing.T) {
	const w, h = 240, 160
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	mask := make([]bool, w*h)
	type rect struct{ x0, y0, x1, y1 int }
	in := func(r rect, x, y int) bool { return x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1 }
	car, pocket := rect{30, 40, 110, 120}, rect{50, 60, 90, 100}
	ring, hole := rect{140, 40, 220, 120}, rect{160, 60, 200, 100}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x), float64(y)
			v := 12*math.Sin(fx*0.37)*math.Sin(fy*0.29) + 8*math.Sin((fx+2*fy)*0.11)
			c := color.NRGBA{uint8(40 + v), uint8(120 + v), uint8(150 - v), 255} // ground
			switch {
			case in(car, x, y) && in(pocket, x, y):
				c = color.NRGBA{uint8(70 + v/2), uint8(25 + v/4), uint8(20), 255} // dark red cockpit
				mask[y*w+x] = false
			case in(car, x, y):
				c = color.NRGBA{uint8(235 + v/2), uint8(232 + v/2), uint8(225 + v/2), 255}
				mask[y*w+x] = true
			case in(ring, x, y) && !in(hole, x, y):
				c = color.NRGBA{uint8(225 + v/2), uint8(190 + v/2), uint8(40), 255}
				mask[y*w+x] = true
			}
			img.SetNRGBA(x, y, c)
		}
	}
	im := newWorkImage(img, defaultParams.workSide)
	solidHoles(im, mask, defaultParams.comps)
	at := func(x, y int) bool { return mask[y*w+x] }
	if !at(70, 80) {
		t.Error("the dark pocket of the first object was not filled")
	}
	if at(180, 80) {
		t.Error("the see-through hole of the ring, showing the ground, was filled")
	}
	if at(5, 5) || at(125, 80) {
		t.Error("the ground around the objects became foreground")
	}
	if !at(35, 45) || !at(145, 45) {
		t.Error("an object lost its pixels")
	}
}
