package matte

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestRankValues checks the radix select against a sort on values with
// many ties, negatives, zeros and infinities.
func TestRankValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]float32{
		"one":    {3},
		"ties":   {1, 1, 1, 1, 2, 2, 0, 0, 0},
		"signed": {-1, 2, -3.5, 0, 7, -0.25, float32(math.Inf(1)), float32(math.Inf(-1)), 1e-30, -1e-30},
	}
	big := make([]float32, 5000)
	for i := range big {
		big[i] = float32(r.NormFloat64() * 10)
		if i%7 == 0 {
			big[i] = 60
		}
	}
	cases["big"] = big
	for name, v := range cases {
		s := append([]float32(nil), v...)
		sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
		for _, k := range [][2]int{{0, len(v) - 1}, {len(v) / 100, len(v) - 1 - len(v)/100}, {len(v) / 3, len(v) / 2}} {
			a, b := rankValues(v, k[0], k[1])
			if a != s[k[0]] || b != s[k[1]] {
				t.Errorf("%s ranks %v: got %v %v, want %v %v", name, k, a, b, s[k[0]], s[k[1]])
			}
		}
	}
}
