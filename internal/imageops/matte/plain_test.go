package matte

import (
	"image"
	"math"
	"slices"
	"testing"

	"github.com/gengate/gengate/internal/imageops"
)

// figure draws a w×h generated "object photo" for studioComposite: a
// shaded grey stone-like figure (a disc body, a narrower head and two
// arms) with carved texture, on a background that studioComposite
// replaces. bust extends the body to the bottom edge, as a portrait is
// cut by the frame. It returns the image and the object mask.
func figure(w, h int, bust bool, grey float64) (*image.NRGBA, []bool) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	fg := make([]bool, w*h)
	cx, cy := float64(w)/2, float64(h)*0.55
	r := 0.28 * float64(min(w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			dx, dy := fx-cx, fy-cy
			in := dx*dx+dy*dy <= r*r
			hx, hy := dx, fy-(cy-1.25*r)
			in = in || hx*hx+hy*hy <= 0.45*r*0.45*r
			in = in || (math.Abs(dy+0.2*r) < 0.12*r && math.Abs(dx) < 1.45*r)
			if bust {
				in = in || (fy > cy && math.Abs(dx) < 0.9*r)
			}
			o := y*img.Stride + 4*x
			v := 40.0 // old background, replaced
			if in {
				fg[y*w+x] = true
				// shading from the upper left and carved grooves
				v = grey * (0.85 + 0.15*(-dx-dy)/(2*r))
				v += 10 * math.Sin(fx*0.35) * math.Sin(fy*0.23)
			}
			for c := 0; c < 3; c++ {
				img.Pix[o+c] = uint8(math.Max(0, math.Min(255, v)))
			}
			img.Pix[o+3] = 255
		}
	}
	return img, fg
}

// TestPlainBackdrops: objects on every studio backdrop, with a soft drop
// shadow, including a bust cut by the frame and achromatic objects on
// backdrops of nearly their own hue (which a shadow test alone would take
// whole for shadow: without needCaster the grey figure on white scores 0).
// Where the object is as dark as its own contact shadow (a mid-grey
// figure on white or light grey paper) the two cannot be told apart by
// colour and the shadow stays with the object: the bar there is that the
// object is kept (IoU ≥ 0.85), not that its shadow is removed.
func TestPlainBackdrops(t *testing.T) {
	cases := []struct {
		name      string
		bust      bool
		grey      float64
		backdrops []string
		min       float64
	}{
		{"dark figure", false, 70, []string{"white", "light grey", "charcoal", "pastel blue"}, 0.95},
		{"dark bust", true, 70, []string{"white", "light grey", "pastel blue"}, 0.95},
		{"grey figure", false, 150, []string{"charcoal", "pastel blue"}, 0.95},
		{"grey bust", true, 150, []string{"charcoal", "pastel blue"}, 0.95},
		{"light figure", false, 200, []string{"charcoal", "pastel blue"}, 0.95},
		{"grey figure", false, 150, []string{"white", "light grey"}, 0.85},
		{"grey bust", true, 150, []string{"white", "light grey"}, 0.85},
	}
	for _, c := range cases {
		src, fg := figure(420, 360, c.bust, c.grey)
		for bi, bd := range studioBackdrops {
			if !slices.Contains(c.backdrops, bd.Name) {
				continue
			}
			t.Run(c.name+" on "+bd.Name, func(t *testing.T) {
				comp, want, ign := studioComposite(src, fg, make([]bool, len(fg)), 420, 360, bd, uint64(bi)+1)
				a, err := Matte(comp)
				if err != nil {
					t.Fatal(err)
				}
				if got := imageops.IoU(alphaMask(a), want, ign); got < c.min {
					t.Fatalf("IoU = %.4f, want >= %.2f", got, c.min)
				} else {
					t.Logf("IoU = %.4f", got)
				}
			})
		}
	}
}

// TestPlainGate: the plain mode is taken for a studio backdrop and left
// for a textured one (wood-like grain), whose shadows and texture the
// saliency path handles better.
func TestPlainGate(t *testing.T) {
	src, fg := figure(420, 360, false, 150)
	comp, _, _ := studioComposite(src, fg, make([]bool, len(fg)), 420, 360, studioBackdrops[0], 1)
	im := newWorkImage(comp, defaultParams.workSide)
	if analysePlain(im, frameMask(im.w, im.h, defaultParams.frame)) == nil {
		t.Error("studio backdrop not taken as plain")
	}
	wood := image.NewNRGBA(comp.Rect)
	copy(wood.Pix, comp.Pix)
	b := wood.Rect
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			o := y*wood.Stride + 4*x
			g := 14 * math.Sin(float64(y)*0.3+4*math.Sin(float64(x)*0.02))
			for c := 0; c < 3; c++ {
				wood.Pix[o+c] = uint8(math.Max(0, math.Min(255, float64(wood.Pix[o+c])+g)))
			}
		}
	}
	im = newWorkImage(wood, defaultParams.workSide)
	if analysePlain(im, frameMask(im.w, im.h, defaultParams.frame)) != nil {
		t.Error("wood-grain backdrop taken as plain")
	}
}
