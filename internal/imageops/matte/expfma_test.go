package matte

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpInline checks expInline against math.Exp bit for bit over the
// range negLog uses it on.
func TestExpInline(t *testing.T) {
	if !haveExpFMA {
		t.Skip("math.Exp does not take the FMA path on this CPU")
	}
	r := rand.New(rand.NewPCG(7, 8))
	check := func(x float64) {
		if got, want := expInline(x), math.Exp(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("exp(%v): inline %v, math.Exp %v", x, got, want)
		}
	}
	for _, x := range []float64{0, -0.0, -1e-300, -0.5 * math.Ln2, -math.Ln2, -1, -36, -37.5, -700, math.Nextafter(0, -1)} {
		check(x)
	}
	for i := 0; i < 2_000_000; i++ {
		check(-36 * r.Float64())
		check(-700 * r.Float64() * r.Float64())
	}
}
