package matte

import (
	"testing"
)

// TestPortraits: procedural people (portrait.go) are kept whole: hat,
// hair, eyes, red lips, neck, the clothes cut by the bottom edge and the
// hands, with no background hole enclosed by the cut-out. Before
// cutframe.go every portrait kept the head only (IoU 0.11-0.28).
func TestPortraits(t *testing.T) {
	res, err := scorePortraits(defaultParams)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(portraitSet) {
		t.Fatalf("scored %d portraits, want %d", len(res), len(portraitSet))
	}
	for _, r := range res {
		t.Run(r.Name, func(t *testing.T) {
			t.Logf("IoU %.3f, %d enclosed hole pixels, kept %v", r.IoU, r.Holes, r.Kept)
			if r.IoU < 0.95 {
				t.Errorf("IoU %.3f < 0.95", r.IoU)
			}
			if r.Holes != 0 {
				t.Errorf("%d background pixels enclosed by the cut-out", r.Holes)
			}
			for k, v := range r.Kept {
				if v >= 0 && v < 0.9 {
					t.Errorf("%s: %.2f of its pixels kept, want ≥ 0.9", portraitPartNames[k], v)
				}
			}
		})
	}
}

// TestPortraitParts checks the generator itself: every part is visible in
// every portrait that has it, and the parts do not overlap.
func TestPortraitParts(t *testing.T) {
	for i, s := range portraitSet {
		_, parts := drawPortrait(s, uint64(i)+1)
		for k, m := range parts {
			n := 0
			for _, v := range m {
				if v {
					n++
				}
			}
			hasHat := s.Hat != [3]float64{}
			if n == 0 && (portraitPart(k) != partHat || hasHat) {
				t.Errorf("%s: part %s not visible", s.Name, portraitPartNames[k])
			}
			if n > 0 && portraitPart(k) == partHat && !hasHat {
				t.Errorf("%s: hat drawn but none asked for", s.Name)
			}
		}
		for j := range parts[0] {
			c := 0
			for k := range parts {
				if parts[k][j] {
					c++
				}
			}
			if c > 1 {
				t.Fatalf("%s: pixel %d in %d parts", s.Name, j, c)
			}
		}
	}
}

// TestCleanMaskFillsEnclosedHoles: a hole inside the subject (lips, eyes)
// is filled; a notch open to the border is not.
func TestCleanMaskFillsEnclosedHoles(t *testing.T) {
	const w, h = 40, 30
	m := make([]bool, w*h)
	for y := 5; y < 30; y++ { // subject running out at the bottom
		for x := 10; x < 30; x++ {
			m[y*w+x] = true
		}
	}
	hole := func(x0, y0, x1, y1 int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				m[y*w+x] = false
			}
		}
	}
	hole(15, 10, 18, 12) // an eye
	hole(20, 20, 24, 22) // lips
	hole(26, 25, 30, 30) // a notch open to the bottom edge
	hole(11, 14, 15, 24) // a gap between an arm and the body: 40 px, 9 % of the subject
	cleanMask(m, w, h, defaultParams.keepFrac, defaultParams.holeFrac)
	if n := enclosedHoles(m, w, h); n != 40 {
		t.Fatalf("%d enclosed hole pixels left, want 40 (the gap only)", n)
	}
	if !m[11*w+16] || !m[21*w+22] {
		t.Fatal("eye or lips not filled")
	}
	if m[27*w+28] {
		t.Fatal("notch open to the border was filled")
	}
	if m[20*w+12] {
		t.Fatal("large enclosed gap (above holeFrac) was filled")
	}
}
