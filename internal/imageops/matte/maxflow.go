package matte

// Boykov-Kolmogorov max-flow ("An Experimental Comparison of Min-Cut/Max-Flow
// Algorithms for Energy Minimization in Vision", PAMI 2004) specialised to an
// 8-connected w×h grid. Arc a = node*8 + k leaves node in direction k; its
// sister (reverse arc) is neighbour*8 + (7-k). Missing arcs at the image
// border have head -1 and are skipped.

const (
	parentNone     int32 = -1 // free node
	parentTerminal int32 = -2 // attached directly to its terminal
	parentOrphan   int32 = -3
)

// Directions: index k and 7-k are opposite.
var gridDX = [8]int{-1, 0, 1, -1, 1, -1, 0, 1}
var gridDY = [8]int{-1, -1, -1, 0, 0, 1, 1, 1}

type gridGraph struct {
	w, h   int
	head   []int32   // per arc: neighbour node, -1 if none
	rcap   []float32 // per arc: residual capacity
	trcap  []float32 // per node: >0 residual from source, <0 residual to sink
	parent []int32   // per node: arc to parent, or parent* constants
	sink   []bool    // per node: belongs to the sink tree
	ts     []int32
	dist   []int32
	active []bool
	queue  []int32 // active nodes FIFO
	qhead  int
	orph   []int32
	time   int32
	flow   float64
}

func newGridGraph(w, h int) *gridGraph {
	n := w * h
	g := &gridGraph{w: w, h: h,
		head: make([]int32, 8*n), rcap: make([]float32, 8*n), trcap: make([]float32, n),
		parent: make([]int32, n), sink: make([]bool, n), ts: make([]int32, n),
		dist: make([]int32, n), active: make([]bool, n)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			for k := 0; k < 8; k++ {
				nx, ny := x+gridDX[k], y+gridDY[k]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					g.head[8*i+k] = -1
				} else {
					g.head[8*i+k] = int32(ny*w + nx)
				}
			}
		}
	}
	return g
}

// arcHeadSister returns the sister of arc a: the arc of head(a) pointing back.
func (g *gridGraph) sisterOf(a int32) int32 {
	return g.head[a]*8 + 7 - (a & 7)
}

// reset prepares a new solve on the same grid; callers then set rcap and trcap.
func (g *gridGraph) reset() {
	for i := range g.parent {
		g.parent[i] = parentNone
		g.sink[i] = false
		g.ts[i] = 0
		g.dist[i] = 0
		g.active[i] = false
	}
	g.queue = g.queue[:0]
	g.qhead = 0
	g.orph = g.orph[:0]
	g.time = 0
	g.flow = 0
}

func (g *gridGraph) setActive(i int32) {
	if !g.active[i] {
		g.active[i] = true
		g.queue = append(g.queue, i)
	}
}

func (g *gridGraph) nextActive() int32 {
	for {
		if g.qhead >= len(g.queue) {
			g.queue = g.queue[:0]
			g.qhead = 0
			return -1
		}
		i := g.queue[g.qhead]
		g.qhead++
		if g.qhead > 1<<16 && g.qhead*2 > len(g.queue) {
			n := copy(g.queue, g.queue[g.qhead:])
			g.queue = g.queue[:n]
			g.qhead = 0
		}
		g.active[i] = false
		if g.parent[i] != parentNone {
			return i
		}
	}
}

// maxflow runs the algorithm; afterwards inSource reports the labelling.
func (g *gridGraph) maxflow() float64 {
	for i := range g.trcap {
		c := g.trcap[i]
		if c > 0 {
			g.sink[i] = false
			g.parent[i] = parentTerminal
			g.ts[i], g.dist[i] = 0, 1
			g.setActive(int32(i))
		} else if c < 0 {
			g.sink[i] = true
			g.parent[i] = parentTerminal
			g.ts[i], g.dist[i] = 0, 1
			g.setActive(int32(i))
		}
	}
	cur := int32(-1)
	for {
		i := cur
		if i >= 0 {
			if g.parent[i] == parentNone {
				i = -1
			}
		}
		if i < 0 {
			i = g.nextActive()
			if i < 0 {
				break
			}
		}
		// grow
		found := int32(-1)
		base := i * 8
		if !g.sink[i] {
			for k := int32(0); k < 8; k++ {
				a := base + k
				j := g.head[a]
				if j < 0 || g.rcap[a] <= 0 {
					continue
				}
				if g.parent[j] == parentNone {
					g.sink[j] = false
					g.parent[j] = j*8 + 7 - k
					g.ts[j] = g.ts[i]
					g.dist[j] = g.dist[i] + 1
					g.setActive(j)
				} else if g.sink[j] {
					found = a
					break
				} else if g.ts[j] <= g.ts[i] && g.dist[j] > g.dist[i] {
					g.parent[j] = j*8 + 7 - k
					g.ts[j] = g.ts[i]
					g.dist[j] = g.dist[i] + 1
				}
			}
		} else {
			for k := int32(0); k < 8; k++ {
				a := base + k
				j := g.head[a]
				if j < 0 {
					continue
				}
				s := j*8 + 7 - k
				if g.rcap[s] <= 0 {
					continue
				}
				if g.parent[j] == parentNone {
					g.sink[j] = true
					g.parent[j] = s
					g.ts[j] = g.ts[i]
					g.dist[j] = g.dist[i] + 1
					g.setActive(j)
				} else if !g.sink[j] {
					found = s // arc from source-tree node j to i
					break
				} else if g.ts[j] <= g.ts[i] && g.dist[j] > g.dist[i] {
					g.parent[j] = s
					g.ts[j] = g.ts[i]
					g.dist[j] = g.dist[i] + 1
				}
			}
		}
		g.time++
		if found >= 0 {
			cur = i
			g.augment(found)
			g.processOrphans()
		} else {
			cur = -1
		}
	}
	return g.flow
}

// augment pushes flow along the path through middle arc a (source tree → sink tree).
func (g *gridGraph) augment(a int32) {
	tail := a / 8
	bn := g.rcap[a]
	// source side
	for i := tail; ; {
		p := g.parent[i]
		if p == parentTerminal {
			if g.trcap[i] < bn {
				bn = g.trcap[i]
			}
			break
		}
		if c := g.rcap[g.sisterOf(p)]; c < bn {
			bn = c
		}
		i = g.head[p]
	}
	for i := g.head[a]; ; {
		p := g.parent[i]
		if p == parentTerminal {
			if -g.trcap[i] < bn {
				bn = -g.trcap[i]
			}
			break
		}
		if c := g.rcap[p]; c < bn {
			bn = c
		}
		i = g.head[p]
	}
	g.rcap[g.sisterOf(a)] += bn
	g.rcap[a] -= bn
	for i := tail; ; {
		p := g.parent[i]
		if p == parentTerminal {
			g.trcap[i] -= bn
			if g.trcap[i] <= 0 {
				g.trcap[i] = 0
				g.parent[i] = parentOrphan
				g.orph = append(g.orph, i)
			}
			break
		}
		s := g.sisterOf(p)
		g.rcap[p] += bn
		g.rcap[s] -= bn
		next := g.head[p]
		if g.rcap[s] <= 0 {
			g.rcap[s] = 0
			g.parent[i] = parentOrphan
			g.orph = append(g.orph, i)
		}
		i = next
	}
	for i := g.head[a]; ; {
		p := g.parent[i]
		if p == parentTerminal {
			g.trcap[i] += bn
			if g.trcap[i] >= 0 {
				g.trcap[i] = 0
				g.parent[i] = parentOrphan
				g.orph = append(g.orph, i)
			}
			break
		}
		s := g.sisterOf(p)
		g.rcap[s] += bn
		g.rcap[p] -= bn
		next := g.head[p]
		if g.rcap[p] <= 0 {
			g.rcap[p] = 0
			g.parent[i] = parentOrphan
			g.orph = append(g.orph, i)
		}
		i = next
	}
	g.flow += float64(bn)
}

const infDist = int32(1 << 30)

func (g *gridGraph) processOrphans() {
	for len(g.orph) > 0 {
		// FIFO processing
		i := g.orph[0]
		g.orph = g.orph[1:]
		if len(g.orph) == 0 {
			g.orph = g.orph[:0:cap(g.orph)]
		}
		g.processOrphan(i)
	}
	// reclaim backing array
	g.orph = g.orph[:0]
}

func (g *gridGraph) processOrphan(i int32) {
	isSink := g.sink[i]
	dmin := infDist
	amin := int32(-1)
	base := i * 8
	for k := int32(0); k < 8; k++ {
		a0 := base + k
		j := g.head[a0]
		if j < 0 {
			continue
		}
		var c float32
		if isSink {
			c = g.rcap[a0]
		} else {
			c = g.rcap[j*8+7-k]
		}
		if c <= 0 || g.sink[j] != isSink || g.parent[j] == parentNone {
			continue
		}
		// trace origin
		d := int32(0)
		jj := j
		for {
			if g.ts[jj] == g.time {
				d += g.dist[jj]
				break
			}
			p := g.parent[jj]
			d++
			if p == parentTerminal {
				g.ts[jj] = g.time
				g.dist[jj] = 1
				break
			}
			if p == parentOrphan {
				d = infDist
				break
			}
			jj = g.head[p]
		}
		if d < infDist {
			if d < dmin {
				amin = a0
				dmin = d
			}
			for jj = j; g.ts[jj] != g.time; jj = g.head[g.parent[jj]] {
				g.ts[jj] = g.time
				g.dist[jj] = d
				d--
			}
		}
	}
	if amin >= 0 {
		g.parent[i] = amin
		g.ts[i] = g.time
		g.dist[i] = dmin + 1
		return
	}
	// no valid parent: free the node
	for k := int32(0); k < 8; k++ {
		a0 := base + k
		j := g.head[a0]
		if j < 0 || g.sink[j] != isSink {
			continue
		}
		p := g.parent[j]
		if p == parentNone {
			continue
		}
		var c float32
		if isSink {
			c = g.rcap[a0]
		} else {
			c = g.rcap[j*8+7-k]
		}
		if c > 0 {
			g.setActive(j)
		}
		if p != parentTerminal && p != parentOrphan && g.head[p] == i {
			g.parent[j] = parentOrphan
			g.orph = append(g.orph, j)
		}
	}
	g.parent[i] = parentNone
}

// inSource reports whether node i ends on the source (foreground) side.
func (g *gridGraph) inSource(i int) bool {
	return g.parent[i] != parentNone && !g.sink[i]
}
