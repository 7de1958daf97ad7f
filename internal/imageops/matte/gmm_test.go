package matte

import (
	"math"
	"math/rand/v2"
	"testing"
)

// negLogSumAll is negLog as first written: every component's exp summed,
// then the log. negLog's skips must give the same bits.
func negLogSumAll(g *gmm, p []float32) float64 {
	var ls [8]float64
	mx := math.Inf(-1)
	for c := 0; c < g.k; c++ {
		if g.weight[c] == 0 {
			ls[c] = math.Inf(-1)
			continue
		}
		ls[c] = g.compLog(c, p)
		if ls[c] > mx {
			mx = ls[c]
		}
	}
	var s float64
	for c := 0; c < g.k; c++ {
		if g.weight[c] > 0 {
			s += math.Exp(ls[c] - mx)
		}
	}
	v := -(mx + math.Log(s))
	if v > 60 {
		v = 60
	}
	return v
}

// TestNegLogExact compares negLog with the plain sum on mixtures of tight
// and broad clusters, where many terms are negligible and a few are not.
func TestNegLogExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		const n = 4000
		pix := make([]float32, 3*n)
		sel := make([]int32, n)
		nc := 2 + trial%5
		var centre [6][3]float64
		var spread [6]float64
		for c := 0; c < nc; c++ {
			for d := 0; d < 3; d++ {
				centre[c][d] = r.Float64() * 255
			}
			spread[c] = 0.5 + 30*r.Float64()*r.Float64()
		}
		for i := 0; i < n; i++ {
			c := r.IntN(nc)
			for d := 0; d < 3; d++ {
				pix[3*i+d] = float32(centre[c][d] + spread[c]*r.NormFloat64())
			}
			sel[i] = int32(i)
		}
		g := fitGMM(pix, sel, 5)
		for i := 0; i < 20000; i++ {
			z := []float32{float32(r.Float64() * 255), float32(r.Float64() * 255), float32(r.Float64() * 255)}
			if i%2 == 0 { // near a cluster, where the sum has several terms
				c := r.IntN(nc)
				for d := 0; d < 3; d++ {
					z[d] = float32(centre[c][d] + 2*spread[c]*r.NormFloat64())
				}
			}
			if got, want := g.negLog(z), negLogSumAll(g, z); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d, z %v: negLog %v, sum of all terms %v", trial, z, got, want)
			}
		}
	}
}
