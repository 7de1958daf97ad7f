package matte

import "testing"

// TestAsideDrop: components far from the centre and much smaller after the
// centre weight are dropped, unless they reach the bottom edge; the
// subject and things of its weight near it stay.
func TestAsideDrop(t *testing.T) {
	const w, h = 200, 160
	type box struct{ x0, y0, x1, y1 int }
	cases := []struct {
		name  string
		boxes []box
		keep  []bool
	}{
		{"one subject", []box{{80, 50, 120, 110}}, []bool{true}},
		{"a lantern at the side", []box{{80, 50, 120, 110}, {5, 20, 45, 70}}, []bool{true, false}},
		{"a bigger wall at the side", []box{{85, 55, 115, 105}, {2, 5, 60, 60}}, []bool{true, false}},
		{"two children side by side", []box{{60, 40, 95, 120}, {105, 40, 140, 120}}, []bool{true, true}},
		{"a torso cut by the bottom edge, off the centre", []box{{80, 30, 120, 80}, {140, 120, 190, 160}}, []bool{true, true}},
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
			asideDrop(m, w, h)
			for k, b := range c.boxes {
				got := m[((b.y0+b.y1)/2)*w+(b.x0+b.x1)/2]
				if got != c.keep[k] {
					t.Errorf("box %d kept = %v, want %v", k, got, c.keep[k])
				}
			}
		})
	}
}
