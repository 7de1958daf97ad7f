package restore

import "math"

// Orthonormal 8-point DCT-II, split into its even and odd halves: the
// even rows act on s[n] = x[n]+x[7-n], the odd rows on d[n] = x[n]-x[7-n].
var dctE, dctO [4][4]float32

func init() {
	for k := 0; k < 8; k++ {
		c := math.Sqrt(2.0 / 8)
		if k == 0 {
			c = math.Sqrt(1.0 / 8)
		}
		for n := 0; n < 4; n++ {
			v := float32(c * math.Cos(math.Pi*float64((2*n+1)*k)/16))
			if k%2 == 0 {
				dctE[k/2][n] = v
			} else {
				dctO[k/2][n] = v
			}
		}
	}
}

// dct2 is the separable 8×8 orthonormal DCT of a row-major block.
func dct2(b *[64]float32) {
	e, d := &dctE, &dctO
	for o := 0; o < 64; o += 8 {
		r := (*[8]float32)(b[o : o+8])
		s0, s1, s2, s3 := r[0]+r[7], r[1]+r[6], r[2]+r[5], r[3]+r[4]
		d0, d1, d2, d3 := r[0]-r[7], r[1]-r[6], r[2]-r[5], r[3]-r[4]
		a, c := s0-s3, s1-s2
		r[0] = e[0][0] * (s0 + s1 + s2 + s3)
		r[2] = e[1][0]*a + e[1][1]*c
		r[4] = e[0][0] * (s0 - s1 - s2 + s3)
		r[6] = e[3][0]*a + e[3][1]*c
		r[1] = d[0][0]*d0 + d[0][1]*d1 + d[0][2]*d2 + d[0][3]*d3
		r[3] = d[1][0]*d0 + d[1][1]*d1 + d[1][2]*d2 + d[1][3]*d3
		r[5] = d[2][0]*d0 + d[2][1]*d1 + d[2][2]*d2 + d[2][3]*d3
		r[7] = d[3][0]*d0 + d[3][1]*d1 + d[3][2]*d2 + d[3][3]*d3
	}
	for c := 0; c < 8; c++ {
		x0, x1, x2, x3 := b[c], b[c+8], b[c+16], b[c+24]
		x4, x5, x6, x7 := b[c+32], b[c+40], b[c+48], b[c+56]
		s0, s1, s2, s3 := x0+x7, x1+x6, x2+x5, x3+x4
		d0, d1, d2, d3 := x0-x7, x1-x6, x2-x5, x3-x4
		a, f := s0-s3, s1-s2
		b[c] = e[0][0] * (s0 + s1 + s2 + s3)
		b[c+16] = e[1][0]*a + e[1][1]*f
		b[c+32] = e[0][0] * (s0 - s1 - s2 + s3)
		b[c+48] = e[3][0]*a + e[3][1]*f
		b[c+8] = d[0][0]*d0 + d[0][1]*d1 + d[0][2]*d2 + d[0][3]*d3
		b[c+24] = d[1][0]*d0 + d[1][1]*d1 + d[1][2]*d2 + d[1][3]*d3
		b[c+40] = d[2][0]*d0 + d[2][1]*d1 + d[2][2]*d2 + d[2][3]*d3
		b[c+56] = d[3][0]*d0 + d[3][1]*d1 + d[3][2]*d2 + d[3][3]*d3
	}
}

// idct2 inverts dct2.
func idct2(b *[64]float32) {
	e, d := &dctE, &dctO
	for c := 0; c < 8; c++ {
		X0, X1, X2, X3 := b[c], b[c+8], b[c+16], b[c+24]
		X4, X5, X6, X7 := b[c+32], b[c+40], b[c+48], b[c+56]
		a := e[0][0] * (X0 + X4)
		g := e[0][0] * (X0 - X4)
		h := e[1][0]*X2 + e[3][0]*X6
		f := e[1][1]*X2 + e[3][1]*X6
		ev0, ev3 := a+h, a-h
		ev1, ev2 := g+f, g-f
		od0 := d[0][0]*X1 + d[1][0]*X3 + d[2][0]*X5 + d[3][0]*X7
		od1 := d[0][1]*X1 + d[1][1]*X3 + d[2][1]*X5 + d[3][1]*X7
		od2 := d[0][2]*X1 + d[1][2]*X3 + d[2][2]*X5 + d[3][2]*X7
		od3 := d[0][3]*X1 + d[1][3]*X3 + d[2][3]*X5 + d[3][3]*X7
		b[c], b[c+56] = ev0+od0, ev0-od0
		b[c+8], b[c+48] = ev1+od1, ev1-od1
		b[c+16], b[c+40] = ev2+od2, ev2-od2
		b[c+24], b[c+32] = ev3+od3, ev3-od3
	}
	for o := 0; o < 64; o += 8 {
		r := (*[8]float32)(b[o : o+8])
		X0, X1, X2, X3, X4, X5, X6, X7 := r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
		a := e[0][0] * (X0 + X4)
		g := e[0][0] * (X0 - X4)
		h := e[1][0]*X2 + e[3][0]*X6
		f := e[1][1]*X2 + e[3][1]*X6
		ev0, ev3 := a+h, a-h
		ev1, ev2 := g+f, g-f
		od0 := d[0][0]*X1 + d[1][0]*X3 + d[2][0]*X5 + d[3][0]*X7
		od1 := d[0][1]*X1 + d[1][1]*X3 + d[2][1]*X5 + d[3][1]*X7
		od2 := d[0][2]*X1 + d[1][2]*X3 + d[2][2]*X5 + d[3][2]*X7
		od3 := d[0][3]*X1 + d[1][3]*X3 + d[2][3]*X5 + d[3][3]*X7
		r[0], r[7] = ev0+od0, ev0-od0
		r[1], r[6] = ev1+od1, ev1-od1
		r[2], r[5] = ev2+od2, ev2-od2
		r[3], r[4] = ev3+od3, ev3-od3
	}
}

// haar1 is the orthonormal Haar transform of v[:n] in place (n a power of
// two, at most 32), in the interleaved in-place layout (the approximation
// ends at v[0]; the layout does not matter to thresholding or Wiener
// shrinkage); ihaar1 inverts it. The 2-point butterfly is its own inverse.
func haar1(v *[32]float32, n int) {
	const r = float32(0.70710678118654752)
	for s := 1; s < n; s *= 2 {
		for i := 0; i+s < n; i += 2 * s {
			a, b := v[i], v[i+s]
			v[i], v[i+s] = (a+b)*r, (a-b)*r
		}
	}
}

func ihaar1(v *[32]float32, n int) {
	const r = float32(0.70710678118654752)
	for s := n / 2; s >= 1; s /= 2 {
		for i := 0; i+s < n; i += 2 * s {
			a, b := v[i], v[i+s]
			v[i], v[i+s] = (a+b)*r, (a-b)*r
		}
	}
}
