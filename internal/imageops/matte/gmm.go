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
	// k-means++-style deterministic init: farthest-point seeding starting
	// from the sample nearest to the mean.
	centers := make([][3]float64, 0, k)
	var mu [3]float64
	for _, i := range samp {
		for c := int32(0); c < 3; c++ {
			mu[c] += float64(pix[3*i+c])
		}
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
		for s, i := range samp {
			d := sq3(pix[3*i:], last)
			if d < dmin[s] {
				dmin[s] = d
			}
			if dmin[s] > best {
				best, bi = dmin[s], s
			}
		}
		var c3 [3]float64
		for c := int32(0); c < 3; c++ {
			c3[c] = float64(pix[3*samp[bi]+c])
		}
		centers = append(centers, c3)
	}
	assign := make([]int, len(samp))
	for it := 0; it < 6; it++ {
		var sum [][3]float64 = make([][3]float64, k)
		cnt := make([]int, k)
		for s, i := range samp {
			bd, bc := math.Inf(1), 0
			for c := range centers {
				if d := sq3(pix[3*i:], centers[c]); d < bd {
					bd, bc = d, c
				}
			}
			assign[s] = bc
			cnt[bc]++
			for c := int32(0); c < 3; c++ {
				sum[bc][c] += float64(pix[3*i+c])
			}
		}
		for c := range centers {
			if cnt[c] > 0 {
				for d := 0; d < 3; d++ {
					centers[c][d] = sum[c][d] / float64(cnt[c])
				}
			}
		}
	}
	g.estimate(pix, samp, assign)
	// Two GrabCut-style hard-EM rounds.
	for it := 0; it < 2; it++ {
		for s, i := range samp {
			assign[s] = g.best(pix[3*i:])
		}
		g.estimate(pix, samp, assign)
	}
	return g
}

func sq3(p []float32, c [3]float64) float64 {
	a, b, d := float64(p[0])-c[0], float64(p[1])-c[1], float64(p[2])-c[2]
	return a*a + b*b + d*d
}

func (g *gmm) estimate(pix []float32, samp []int32, assign []int) {
	k := g.k
	g.weight = make([]float64, k)
	g.mean = make([][3]float64, k)
	g.inv = make([][9]float64, k)
	g.logc = make([]float64, k)
	cov := make([][9]float64, k)
	cnt := make([]float64, k)
	for s, i := range samp {
		c := assign[s]
		cnt[c]++
		r, gg, b := float64(pix[3*i]), float64(pix[3*i+1]), float64(pix[3*i+2])
		g.mean[c][0] += r
		g.mean[c][1] += gg
		g.mean[c][2] += b
		v := [3]float64{r, gg, b}
		for p := 0; p < 3; p++ {
			for q := 0; q < 3; q++ {
				cov[c][3*p+q] += v[p] * v[q]
			}
		}
	}
	total := float64(len(samp))
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
	d0 := float64(p[0]) - g.mean[c][0]
	d1 := float64(p[1]) - g.mean[c][1]
	d2 := float64(p[2]) - g.mean[c][2]
	iv := &g.inv[c]
	m := d0*(iv[0]*d0+iv[1]*d1+iv[2]*d2) + d1*(iv[3]*d0+iv[4]*d1+iv[5]*d2) + d2*(iv[6]*d0+iv[7]*d1+iv[8]*d2)
	return g.logc[c] - 0.5*m
}

func (g *gmm) best(p []float32) int {
	bl, bc := math.Inf(-1), 0
	for c := 0; c < g.k; c++ {
		if g.weight[c] == 0 {
			continue
		}
		if l := g.compLog(c, p); l > bl {
			bl, bc = l, c
		}
	}
	return bc
}

// negLog returns -log p(z), with the sum over components done stably.
func (g *gmm) negLog(p []float32) float64 {
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
		v = 60 // cap: one outlier pixel should not dominate
	}
	return v
}
