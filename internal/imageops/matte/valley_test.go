package matte

import "testing"

// TestValleyCut: of two tall things standing on the bottom edge joined by
// a low slab (two statues and the floor between them), the more central
// one is kept alone; one figure with a raised arm, two things floating
// above the bottom edge, and a single block are left whole.
func TestValleyCut(t *testing.T) {
	const w, h = 200, 160
	type box struct{ x0, y0, x1, y1 int }
	cases := []struct {
		name  string
		boxes []box    // drawn into one mask
		probe [][2]int // points to test
		keep  []bool
		cut   bool
	}{
		{"two statues joined by the floor",
			[]box{{20, 30, 70, 160}, {90, 10, 140, 160}, {70, 120, 90, 160}},
			[][2]int{{45, 60}, {115, 60}, {72, 140}}, []bool{false, true, false}, true},
		{"a figure with a raised arm",
			[]box{{70, 40, 130, 160}, {130, 10, 140, 90}},
			[][2]int{{100, 100}, {135, 30}}, []bool{true, true}, false},
		{"two things floating above the bottom edge",
			[]box{{20, 30, 70, 130}, {90, 10, 140, 130}, {70, 100, 90, 130}},
			[][2]int{{45, 60}, {115, 60}}, []bool{true, true}, false},
		{"one block", []box{{60, 30, 140, 160}}, [][2]int{{100, 100}}, []bool{true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := make([]bool, w*h)
			for _, b := range c.boxes {
				for y := b.y0; y < b.y1; y++ {
					for x := b.x0; x < b.x1; x++ {
						m[y*w+x] = true
					}
				}
			}
			if got := valleyCut(m, w, h); got != c.cut {
				t.Errorf("cut = %v, want %v", got, c.cut)
			}
			for k, p := range c.probe {
				if got := m[p[1]*w+p[0]]; got != c.keep[k] {
					t.Errorf("point %v kept = %v, want %v", p, got, c.keep[k])
				}
			}
		})
	}
}
