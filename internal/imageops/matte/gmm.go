package matte

import "math"

// gmm is a K-component full-covariance Gaussian mixture over 3-vectors, as
// used by GrabCut (Rother et al. 2004): components are fitted by hard
// assignment and re-estimation.
type gmm struct {
	k      int
	weight []float64
	mean   [][3]float64
	inv    [][9]float64 // inverse covariance
	logc   []float64    // log(weight) - 0.5 log det(2π Σ)
}

// fitGMM initialises k components with k-means on the selected samples
// (pix holds 3 floats per pixel; sel lists pixel indices) and then runs a
// few assignment/re-estimation rounds.
func fitGMM(pix []float32, sel []int32, k int) *gmm {
	g := &gmm{k: k}
	if len(sel) == 0 {
		sel = []int32{0}
	}
	if len(sel) < k {
		k = len(sel)
		g.k = k
	}
	// Subsample for speed.
	samp := sel
	if len(sel) > 20000 {
		step := len(sel) / 20000
		samp = make([]int32, 0, len(sel)/step+1)
		for i := 0; i < len(sel); i += step {
			samp = append(samp, sel[i])
		}
	}
	// The samples as float64 triples, read in order by every pass below
	// (the same values pix holds; the arithmetic is unchanged).
	pts := make([]float64, 3*len(samp))
	for s, i := range samp {
		pts[3*s], pts[3*s+1], pts[3*s+2] = float64(pix[3*i]), float64(pix[3*i+1]), float64(pix[3*i+2])
	}
	// k-means++-style deterministic init: farthest-point seeding starting
	// from the sample nearest to the mean.
	centers := make([][3]float64, 0, k)
	var mu [3]float64
	for s := 0; s < len(pts); s += 3 {
		mu[0] += pts[s]
		mu[1] += pts[s+1]
		mu[2] += pts[s+2]
	}
	for c := range mu {
		mu[c] /= float64(len(samp))
	}
	centers = append(centers, mu)
	dmin := make([]float64, len(samp))
	for i := range dmin {
		dmin[i] = math.Inf(1)
	}
	for len(centers) < k {
		last := centers[len(centers)-1]
		best, bi := -1.0, 0
		for s := range dmin {
			d := sq3p(pts[3*s:3*s+3], &last)
			if d < dmin[s] {
				dmin[s] = d
			}
			if dmin[s] > best {
				best, bi = dmin[s], s
			}
		}
		centers = append(centers, [3]float64{pts[3*bi], pts[3*bi+1], pts[3*bi+2]})
	}
	assign := make([]int, len(samp))
	for it := 0; it < 6; it++ {
		var sum [8][3]float64
		var cnt [8]int
		for s := range assign {
			z := pts[3*s : 3*s+3]
			bd, bc := math.Inf(1), 0
			for c := range centers {
				if d := sq3p(z, &centers[c]); d < bd {
					bd, bc = d, c
				}
			}
			assign[s] = bc
			cnt[bc]++
			sum[bc][0] += z[0]
			sum[bc][1] += z[1]
			sum[bc][2] += z[2]
		}
		for c := range centers {
			if cnt[c] > 0 {
				for d := 0; d < 3; d++ {
					centers[c][d] = sum[c][d] / float64(cnt[c])
				}
			}
		}
	}
	g.estimate(pts, assign)
	// Two GrabCut-style hard-EM rounds.
	for it := 0; it < 2; it++ {
		for s := range assign {
			assign[s] = g.best64(pts[3*s : 3*s+3])
		}
		g.estimate(pts, assign)
	}
	return g
}

// sq3p is sq3 on a float64 triple.
func sq3p(z []float64, c *[3]float64) float64 {
	a, b, d := z[0]-c[0], z[1]-c[1], z[2]-c[2]
	return a*a + b*b + d*d
}

func sq3(p []float32, c [3]float64) float64 {
	a, b, d := float64(p[0])-c[0], float64(p[1])-c[1], float64(p[2])-c[2]
	return a*a + b*b + d*d
}

// estimate re-fits the components to the samples pts (float64 triples)
// as assigned.
func (g *gmm) estimate(pts []float64, assign []int) {
	k := g.k
	g.weight = make([]float64, k)
	g.mean = make([][3]float64, k)
	g.inv = make([][9]float64, k)
	g.logc = make([]float64, k)
	cov := make([][9]float64, k)
	cnt := make([]float64, k)
	for s, c := range assign {
		cnt[c]++
		r, gg, b := pts[3*s], pts[3*s+1], pts[3*s+2]
		g.mean[c][0] += r
		g.mean[c][1] += gg
		g.mean[c][2] += b
		// the upper triangle; v[p]·v[q] = v[q]·v[p], so the lower one is
		// the same sums
		cv := &cov[c]
		cv[0] += r * r
		cv[1] += r * gg
		cv[2] += r * b
		cv[4] += gg * gg
		cv[5] += gg * b
		cv[8] += b * b
	}
	for c := range cov {
		cv := &cov[c]
		cv[3], cv[6], cv[7] = cv[1], cv[2], cv[5]
	}
	total := float64(len(assign))
	for c := 0; c < k; c++ {
		if cnt[c] == 0 {
			g.weight[c] = 0
			g.logc[c] = math.Inf(-1)
			continue
		}
		g.weight[c] = cnt[c] / total
		for p := 0; p < 3; p++ {
			g.mean[c][p] /= cnt[c]
		}
		var m [9]float64
		for p := 0; p < 3; p++ {
			for q := 0; q < 3; q++ {
				m[3*p+q] = cov[c][3*p+q]/cnt[c] - g.mean[c][p]*g.mean[c][q]
			}
		}
		// Regularise: at least a few grey levels of spread (JPEG noise).
		for p := 0; p < 3; p++ {
			m[4*p] += 4
		}
		det := m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
		if det <= 1e-9 {
			for p := 0; p < 3; p++ {
				m[4*p] += 25
			}
			det = m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
		}
		inv := &g.inv[c]
		inv[0] = (m[4]*m[8] - m[5]*m[7]) / det
		inv[1] = (m[2]*m[7] - m[1]*m[8]) / det
		inv[2] = (m[1]*m[5] - m[2]*m[4]) / det
		inv[3] = (m[5]*m[6] - m[3]*m[8]) / det
		inv[4] = (m[0]*m[8] - m[2]*m[6]) / det
		inv[5] = (m[2]*m[3] - m[0]*m[5]) / det
		inv[6] = (m[3]*m[7] - m[4]*m[6]) / det
		inv[7] = (m[1]*m[6] - m[0]*m[7]) / det
		inv[8] = (m[0]*m[4] - m[1]*m[3]) / det
		g.logc[c] = math.Log(g.weight[c]) - 0.5*math.Log(det) - 1.5*math.Log(2*math.Pi)
	}
}

func (g *gmm) compLog(c int, p []float32) float64 {
	return g.compLog3(c, float64(p[0]), float64(p[1]), float64(p[2]))
}

// compLog3 is log(weight_c · N(z; mean_c, Σ_c)).
func (g *gmm) compLog3(c int, z0, z1, z2 float64) float64 {
	mu := &g.mean[c]
	d0 := z0 - mu[0]
	d1 := z1 - mu[1]
	d2 := z2 - mu[2]
	iv := &g.inv[c]
	m := d0*(iv[0]*d0+iv[1]*d1+iv[2]*d2) + d1*(iv[3]*d0+iv[4]*d1+iv[5]*d2) + d2*(iv[6]*d0+iv[7]*d1+iv[8]*d2)
	return g.logc[c] - 0.5*m
}

func (g *gmm) best(p []float32) int {
	return g.best3(float64(p[0]), float64(p[1]), float64(p[2]))
}

func (g *gmm) best64(z []float64) int {
	return g.best3(z[0], z[1], z[2])
}

func (g *gmm) best3(z0, z1, z2 float64) int {
	bl, bc := math.Inf(-1), 0
	for c := 0; c < g.k; c++ {
		if g.weight[c] == 0 {
			continue
		}
		mu, iv := &g.mean[c], &g.inv[c] // compLog3, inlined
		d0, d1, d2 := z0-mu[0], z1-mu[1], z2-mu[2]
		m := d0*(iv[0]*d0+iv[1]*d1+iv[2]*d2) + d1*(iv[3]*d0+iv[4]*d1+iv[5]*d2) + d2*(iv[6]*d0+iv[7]*d1+iv[8]*d2)
		if l := g.logc[c] - 0.5*m; l > bl {
			bl, bc = l, c
		}
	}
	return bc
}

// negLog returns -log p(z), with the sum over components done stably.
//
// The sum skips only what cannot change it: the largest term is exp(0),
// exactly 1; a term below half a unit in the last place of the sum so far
// leaves the sum as it is (exp's result is within an ulp of the true
// value, and the test keeps a factor of 2 of margin); exp of less than
// -746 is 0; and log(1) is 0. So the result has the same bits as summing
// every exp and taking the log.
func (g *gmm) negLog(p []float32) float64 {
	z0, z1, z2 := float64(p[0]), float64(p[1]), float64(p[2])
	var ls [8]float64
	mx := math.Inf(-1)
	k := g.k
	for c := 0; c < k; c++ {
		if g.weight[c] == 0 {
			ls[c] = math.Inf(-1)
			continue
		}
		mu, iv := &g.mean[c], &g.inv[c] // compLog3, inlined
		d0, d1, d2 := z0-mu[0], z1-mu[1], z2-mu[2]
		m := d0*(iv[0]*d0+iv[1]*d1+iv[2]*d2) + d1*(iv[3]*d0+iv[4]*d1+iv[5]*d2) + d2*(iv[6]*d0+iv[7]*d1+iv[8]*d2)
		ls[c] = g.logc[c] - 0.5*m
		if ls[c] > mx {
			mx = ls[c]
		}
	}
	var s float64
	for c := 0; c < k; c++ {
		if g.weight[c] > 0 {
			d := ls[c] - mx
			switch {
			case d == 0:
				s += 1
			case d > -36: // above the skip threshold for any s < 8
				if haveExpFMA {
					s += expInline(d)
				} else {
					s += math.Exp(d)
				}
			case d < -746:
			case s >= 0x1p-1022 && d <= float64(int(math.Float64bits(s)>>52)-1023-54)*math.Ln2:
			default:
				s += math.Exp(d)
			}
		}
	}
	var l float64
	if s != 1 {
		l = math.Log(s)
	}
	v := -(mx + l)
	if v > 60 {
		v = 60 // cap: one outlier pixel should not dominate
	}
	return v
}
