package restore

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// bm3dParams are the BM3D-lite settings for one noise level.
type bm3dParams struct {
	step1, step2 int     // reference-block step
	rad1, rad2   int     // search-window half size (window 2*rad+1)
	n1, n2       int     // maximum group size (power of two)
	lambda       float32 // hard threshold, times sigma
	tau1, tau2   float32 // block-matching threshold, mean squared difference
}

func paramsFor(sigma float64) bm3dParams {
	p := bm3dParams{step1: 5, step2: 4, rad1: 10, rad2: 8, n1: 16, n2: 16, lambda: 2.7, tau1: 2500, tau2: 400}
	if sigma > 40 {
		p.tau1 = 5000
		p.tau2 = 3500
		p.lambda = 2.8
	}
	return p
}

type cand struct {
	d    float32
	x, y int32
}

// kaiser is the 8×8 Kaiser window (beta 2) used to weight aggregated blocks.
var kaiser [64]float32

func init() {
	i0 := func(x float64) float64 { // modified Bessel function of order 0
		s, t := 1.0, 1.0
		for k := 1; k < 30; k++ {
			t *= (x / 2) / float64(k)
			s += t * t
		}
		return s
	}
	const beta = 2.0
	var w [8]float64
	for n := 0; n < 8; n++ {
		r := 2*float64(n)/7 - 1
		w[n] = i0(beta*math.Sqrt(1-r*r)) / i0(beta)
	}
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			kaiser[8*y+x] = float32(w[y] * w[x])
		}
	}
}

// positions lists the reference-block coordinates 0, step, ... along an
// axis of length n, always ending with n-8.
func positions(n, step int) []int {
	var ps []int
	for p := 0; p < n-8; p += step {
		ps = append(ps, p)
	}
	return append(ps, n-8)
}

// ringOffsets lists the displacements of a (2rad+1)² search window from
// the centre outwards (by Chebyshev ring, then Euclidean distance).
func ringOffsets(rad int) [][2]int32 {
	var o [][2]int32
	for dy := -rad; dy <= rad; dy++ {
		for dx := -rad; dx <= rad; dx++ {
			if dx != 0 || dy != 0 {
				o = append(o, [2]int32{int32(dx), int32(dy)})
			}
		}
	}
	key := func(d [2]int32) int32 {
		ax, ay := max(d[0], -d[0]), max(d[1], -d[1])
		return max(ax, ay)*10000 + ax*ax + ay*ay
	}
	sort.Slice(o, func(i, j int) bool { return key(o[i]) < key(o[j]) })
	return o
}

// match finds up to maxN 8×8 blocks of plane p (width w, height h) within
// the window offs of (rx, ry) whose sum of squared differences to the
// reference block is at most tau*64, best first. The reference itself is
// always first. Candidates are visited from the centre outwards, so that
// among equally distant blocks the nearest are kept. (Stopping the search
// once maxN blocks at the noise floor are found was tried: 0.1 dB worse.)
func match(p []float32, w, h, rx, ry int, offs [][2]int32, tau float32, maxN int, out []cand) []cand {
	var ref [64]float32
	for r := 0; r < 8; r++ {
		copy(ref[8*r:8*r+8], p[(ry+r)*w+rx:])
	}
	out = append(out[:0], cand{0, int32(rx), int32(ry)})
	limit := tau * 64
	thr := limit
	for _, o := range offs {
		x, y := rx+int(o[0]), ry+int(o[1])
		if x < 0 || y < 0 || x > w-8 || y > h-8 {
			continue
		}
		var s float32
		base := y*w + x
		for r := 0; r < 8; r++ {
			q := p[base+r*w : base+r*w+8 : base+r*w+8]
			f := ref[8*r : 8*r+8 : 8*r+8]
			d0, d1, d2, d3 := q[0]-f[0], q[1]-f[1], q[2]-f[2], q[3]-f[3]
			d4, d5, d6, d7 := q[4]-f[4], q[5]-f[5], q[6]-f[6], q[7]-f[7]
			s += d0*d0 + d1*d1 + d2*d2 + d3*d3 + d4*d4 + d5*d5 + d6*d6 + d7*d7
			if s > thr {
				break
			}
		}
		if s > thr {
			continue
		}
		// insert keeping out sorted by distance, capped at maxN
		if len(out) < maxN {
			out = append(out, cand{})
		}
		i := len(out) - 1
		for i > 1 && out[i-1].d > s {
			out[i] = out[i-1]
			i--
		}
		out[i] = cand{s, int32(x), int32(y)}
		if len(out) == maxN {
			thr = min(limit, out[maxN-1].d)
		}
	}
	return out
}

func pow2floor(n int) int {
	k := 1
	for k*2 <= n {
		k *= 2
	}
	return k
}

type bm3dWorker struct {
	num, den [3][]float32
	g, gb    [3][][64]float32
	cands    []cand
}

func newWorker(n, maxN int) *bm3dWorker {
	wk := &bm3dWorker{cands: make([]cand, 0, maxN)}
	for c := 0; c < 3; c++ {
		wk.num[c] = make([]float32, n)
		wk.den[c] = make([]float32, n)
		wk.g[c] = make([][64]float32, maxN)
		wk.gb[c] = make([][64]float32, maxN)
	}
	return wk
}

func loadBlock(dst *[64]float32, p []float32, w, x, y int) {
	for r := 0; r < 8; r++ {
		copy(dst[8*r:8*r+8], p[(y+r)*w+x:])
	}
}

func (wk *bm3dWorker) aggregate(c int, blk *[64]float32, x, y, w int, wt float32) {
	num, den := wk.num[c], wk.den[c]
	for r := 0; r < 8; r++ {
		o := (y+r)*w + x
		nr, dr := num[o:o+8:o+8], den[o:o+8:o+8]
		k := kaiser[8*r : 8*r+8 : 8*r+8]
		b := blk[8*r : 8*r+8 : 8*r+8]
		for i := 0; i < 8; i++ {
			kw := k[i] * wt
			nr[i] += kw * b[i]
			dr[i] += kw
		}
	}
}

// bm3dStep runs one BM3D pass over the three opponent planes. When basic
// is nil it is the hard-thresholding step, otherwise the Wiener step with
// basic as the pilot estimate (and matching done on basic's luminance).
func bm3dStep(noisy, basic *[3][]float32, w, h int, sigma float32, p bm3dParams) [3][]float32 {
	wiener := basic != nil
	step, rad, maxN, tau := p.step1, p.rad1, p.n1, p.tau1
	matchPlane := noisy[0]
	if wiener {
		step, rad, maxN, tau = p.step2, p.rad2, p.n2, p.tau2
		matchPlane = basic[0]
	}
	offs := ringOffsets(rad)
	xs, ys := positions(w, step), positions(h, step)
	nw := runtime.GOMAXPROCS(0)
	nw = max(1, min(nw, len(ys)))
	workers := make([]*bm3dWorker, nw)
	var next atomic.Int64
	var wg sync.WaitGroup
	thr := p.lambda * sigma
	s2 := sigma * sigma
	for i := range workers {
		wk := newWorker(w*h, maxN)
		workers[i] = wk
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				yi := int(next.Add(1) - 1)
				if yi >= len(ys) {
					return
				}
				ry := ys[yi]
				for _, rx := range xs {
					cs := match(matchPlane, w, h, rx, ry, offs, tau, maxN, wk.cands)
					wk.cands = cs
					n := pow2floor(len(cs))
					for c := 0; c < 3; c++ {
						g := wk.g[c][:n]
						for j := range g {
							loadBlock(&g[j], noisy[c], w, int(cs[j].x), int(cs[j].y))
							dct2(&g[j])
						}
						var wt float32
						var v, u [32]float32
						if !wiener {
							nnz := 0
							for q := 0; q < 64; q++ {
								for j := range g {
									v[j] = g[j][q]
								}
								haar1(&v, n)
								k := 0
								for j := 0; j < n; j++ {
									if v[j] > thr || v[j] < -thr {
										k++
									} else {
										v[j] = 0
									}
								}
								nnz += k
								if k > 0 {
									ihaar1(&v, n)
								}
								for j := range g {
									g[j][q] = v[j]
								}
							}
							wt = 1 / float32(max(nnz, 1))
						} else {
							gb := wk.gb[c][:n]
							for j := range gb {
								loadBlock(&gb[j], basic[c], w, int(cs[j].x), int(cs[j].y))
								dct2(&gb[j])
							}
							var sw float32
							for q := 0; q < 64; q++ {
								for j := range g {
									v[j] = g[j][q]
									u[j] = gb[j][q]
								}
								haar1(&v, n)
								haar1(&u, n)
								for j := 0; j < n; j++ {
									e2 := u[j] * u[j]
									f := e2 / (e2 + s2)
									v[j] *= f
									sw += f * f
								}
								ihaar1(&v, n)
								for j := range g {
									g[j][q] = v[j]
								}
							}
							wt = 1 / max(sw, 1e-6)
						}
						for j := range g {
							idct2(&g[j])
							wk.aggregate(c, &g[j], int(cs[j].x), int(cs[j].y), w, wt)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	var out [3][]float32
	for c := 0; c < 3; c++ {
		num, den := workers[0].num[c], workers[0].den[c]
		for _, wk := range workers[1:] {
			for i := range num {
				num[i] += wk.num[c][i]
				den[i] += wk.den[c][i]
			}
		}
		for i := range num {
			if den[i] > 0 {
				num[i] /= den[i]
			} else {
				num[i] = noisy[c][i]
			}
		}
		out[c] = num
	}
	return out
}

const (
	inv3 = 0.57735026918962576 // 1/sqrt(3)
	inv2 = 0.70710678118654752 // 1/sqrt(2)
	inv6 = 0.40824829046386302 // 1/sqrt(6)
)

// toOpp converts RGB planes to the orthonormal opponent space
// Y=(R+G+B)/√3, U=(R−B)/√2, V=(R−2G+B)/√6, where white noise of
// deviation sigma stays white with the same deviation in every channel.
func toOpp(r, g, b []float32) [3][]float32 {
	n := len(r)
	o := [3][]float32{make([]float32, n), make([]float32, n), make([]float32, n)}
	for i := 0; i < n; i++ {
		o[0][i] = (r[i] + g[i] + b[i]) * inv3
		o[1][i] = (r[i] - b[i]) * inv2
		o[2][i] = (r[i] - 2*g[i] + b[i]) * inv6
	}
	return o
}

func fromOpp(o [3][]float32, r, g, b []float32) {
	for i := range r {
		y, u, v := o[0][i]*inv3, o[1][i]*inv2, o[2][i]*inv6
		r[i] = y + u + v
		g[i] = y - 2*v
		b[i] = y - u + v
	}
}

// bm3dRGB denoises three RGB planes (w×h, each at least 8×8) in place.
func bm3dRGB(r, g, b []float32, w, h int, sigma float64) {
	p := paramsFor(sigma)
	s := float32(sigma)
	noisy := toOpp(r, g, b)
	basic := bm3dStep(&noisy, nil, w, h, s, p)
	final := bm3dStep(&noisy, &basic, w, h, s, p)
	fromOpp(final, r, g, b)
}
