package imageops

import (
	"slices"
	"testing"
)

func TestComponents(t *testing.T) {
	// a diagonal line across 3×3:
	//   X . .
	//   . X .
	//   . . X
	m := []bool{
		true, false, false,
		false, true, false,
		false, false, true,
	}
	cases := []struct {
		val     bool
		sizes   []int
		touches []bool
	}{
		{true, []int{3}, []bool{true}},           // 8-connected: one line
		{false, []int{3, 3}, []bool{true, true}}, // 4-connected: cut in two by it
	}
	for _, c := range cases {
		lab, sizes, touches := Components(m, 3, 3, c.val)
		if !slices.Equal(sizes, c.sizes) || !slices.Equal(touches, c.touches) {
			t.Errorf("val %v: sizes %v touches %v, want %v %v", c.val, sizes, touches, c.sizes, c.touches)
		}
		for i, l := range lab {
			if (l >= 0) != (m[i] == c.val) {
				t.Errorf("val %v: pixel %d labelled %d", c.val, i, l)
			}
		}
	}
}
