package matte

import (
	"math"

	"golang.org/x/sys/cpu"
)

// expInline is math.Exp for -700 ≤ x ≤ 0, bit for bit, written out in Go
// so that the compiler inlines it and the CPU overlaps the exps of a
// mixture's components (negLog spends a third of its time in exp). It is
// the sequence of operations of Go's amd64 assembly exp on a CPU with FMA
// (math/exp_amd64.s, the avxfma path: Shibata's method from SLEEF), so it
// is only used where that path is the one math.Exp takes (haveExpFMA);
// TestExpInline compares the two.
func expInline(x float64) float64 {
	const (
		log2e = 1.4426950408889634073599246810018920
		ln2U  = 0.69314718055966295651160180568695068359375
		ln2L  = 0.28235290563031577122588448175013436025525412068e-12
	)
	fx := math.RoundToEven(x * log2e) // CVTSD2SL then back
	bx := int64(fx)
	x0 := math.FMA(-ln2U, fx, x)
	x0 = math.FMA(-ln2L, fx, x0)
	x0 *= 0.0625
	t := math.FMA(2.4801587301587301587e-5, x0, 1.9841269841269841270e-4)
	t = math.FMA(t, x0, 1.3888888888888888889e-3)
	t = math.FMA(t, x0, 8.3333333333333333333e-3)
	t = math.FMA(t, x0, 4.1666666666666666667e-2)
	t = math.FMA(t, x0, 1.6666666666666666667e-1)
	t = math.FMA(t, x0, 0.5)
	t = math.FMA(t, x0, 1.0)
	x0 *= t
	x0 *= x0 + 2
	x0 *= x0 + 2
	x0 *= x0 + 2
	x0 = math.FMA(x0, x0+2, 1.0)
	return x0 * math.Float64frombits(uint64(bx+1023)<<52)
}

// haveExpFMA reports whether math.Exp takes the path expInline copies.
var haveExpFMA = cpu.X86.HasAVX && cpu.X86.HasFMA
