package restore

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDCTMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b, orig [64]float32
	for i := range b {
		b[i] = float32(rng.NormFloat64() * 50)
	}
	orig = b
	dct2(&b)
	for u := 0; u < 8; u++ {
		for v := 0; v < 8; v++ {
			var s float64
			for y := 0; y < 8; y++ {
				for x := 0; x < 8; x++ {
					s += float64(orig[8*y+x]) * math.Cos(math.Pi*float64((2*y+1)*u)/16) * math.Cos(math.Pi*float64((2*x+1)*v)/16)
				}
			}
			cu, cv := math.Sqrt(2.0/8), math.Sqrt(2.0/8)
			if u == 0 {
				cu = math.Sqrt(1.0 / 8)
			}
			if v == 0 {
				cv = math.Sqrt(1.0 / 8)
			}
			if d := math.Abs(s*cu*cv - float64(b[8*u+v])); d > 1e-3 {
				t.Fatalf("coef %d,%d off by %g", u, v, d)
			}
		}
	}
	idct2(&b)
	for i := range b {
		if math.Abs(float64(b[i]-orig[i])) > 1e-3 {
			t.Fatalf("round trip %d: %g vs %g", i, b[i], orig[i])
		}
	}
	var v [32]float32
	for j := 0; j < 16; j++ {
		v[j] = float32(j*j) - 3
	}
	w := v
	haar1(&v, 16)
	var e0, e1 float64
	for j := 0; j < 16; j++ {
		e0 += float64(w[j] * w[j])
		e1 += float64(v[j] * v[j])
	}
	if math.Abs(e0-e1) > 1e-2*e0 {
		t.Fatalf("haar not orthonormal: energy %g vs %g", e0, e1)
	}
	ihaar1(&v, 16)
	for j := 0; j < 16; j++ {
		if math.Abs(float64(v[j]-w[j])) > 1e-3 {
			t.Fatal("haar round trip")
		}
	}
}
