package upscale

import (
	"math"
	"slices"
)

// Fixed algorithm constants, tuned on Set5 (see doc.go and Evaluate).
const (
	lanczosA   = 4    // order of the interpolator U (Lanczos-4, 8 taps)
	preRadius  = 6    // half-length of the LR pre-filter P (13 taps)
	baseEps    = 0.01 // Tikhonov term of P ≈ (D∘U)⁻¹ on clean 8-bit input
	noiseFloor = 3.0  // noise sigma (levels) up to which input counts as clean
	bigOutput  = 6 << 20
)

// composite returns the taps g[-8..8] of the LR-domain filter D∘U in one
// dimension (U = Lanczos-a up by s, D = MATLAB bicubic down by s). D∘U is
// shift-invariant on the LR grid because s is an integer.
func composite(s, a int) []float64 {
	const n = 64
	u := upTable(n, s, a)
	d := downTable(n*s, s)
	hr := make([]float64, n*s)
	for j := range hr {
		for k := 0; k < u.taps; k++ {
			if reflect(int(u.start[j])+k, n) == n/2 {
				hr[j] += float64(u.w[j*u.taps+k])
			}
		}
	}
	const r = 8
	g := make([]float64, 2*r+1)
	for k := -r; k <= r; k++ {
		j := n/2 + k
		for t := 0; t < d.taps; t++ {
			g[k+r] += float64(d.w[j*d.taps+t]) * hr[reflect(int(d.start[j])+t, n*s)]
		}
	}
	return g
}

// inverseFilter designs a symmetric FIR q[-R..R] with frequency response
// ≈ G/(G²+eps), the Tikhonov-regularised inverse of the symmetric filter g
// (Hann-windowed, normalised to unit DC gain).
func inverseFilter(g []float64, eps float64, radius int) []float64 {
	const m = 2048
	r := (len(g) - 1) / 2
	q := make([]float64, 2*radius+1)
	for i := 0; i < m; i++ {
		w := math.Pi * (float64(i) + 0.5) / m
		G := g[r]
		for k := 1; k <= r; k++ {
			G += 2 * g[r+k] * math.Cos(float64(k)*w)
		}
		Q := G / (G*G + eps)
		for k := 0; k <= radius; k++ {
			q[radius+k] += Q * math.Cos(float64(k)*w) / m
		}
	}
	for k := 0; k <= radius; k++ {
		x := float64(k) / float64(radius+1)
		q[radius+k] *= 0.5 + 0.5*math.Cos(math.Pi*x)
		q[radius-k] = q[radius+k]
	}
	var sum float64
	for _, v := range q {
		sum += v
	}
	for i := range q {
		q[i] /= sum
	}
	return q
}

// plan holds the weight tables for one input size and scale.
type plan struct {
	s      int
	uh, uv *table // Lanczos up, U
	dh, dv *table // bicubic down, D
	ph, pv *table // LR pre-filter, P
	ar     *arena
}

func newPlan(w, h, s int, eps float64) *plan {
	q := inverseFilter(composite(s, lanczosA), eps, preRadius)
	return &plan{
		s:  s,
		uh: upTable(w, s, lanczosA), uv: upTable(h, s, lanczosA),
		dh: downTable(w*s, s), dv: downTable(h*s, s),
		ph: convTable(w, q), pv: convTable(h, q),
		ar: &arena{},
	}
}

func (pl *plan) up(lr *plane) *plane   { return resample2(lr, pl.uh, pl.uv, pl.ar) }
func (pl *plan) down(hr *plane) *plane { return resample2(hr, pl.dh, pl.dv, pl.ar) }
func (pl *plan) pre(lr *plane) *plane  { return resample2(lr, pl.ph, pl.pv, pl.ar) }

// linear is the fixed point of iterative back-projection with
// back-projector U∘P, in closed form: x = U P y.
func (pl *plan) linear(lr *plane) *plane {
	p := pl.pre(lr)
	x := pl.up(p)
	pl.ar.put(p)
	return x
}

// refine runs clamped back-projection steps on x (a channel already
// initialised by linear): clamp to the local LR range, then
// x += U P (y − D x); a final clamp ends it.
func (pl *plan) refine(x, lr *plane, iters int) {
	lo, hi := localRange(lr)
	for it := 0; it < iters; it++ {
		clampTo(x, lo, hi, pl.s)
		d := pl.down(x)
		parallel(len(d.p), func(a, b int) {
			for i := a; i < b; i++ {
				d.p[i] = lr.p[i] - d.p[i]
			}
		})
		e := pl.linear(d)
		pl.ar.put(d)
		parallel(len(x.p), func(a, b int) {
			xs, es := x.p[a:b], e.p[a:b]
			for i := range xs {
				xs[i] += es[i]
			}
		})
		pl.ar.put(e)
	}
	clampTo(x, lo, hi, pl.s)
}

// localRange is the min and max of every LR pixel's 3×3 neighbourhood.
func localRange(lr *plane) (lo, hi *plane) {
	w, h := lr.w, lr.h
	lo, hi = newPlane(w, h), newPlane(w, h)
	parallel(h, func(a, b int) {
		for y := a; y < b; y++ {
			ym, yp := max(y-1, 0), min(y+1, h-1)
			for x := 0; x < w; x++ {
				xm, xp := max(x-1, 0), min(x+1, w-1)
				r0, r1, r2 := lr.p[ym*w:], lr.p[y*w:], lr.p[yp*w:]
				lo.p[y*w+x] = min(r0[xm], r0[x], r0[xp], r1[xm], r1[x], r1[xp], r2[xm], r2[x], r2[xp])
				hi.p[y*w+x] = max(r0[xm], r0[x], r0[xp], r1[xm], r1[x], r1[xp], r2[xm], r2[x], r2[xp])
			}
		}
	})
	return lo, hi
}

// clampTo limits each HR pixel to the range of the LR pixel it lies in.
func clampTo(x, lo, hi *plane, s int) {
	parallel(x.h, func(a, b int) {
		for y := a; y < b; y++ {
			l, h := lo.p[(y/s)*lo.w:], hi.p[(y/s)*lo.w:]
			row := x.p[y*x.w : (y+1)*x.w]
			for xx := range row {
				i := xx / s
				row[xx] = min(max(row[xx], l[i]), h[i])
			}
		}
	})
}

// noiseSigma estimates the standard deviation of white noise in p with
// Immerkær's (1996) Laplacian-difference operator, σ = sqrt(π/2)·E|L|/6,
// evaluated per 8×8 block; the 20th percentile of the block estimates is
// returned so that edges and texture do not pass for noise.
func noiseSigma(p *plane) float64 {
	const bs = 8
	w, h := p.w, p.h
	if w < bs+2 || h < bs+2 {
		return 0
	}
	step := 1 // sample at most ~16k blocks
	if n := (w / bs) * (h / bs); n > 1<<14 {
		step = int(math.Ceil(math.Sqrt(float64(n) / (1 << 14))))
	}
	var est []float64
	for by := 1; by+bs < h; by += bs * step {
		for bx := 1; bx+bs < w; bx += bs * step {
			var sum float32
			for y := by; y < by+bs; y++ {
				r0, r1, r2 := p.p[(y-1)*w:], p.p[y*w:], p.p[(y+1)*w:]
				for x := bx; x < bx+bs; x++ {
					v := 4*r1[x] - 2*(r1[x-1]+r1[x+1]+r0[x]+r2[x]) + r0[x-1] + r0[x+1] + r2[x-1] + r2[x+1]
					if v < 0 {
						v = -v
					}
					sum += v
				}
			}
			est = append(est, float64(sum)/(bs*bs))
		}
	}
	slices.Sort(est)
	return math.Sqrt(math.Pi/2) * est[len(est)/5] / 6
}

// epsFor maps a noise estimate to the regularisation of P: clean input keeps
// the tuned value; noisier input (sensor noise, heavy JPEG) is damped
// steeply, so P tends to a mild low-pass instead of amplifying the noise.
const (
	epsPow  = 4   // eps grows as (sigma/noiseFloor)^epsPow above the floor
	iterOff = 4.5 // noise sigma above which the back-projection steps are skipped
)

func epsFor(sigma float64) float64 {
	if sigma <= noiseFloor {
		return baseEps
	}
	return baseEps * math.Pow(sigma/noiseFloor, epsPow)
}
