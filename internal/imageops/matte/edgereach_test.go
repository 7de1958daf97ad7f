package matte

import (
	"image"
	"testing"

	"github.com/gengate/gengate/internal/imageops"
)

// TestEdgeReach checks which mask components edgeReach takes for
// background running out of the picture: on a two-colour picture (a dark
// wall, a bright region drawn where the component is), a component cut by
// the top or a side is vetoed where it has the colours of its contact; one
// that also reaches the bottom edge, one that does not reach an edge, and
// one that only grazes a side are not.
func TestEdgeReach(t *testing.T) {
	const w, h = 200, 160
	rect := func(x0, y0, x1, y1 int) []bool {
		m := make([]bool, w*h)
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				m[y*w+x] = true
			}
		}
		return m
	}
	union := func(a, b []bool) []bool {
		m := make([]bool, len(a))
		for i := range m {
			m[i] = a[i] || b[i]
		}
		return m
	}
	window := rect(40, 0, 160, 70)   // bright, runs out through the top
	statue := rect(90, 70, 120, 140) // grey, stands before it
	cases := []struct {
		name     string
		mask     []bool
		bright   []bool // drawn bright (the rest of the mask is grey)
		wantVeto []bool // nil: no veto
	}{
		{"window cut by the top, statue before it", union(window, statue), window, window},
		{"window alone", window, window, window},
		{"subject cut by the top and the bottom (a close-up)", rect(60, 0, 140, h), rect(60, 0, 140, 40), nil},
		{"object off the edges", rect(60, 40, 140, 120), rect(60, 40, 140, 120), nil},
		{"object grazing the right edge", union(rect(100, 40, 199, 120), rect(199, 78, 200, 82)), rect(100, 40, 200, 120), nil},
		{"wall cut by the left side", rect(0, 20, 80, 120), rect(0, 20, 80, 120), rect(0, 20, 80, 120)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := image.NewNRGBA(image.Rect(0, 0, w, h))
			for i := 0; i < w*h; i++ {
				v := [3]uint8{50, 45, 40}
				switch {
				case c.bright[i]:
					v = [3]uint8{230, 210, 120}
				case c.mask[i]:
					v = [3]uint8{160, 160, 165}
				}
				// a little texture so that the colour models have spread
				n := uint8((i*7919 + i/w*104729) % 7)
				img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = v[0]+n, v[1]+n, v[2]+n, 255
			}
			im := newWorkImage(img, defaultParams.workSide)
			veto := edgeReach(im, defaultParams, c.mask)
			if c.wantVeto == nil {
				if veto != nil && countSet(veto) > 0 {
					t.Fatalf("vetoed %d pixels, want none", countSet(veto))
				}
				return
			}
			if veto == nil {
				t.Fatal("no veto")
			}
			if iou := imageops.IoU(veto, c.wantVeto, nil); iou < 0.95 {
				t.Fatalf("veto IoU %.3f against the part running out, want ≥ 0.95", iou)
			}
		})
	}
}

func countSet(m []bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// TestEdgeReachKeepsCloseUps: a tight headshot (hair and hat cut by the
// top edge, shoulders by the sides and the bottom) gets the same mask with
// and without the edge-reach rule.
func TestEdgeReachKeepsCloseUps(t *testing.T) {
	spec := portraitSpec{Name: "headshot", W: 400, H: 400, Backdrop: "foliage", Skin: [3]float64{226, 182, 160},
		Hair: [3]float64{150, 90, 50}, Cloth: [3]float64{40, 50, 90}, Hat: [3]float64{190, 30, 40}, LongHair: true, Scale: 0.5}
	img, _ := drawPortrait(spec, 1)
	off := defaultParams
	off.edgeReach = 0
	_, a, err := run(img, defaultParams)
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := run(img, off)
	if err != nil {
		t.Fatal(err)
	}
	if iou := imageops.IoU(alphaMask(a), alphaMask(b), nil); iou < 0.99 {
		t.Fatalf("IoU %.3f between the masks with and without the rule, want ≥ 0.99", iou)
	}
}
