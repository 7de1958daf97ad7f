package main

// A floor under the garbage collector's heap goal.
//
// The Go collector starts a cycle when the heap has grown by GOGC percent
// (100) over what the last cycle left live, and never below 4 MB. A
// gengate serving submits keeps very little live (1–3 MB: a request's
// objects die with it) and allocates fast, so with the defaults it
// collected about 60 times a second under `gengate bench submit`, each
// cycle taking a quarter of the process's processors for its mark and
// stopping the world twice: several percent of a submit's CPU and stalls
// in the writer's path.
//
// serve --gc-heap-floor (64 MiB) raises the goal to at least the floor:
// after each cycle the percentage is set so that the next goal is the
// larger of the floor and what GOGC alone would give. A process that keeps
// a lot live (10,000 waiting calls) is untouched: its goal is already
// above the floor. The heap may so grow to the floor while little of it is
// live: a bounded cost of memory, given by the flag, for far fewer
// cycles. --memory-limit still caps the heap: the runtime collects as it
// nears the limit whatever the percentage.

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// heapFloor re-sets the collector's percentage after each cycle.
type heapFloor struct {
	floor uint64 // bytes
	base  int    // the percentage without a floor: GOGC's (100 by default)

	mu      sync.Mutex // the finalizer's adjustments against stop
	percent int        // the percentage set now
	stopped bool
	sample  []metrics.Sample
	// adjusted counts the adjustments made after a collection.
	adjusted atomic.Int64
}

// startHeapFloor keeps the collector's heap goal at least floor bytes
// until stop is called; floor 0 does nothing. A GOGC of off (the
// collector disabled) is left alone.
func startHeapFloor(floor uint64) (stop func()) {
	h := newHeapFloor(floor)
	if h == nil {
		return func() {}
	}
	return h.stop
}

// newHeapFloor starts the floor; nil when there is none to keep.
func newHeapFloor(floor uint64) *heapFloor {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if floor == 0 || base < 0 {
		return nil
	}
	h := &heapFloor{floor: floor, base: base, percent: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	h.adjust()
	h.arm()
	return h
}

// stop gives the process its own percentage back.
func (h *heapFloor) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	debug.SetGCPercent(h.base)
}

// sentinel is allocated for its finalizer, which runs once a cycle has
// found it unreachable: after each collection. It is larger than 16 bytes
// so that the runtime gives it an allocation of its own.
type sentinel struct{ _ [32]byte }

func (h *heapFloor) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		if h.adjust() {
			h.adjusted.Add(1)
			h.arm()
		}
	})
}

// adjust sets the percentage for what the last cycle left live; it
// reports false once stopped.
func (h *heapFloor) adjust() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	metrics.Read(h.sample)
	if h.sample[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	p := floorPercent(h.sample[0].Value.Uint64(), h.floor, h.base)
	// Small changes are not worth a call into the runtime.
	if p != h.percent && (p > h.percent*11/10 || p < h.percent*9/10 || p == h.base) {
		h.percent = p
		debug.SetGCPercent(p)
	}
	return true
}

// runtimeHeapMinimum is the Go runtime's least heap goal at a percentage
// of 100 (4 MB); it scales with the percentage.
const runtimeHeapMinimum = 4 << 20

// floorPercent is the collector's percentage that puts the next goal at
// the floor, and never below base. The runtime's goal is the larger of
// live × (1 + percent/100) and its minimum, 4 MB × percent/100: the
// percentage is the smaller of the two that reach the floor, so that
// neither goal passes it.
func floorPercent(live, floor uint64, base int) int {
	if live >= floor {
		return base
	}
	p := floor * 100 / runtimeHeapMinimum
	if live > 0 {
		p = min(p, (floor-live)*100/live)
	}
	return max(int(p), base)
}
