package upscale

import (
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// plane is one float32 channel, row-major.
type plane struct {
	w, h int
	p    []float32
}

func newPlane(w, h int) *plane { return &plane{w: w, h: h, p: make([]float32, w*h)} }

// arena recycles plane buffers within one Upscale call and, through
// pools that the garbage collector empties, across calls: big float planes
// would otherwise dominate the time with page faults and GC. A nil arena
// allocates.
type arena struct {
	mu   sync.Mutex
	free [][]float32
}

var pools sync.Map // rounded capacity -> *sync.Pool of *[]float32

// roundCap rounds n up to a multiple of 1/16 of its power of two, so
// similar sizes share pooled buffers (≤ 6 % waste).
func roundCap(n int) int {
	q := 1 << max(bits.Len(uint(n))-4, 0)
	return (n + q - 1) / q * q
}

// get returns an uninitialised w×h plane.
func (a *arena) get(w, h int) *plane {
	n := w * h
	if a != nil {
		a.mu.Lock()
		for i, b := range a.free {
			if cap(b) == roundCap(n) {
				a.free = append(a.free[:i], a.free[i+1:]...)
				a.mu.Unlock()
				return &plane{w: w, h: h, p: b[:n]}
			}
		}
		a.mu.Unlock()
		if p, ok := pools.Load(roundCap(n)); ok {
			if b, ok := p.(*sync.Pool).Get().(*[]float32); ok {
				return &plane{w: w, h: h, p: (*b)[:n]}
			}
		}
	}
	return &plane{w: w, h: h, p: make([]float32, n, roundCap(n))}
}

// put hands buffers back; the planes must not be used afterwards.
func (a *arena) put(ps ...*plane) {
	if a == nil {
		return
	}
	a.mu.Lock()
	for _, p := range ps {
		if p != nil && cap(p.p) == roundCap(len(p.p)) {
			a.free = append(a.free, p.p)
		}
	}
	a.mu.Unlock()
}

// release moves the arena's buffers to the shared pools.
func (a *arena) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.free {
		p, _ := pools.LoadOrStore(cap(b), &sync.Pool{})
		b := b
		p.(*sync.Pool).Put(&b)
	}
	a.free = nil
}

// table is a precomputed 1-D resampling: output j is
// sum_t w[j*taps+t] * in[reflect(start[j]+t)].
type table struct {
	nIn, nOut, taps int
	start           []int32
	w               []float32
	pad             int // reflection margin needed on each side
}

// reflect maps i into 0..n-1 with half-sample symmetric extension (MATLAB
// "symmetric"): -1 -> 0, n -> n-1.
func reflect(i, n int) int {
	for i < 0 || i >= n {
		if i < 0 {
			i = -1 - i
		}
		if i >= n {
			i = 2*n - 1 - i
		}
	}
	return i
}

// newTable builds the weights for output positions whose centre, in input
// pixel coordinates, is centre(j); kernel is evaluated at (centre - i)/stretch
// and has support radius support (in kernel units). Weights are normalised to
// sum to one.
func newTable(nIn, nOut int, centre func(j int) float64, kernel func(float64) float64, support, stretch float64) *table {
	r := support * stretch
	taps := int(math.Ceil(2*r)) + 1
	t := &table{nIn: nIn, nOut: nOut, taps: taps, start: make([]int32, nOut), w: make([]float32, nOut*taps)}
	ws := make([]float64, taps)
	for j := 0; j < nOut; j++ {
		c := centre(j)
		lo := int(math.Floor(c - r))
		if float64(lo) <= c-r { // exclude the zero at exactly -r
			lo++
		}
		var sum float64
		for k := 0; k < taps; k++ {
			ws[k] = kernel((c - float64(lo+k)) / stretch)
			sum += ws[k]
		}
		for k := 0; k < taps; k++ {
			t.w[j*taps+k] = float32(ws[k] / sum)
		}
		t.start[j] = int32(lo)
		if -lo > t.pad {
			t.pad = -lo
		}
		if e := lo + taps - nIn; e > t.pad {
			t.pad = e
		}
	}
	return t
}

// upTable: Lanczos-a interpolation by an integer factor s (output pixel
// centres at (j+0.5)/s-0.5 in input coordinates).
func upTable(nIn, s, a int) *table {
	return newTable(nIn, nIn*s, func(j int) float64 { return (float64(j)+0.5)/float64(s) - 0.5 },
		func(x float64) float64 { return lanczosKernel(x, float64(a)) }, float64(a), 1)
}

// downTable: MATLAB imresize(…, 1/s, 'bicubic') with antialiasing: Keys
// cubic (a = -0.5) widened by s.
func downTable(nIn, s int) *table {
	return newTable(nIn, nIn/s, func(j int) float64 { return (float64(j)+0.5)*float64(s) - 0.5 },
		cubic, 2, float64(s))
}

// convTable: a symmetric FIR filter applied at the same resolution.
func convTable(n int, k []float64) *table {
	r := (len(k) - 1) / 2
	t := &table{nIn: n, nOut: n, taps: len(k), start: make([]int32, n), w: make([]float32, n*len(k)), pad: r}
	for j := 0; j < n; j++ {
		t.start[j] = int32(j - r)
		for i, v := range k {
			t.w[j*len(k)+i] = float32(v)
		}
	}
	return t
}

func lanczosKernel(x, a float64) float64 {
	if x == 0 {
		return 1
	}
	if x <= -a || x >= a {
		return 0
	}
	px := math.Pi * x
	return a * math.Sin(px) * math.Sin(px/a) / (px * px)
}

func cubic(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x <= 1:
		return 1.5*x*x*x - 2.5*x*x + 1
	case x < 2:
		return -0.5*x*x*x + 2.5*x*x - 4*x + 2
	}
	return 0
}

// parallel runs f over [0,n) split in chunks, on GOMAXPROCS goroutines.
func parallel(n int, f func(lo, hi int)) {
	procs := runtime.GOMAXPROCS(0)
	if procs <= 1 || n < 16 {
		f(0, n)
		return
	}
	chunks := procs * 4
	if chunks > n {
		chunks = n
	}
	size := (n + chunks - 1) / chunks
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < procs; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				lo := c * size
				if lo >= n {
					return
				}
				f(lo, min(lo+size, n))
			}
		}()
	}
	wg.Wait()
}

// horiz resamples every row of src with t (t.nIn == src.w).
func horiz(src *plane, t *table, ar *arena) *plane {
	out := ar.get(t.nOut, src.h)
	parallel(src.h, func(lo, hi int) {
		buf := make([]float32, src.w+2*t.pad)
		for y := lo; y < hi; y++ {
			row := src.p[y*src.w : (y+1)*src.w]
			copy(buf[t.pad:], row)
			for i := 0; i < t.pad; i++ {
				buf[t.pad-1-i] = row[reflect(-1-i, src.w)]
				buf[t.pad+src.w+i] = row[reflect(src.w+i, src.w)]
			}
			o := out.p[y*out.w : (y+1)*out.w]
			horizRow(o, buf, t)
		}
	})
	return out
}

func horizRow(o, buf []float32, t *table) {
	taps := t.taps
	switch taps {
	case 6:
		for j := range o {
			s := int(t.start[j]) + t.pad
			b := buf[s : s+6 : s+6]
			w := t.w[j*6 : j*6+6 : j*6+6]
			o[j] = w[0]*b[0] + w[1]*b[1] + w[2]*b[2] + w[3]*b[3] + w[4]*b[4] + w[5]*b[5]
		}
	case 8:
		for j := range o {
			s := int(t.start[j]) + t.pad
			b := buf[s : s+8 : s+8]
			w := t.w[j*8 : j*8+8 : j*8+8]
			o[j] = w[0]*b[0] + w[1]*b[1] + w[2]*b[2] + w[3]*b[3] + w[4]*b[4] + w[5]*b[5] + w[6]*b[6] + w[7]*b[7]
		}
	default:
		for j := range o {
			s := int(t.start[j]) + t.pad
			b := buf[s : s+taps]
			w := t.w[j*taps : j*taps+taps]
			var acc float32
			for k, v := range w {
				acc += v * b[k]
			}
			o[j] = acc
		}
	}
}

// vert resamples every column of src with t (t.nIn == src.h).
func vert(src *plane, t *table, ar *arena) *plane {
	out := ar.get(src.w, t.nOut)
	w := src.w
	parallel(t.nOut, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			o := out.p[j*w : (j+1)*w]
			wt := t.w[j*t.taps : (j+1)*t.taps]
			s := int(t.start[j])
			rows := make([][]float32, 0, 16)
			ws := make([]float32, 0, 16)
			for k, c := range wt {
				if c == 0 {
					continue
				}
				y := reflect(s+k, src.h)
				rows = append(rows, src.p[y*w : (y+1)*w][:len(o)])
				ws = append(ws, c)
			}
			vertRow(o, rows, ws)
		}
	})
	return out
}

// resample2 applies tables separably: th on rows then tv on columns, choosing
// the cheaper order.
func resample2(src *plane, th, tv *table, ar *arena) *plane {
	costHV := src.h*th.nOut*th.taps + th.nOut*tv.nOut*tv.taps
	costVH := src.w*tv.nOut*tv.taps + tv.nOut*th.nOut*th.taps
	if costHV <= costVH {
		tmp := horiz(src, th, ar)
		out := vert(tmp, tv, ar)
		ar.put(tmp)
		return out
	}
	tmp := vert(src, tv, ar)
	out := horiz(tmp, th, ar)
	ar.put(tmp)
	return out
}

// vertRow sets o to the weighted sum of rows (all len(o) long), four rows
// per sweep.
func vertRow(o []float32, rows [][]float32, ws []float32) {
	k := 0
	first := true
	for ; k+4 <= len(rows); k += 4 {
		r0, r1, r2, r3 := rows[k][:len(o)], rows[k+1][:len(o)], rows[k+2][:len(o)], rows[k+3][:len(o)]
		c0, c1, c2, c3 := ws[k], ws[k+1], ws[k+2], ws[k+3]
		if first {
			for x := range o {
				o[x] = c0*r0[x] + c1*r1[x] + c2*r2[x] + c3*r3[x]
			}
			first = false
		} else {
			for x := range o {
				o[x] += c0*r0[x] + c1*r1[x] + c2*r2[x] + c3*r3[x]
			}
		}
	}
	for ; k < len(rows); k++ {
		r, c := rows[k][:len(o)], ws[k]
		if first {
			for x := range o {
				o[x] = c * r[x]
			}
			first = false
		} else {
			for x := range o {
				o[x] += c * r[x]
			}
		}
	}
	if first {
		clear(o)
	}
}
