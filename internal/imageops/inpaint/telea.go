package inpaint

import (
	"container/heap"
	"math"
)

// fimg is a 3-channel float image, interleaved RGB, values 0..255.
type fimg struct {
	w, h int
	pix  []float32
}

func newFimg(w, h int) *fimg { return &fimg{w: w, h: h, pix: make([]float32, 3*w*h)} }

func (m *fimg) clone() *fimg {
	return &fimg{w: m.w, h: m.h, pix: append([]float32(nil), m.pix...)}
}

// Fast-marching states.
const (
	fmKnown  = 0
	fmBand   = 1
	fmInside = 2
)

type fmItem struct {
	t   float32
	idx int32
}

type fmHeap []fmItem

func (h fmHeap) Len() int           { return len(h) }
func (h fmHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h fmHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fmHeap) Push(x any)        { *h = append(*h, x.(fmItem)) }
func (h *fmHeap) Pop() any          { o := *h; it := o[len(o)-1]; *h = o[:len(o)-1]; return it }

// telea fills the hole pixels of img in place with Telea's fast-marching
// method (A. Telea, "An Image Inpainting Technique Based on the Fast
// Marching Method", J. Graphics Tools 9(1), 2004), the algorithm behind
// OpenCV's INPAINT_TELEA: pixels are filled in order of their distance to
// the hole boundary, each as a weighted average of the already known
// pixels within radius, weights favouring close pixels, pixels on the
// same level set and pixels along the marching direction. Like OpenCV,
// the first-order gradient term is left out (it overshoots on edges).
func telea(img *fimg, hole []bool, radius int) {
	teleaLimit(img, hole, radius, float32(math.Inf(1)))
}

// teleaLimit is telea stopping once the march is farther than limit from
// the boundary (the pixels beyond are left as they were).
func teleaLimit(img *fimg, hole []bool, radius int, limit float32) {
	w, h := img.w, img.h
	n := w * h
	flag := make([]uint8, n)
	T := make([]float32, n)
	const big = 1e6
	for i, v := range hole {
		if v {
			flag[i] = fmInside
			T[i] = big
		}
	}
	hp := &fmHeap{}
	// The band starts as the known pixels touching the hole.
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if hole[i] {
				continue
			}
			if (x > 0 && hole[i-1]) || (x < w-1 && hole[i+1]) || (y > 0 && hole[i-w]) || (y < h-1 && hole[i+w]) {
				flag[i] = fmBand
				*hp = append(*hp, fmItem{0, int32(i)})
			}
		}
	}
	heap.Init(hp)
	solve := func(i1, i2 int) float32 {
		sol := float32(big)
		a11, a22 := T[i1], T[i2]
		if flag[i1] != fmInside {
			if flag[i2] != fmInside {
				d := a11 - a22
				if d >= 1 || d <= -1 {
					sol = 1 + min(a11, a22)
				} else {
					sol = (a11 + a22 + float32(math.Sqrt(float64(2-d*d)))) * 0.5
				}
			} else {
				sol = 1 + a11
			}
		} else if flag[i2] != fmInside {
			sol = 1 + a22
		}
		return sol
	}
	r2 := radius * radius
	fill := func(x, y int) {
		i := y*w + x
		// gradient of T at p
		var gx, gy float32
		if x > 0 && x < w-1 && flag[i+1] != fmInside && flag[i-1] != fmInside {
			gx = (T[i+1] - T[i-1]) * 0.5
		} else if x < w-1 && flag[i+1] != fmInside {
			gx = T[i+1] - T[i]
		} else if x > 0 && flag[i-1] != fmInside {
			gx = T[i] - T[i-1]
		}
		if y > 0 && y < h-1 && flag[i+w] != fmInside && flag[i-w] != fmInside {
			gy = (T[i+w] - T[i-w]) * 0.5
		} else if y < h-1 && flag[i+w] != fmInside {
			gy = T[i+w] - T[i]
		} else if y > 0 && flag[i-w] != fmInside {
			gy = T[i] - T[i-w]
		}
		var s, a0, a1, a2 float32
		for dy := -radius; dy <= radius; dy++ {
			yy := y + dy
			if yy < 0 || yy >= h {
				continue
			}
			for dx := -radius; dx <= radius; dx++ {
				xx := x + dx
				if xx < 0 || xx >= w || dx*dx+dy*dy > r2 || (dx == 0 && dy == 0) {
					continue
				}
				q := yy*w + xx
				if flag[q] == fmInside {
					continue
				}
				rx, ry := float32(-dx), float32(-dy)
				l2 := rx*rx + ry*ry
				dst := 1 / (l2 * float32(math.Sqrt(float64(l2))))
				dt := T[q] - T[i]
				if dt < 0 {
					dt = -dt
				}
				lev := 1 / (1 + dt)
				dir := rx*gx + ry*gy
				if dir < 0 {
					dir = -dir
				}
				if dir <= 0.01 {
					dir = 1e-6
				}
				wt := dst * lev * dir
				s += wt
				a0 += wt * img.pix[3*q]
				a1 += wt * img.pix[3*q+1]
				a2 += wt * img.pix[3*q+2]
			}
		}
		if s > 0 {
			img.pix[3*i] = a0 / s
			img.pix[3*i+1] = a1 / s
			img.pix[3*i+2] = a2 / s
		}
	}
	for hp.Len() > 0 {
		it := heap.Pop(hp).(fmItem)
		i := int(it.idx)
		if flag[i] == fmKnown {
			continue
		}
		if it.t > limit {
			break
		}
		flag[i] = fmKnown
		x, y := i%w, i/w
		for _, nb := range [4][2]int{{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}} {
			nx, ny := nb[0], nb[1]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			j := ny*w + nx
			if flag[j] != fmInside {
				continue
			}
			// neighbours of j for the eikonal update (out of range → self, INSIDE)
			l, r, u, d := j, j, j, j
			if nx > 0 {
				l = j - 1
			}
			if nx < w-1 {
				r = j + 1
			}
			if ny > 0 {
				u = j - w
			}
			if ny < h-1 {
				d = j + w
			}
			t := min(solve(u, l), solve(d, l), solve(u, r), solve(d, r))
			T[j] = t
			flag[j] = fmBand
			fill(nx, ny)
			heap.Push(hp, fmItem{t, int32(j)})
		}
	}
}
