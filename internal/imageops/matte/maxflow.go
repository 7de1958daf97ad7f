package matte

import "unsafe"

// Boykov-Kolmogorov max-flow ("An Experimental Comparison of Min-Cut/Max-Flow
// Algorithms for Energy Minimization in Vision", PAMI 2004) specialised to an
// 8-connected w×h grid. Arc a = node*8 + k leaves node in direction k; its
// sister (reverse arc) is neighbour*8 + (7-k). Arcs that would leave the
// image do not exist: a node's nbr bits say which do, and their capacity
// stays 0.
//
// Each node is one 64-byte record holding its search state, its terminal
// capacity and the residual capacities of its eight arcs, and a
// neighbour is found by adding the direction's offset. A step of the
// search or of an augmenting path then touches one cache line per node;
// the solve is memory bound, and this layout (instead of separate arrays
// for each field and a head array of 8 int32 per node) makes it faster
// without changing any result.

const (
	parentNone     int32 = -1 // free node
	parentTerminal int32 = -2 // attached directly to its terminal
	parentOrphan   int32 = -3
)

// Directions: index k and 7-k are opposite.
var gridDX = [8]int{-1, 0, 1, -1, 1, -1, 0, 1}
var gridDY = [8]int{-1, -1, -1, 0, 0, 1, 1, 1}

// bkNode is a node of the grid graph.
type bkNode struct {
	rcap   [8]float32 // residual capacity of the arc in each direction
	trcap  float32    // >0 residual from source, <0 residual to sink
	parent int32      // arc to parent, or parent* constants
	ts     int32
	dist   int32
	sink   bool  // belongs to the sink tree
	active bool  // in the active queue
	nbr    uint8 // bit k: the neighbour in direction k exists
	_      [13]byte
}

var _ [64 - unsafe.Sizeof(bkNode{})]struct{} // one cache line

type gridGraph struct {
	w, h  int
	off   [8]int32 // per direction: node index offset of the neighbour
	node  []bkNode
	queue []int32 // active nodes FIFO
	qhead int
	orph  []int32
	time  int32
	flow  float64
}

func newGridGraph(w, h int) *gridGraph {
	n := w * h
	g := &gridGraph{w: w, h: h, node: make([]bkNode, n)}
	for k := 0; k < 8; k++ {
		g.off[k] = int32(gridDY[k]*w + gridDX[k])
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var m uint8
			for k := 0; k < 8; k++ {
				nx, ny := x+gridDX[k], y+gridDY[k]
				if nx >= 0 && ny >= 0 && nx < w && ny < h {
					m |= 1 << k
				}
			}
			g.node[y*w+x].nbr = m
		}
	}
	return g
}

// neighbour returns the head of arc a (node a/8's neighbour in direction
// a%8), or -1 when the arc leaves the image.
func (g *gridGraph) neighbour(a int32) int32 {
	if g.node[a>>3].nbr&(1<<(a&7)) == 0 {
		return -1
	}
	return a>>3 + g.off[a&7]
}

// headOf returns the head of an existing arc a.
func (g *gridGraph) headOf(a int32) int32 {
	return a>>3 + g.off[a&7]
}

// sisterOf returns the sister of an existing arc a: the arc of its head
// pointing back.
func (g *gridGraph) sisterOf(a int32) int32 {
	return (a>>3+g.off[a&7])*8 + 7 - (a & 7)
}

// cap returns a pointer to the residual capacity of arc a.
func (g *gridGraph) cap(a int32) *float32 {
	return &g.node[a>>3].rcap[a&7]
}

// load prepares a new solve: arc capacities from pair (8 per node, as
// pairWeights gives them) and terminal capacities from t (>0 from the
// source, <0 to the sink).
func (g *gridGraph) load(pair, t []float32) {
	for i := range g.node {
		nd := &g.node[i]
		*nd = bkNode{rcap: [8]float32(pair[8*i : 8*i+8]), trcap: t[i], parent: parentNone, nbr: nd.nbr}
	}
	g.queue = g.queue[:0]
	g.qhead = 0
	g.orph = g.orph[:0]
	g.time = 0
	g.flow = 0
}

// reload prepares a solve of the same graph with new terminal capacities
// t, starting from the flow the last solve left (prev were its terminal
// capacities): each node's terminal residual moves by t-prev, the arc
// residuals stay, and the search trees are grown again. The flow already
// pushed through the arcs stays valid, so the solve only pushes what the
// change needs (Kohli & Torr, "Dynamic Graph Cuts", PAMI 2007). The cut
// is the same as a solve from zero flow up to float32 rounding.
func (g *gridGraph) reload(t, prev []float32) {
	for i := range g.node {
		nd := &g.node[i]
		nd.trcap += t[i] - prev[i]
		nd.parent, nd.ts, nd.dist, nd.sink, nd.active = parentNone, 0, 0, false, false
	}
	g.queue = g.queue[:0]
	g.qhead = 0
	g.orph = g.orph[:0]
	g.time = 0
}

func (g *gridGraph) setActive(i int32) {
	if nd := &g.node[i]; !nd.active {
		nd.active = true
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
		nd := &g.node[i]
		nd.active = false
		if nd.parent != parentNone {
			return i
		}
	}
}

// maxflow runs the algorithm; afterwards inSource reports the labelling.
func (g *gridGraph) maxflow() float64 {
	nodes := g.node
	for i := range nodes {
		nd := &nodes[i]
		c := nd.trcap
		if c > 0 {
			nd.sink = false
			nd.parent = parentTerminal
			nd.ts, nd.dist = 0, 1
			g.setActive(int32(i))
		} else if c < 0 {
			nd.sink = true
			nd.parent = parentTerminal
			nd.ts, nd.dist = 0, 1
			g.setActive(int32(i))
		}
	}
	cur := int32(-1)
	for {
		i := cur
		if i >= 0 {
			if nodes[i].parent == parentNone {
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
		ni := &nodes[i]
		if !ni.sink {
			for k := int32(0); k < 8; k++ {
				if ni.rcap[k] <= 0 { // also every arc leaving the image
					continue
				}
				j := i + g.off[k]
				nj := &nodes[j]
				if nj.parent == parentNone {
					nj.sink = false
					nj.parent = j*8 + 7 - k
					nj.ts = ni.ts
					nj.dist = ni.dist + 1
					g.setActive(j)
				} else if nj.sink {
					found = base + k
					break
				} else if nj.ts <= ni.ts && nj.dist > ni.dist {
					nj.parent = j*8 + 7 - k
					nj.ts = ni.ts
					nj.dist = ni.dist + 1
				}
			}
		} else {
			nbr := ni.nbr
			for k := int32(0); k < 8; k++ {
				if nbr&(1<<k) == 0 {
					continue
				}
				j := i + g.off[k]
				nj := &nodes[j]
				if nj.rcap[7-k] <= 0 {
					continue
				}
				s := j*8 + 7 - k
				if nj.parent == parentNone {
					nj.sink = true
					nj.parent = s
					nj.ts = ni.ts
					nj.dist = ni.dist + 1
					g.setActive(j)
				} else if !nj.sink {
					found = s // arc from source-tree node j to i
					break
				} else if nj.ts <= ni.ts && nj.dist > ni.dist {
					nj.parent = s
					nj.ts = ni.ts
					nj.dist = ni.dist + 1
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
	nodes := g.node
	tail := a / 8
	bn := *g.cap(a)
	// source side
	for i := tail; ; {
		nd := &nodes[i]
		p := nd.parent
		if p == parentTerminal {
			if nd.trcap < bn {
				bn = nd.trcap
			}
			break
		}
		if c := *g.cap(g.sisterOf(p)); c < bn {
			bn = c
		}
		i = g.headOf(p)
	}
	for i := g.headOf(a); ; {
		nd := &nodes[i]
		p := nd.parent
		if p == parentTerminal {
			if -nd.trcap < bn {
				bn = -nd.trcap
			}
			break
		}
		if c := nd.rcap[p&7]; c < bn {
			bn = c
		}
		i = g.headOf(p)
	}
	*g.cap(g.sisterOf(a)) += bn
	*g.cap(a) -= bn
	for i := tail; ; {
		nd := &nodes[i]
		p := nd.parent
		if p == parentTerminal {
			nd.trcap -= bn
			if nd.trcap <= 0 {
				nd.trcap = 0
				nd.parent = parentOrphan
				g.orph = append(g.orph, i)
			}
			break
		}
		next := g.headOf(p)
		rs := &nodes[next].rcap[7-p&7] // the sister of p
		nd.rcap[p&7] += bn
		*rs -= bn
		if *rs <= 0 {
			*rs = 0
			nd.parent = parentOrphan
			g.orph = append(g.orph, i)
		}
		i = next
	}
	for i := g.headOf(a); ; {
		nd := &nodes[i]
		p := nd.parent
		if p == parentTerminal {
			nd.trcap += bn
			if nd.trcap >= 0 {
				nd.trcap = 0
				nd.parent = parentOrphan
				g.orph = append(g.orph, i)
			}
			break
		}
		next := g.headOf(p)
		rp := &nd.rcap[p&7]
		nodes[next].rcap[7-p&7] += bn
		*rp -= bn
		if *rp <= 0 {
			*rp = 0
			nd.parent = parentOrphan
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
	nodes := g.node
	ni := &nodes[i]
	isSink := ni.sink
	nbr := ni.nbr
	dmin := infDist
	amin := int32(-1)
	base := i * 8
	for k := int32(0); k < 8; k++ {
		if nbr&(1<<k) == 0 {
			continue
		}
		j := i + g.off[k]
		nj := &nodes[j]
		var c float32
		if isSink {
			c = ni.rcap[k]
		} else {
			c = nj.rcap[7-k]
		}
		if c <= 0 || nj.sink != isSink || nj.parent == parentNone {
			continue
		}
		// trace origin
		d := int32(0)
		jj := j
		for {
			nd := &nodes[jj]
			if nd.ts == g.time {
				d += nd.dist
				break
			}
			p := nd.parent
			d++
			if p == parentTerminal {
				nd.ts = g.time
				nd.dist = 1
				break
			}
			if p == parentOrphan {
				d = infDist
				break
			}
			jj = g.headOf(p)
		}
		if d < infDist {
			if d < dmin {
				amin = base + k
				dmin = d
			}
			for jj = j; nodes[jj].ts != g.time; jj = g.headOf(nodes[jj].parent) {
				nodes[jj].ts = g.time
				nodes[jj].dist = d
				d--
			}
		}
	}
	if amin >= 0 {
		ni.parent = amin
		ni.ts = g.time
		ni.dist = dmin + 1
		return
	}
	// no valid parent: free the node
	for k := int32(0); k < 8; k++ {
		if nbr&(1<<k) == 0 {
			continue
		}
		j := i + g.off[k]
		nj := &nodes[j]
		if nj.sink != isSink {
			continue
		}
		p := nj.parent
		if p == parentNone {
			continue
		}
		var c float32
		if isSink {
			c = ni.rcap[k]
		} else {
			c = nj.rcap[7-k]
		}
		if c > 0 {
			g.setActive(j)
		}
		if p != parentTerminal && p != parentOrphan && g.headOf(p) == i {
			nj.parent = parentOrphan
			g.orph = append(g.orph, j)
		}
	}
	ni.parent = parentNone
}

// inSource reports whether node i ends on the source (foreground) side.
func (g *gridGraph) inSource(i int) bool {
	return g.node[i].parent != parentNone && !g.node[i].sink
}
