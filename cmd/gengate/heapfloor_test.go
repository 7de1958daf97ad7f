package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestFloorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name        string
		live, floor uint64
		base, want  int
	}{
		{"nothing live yet: the runtime's minimum reaches the floor", 0, 64 * mb, 100, 1600},
		{"little live: the minimum is the larger goal", 1 * mb, 64 * mb, 100, 1600},
		{"more live: live × (1 + p) reaches the floor", 16 * mb, 64 * mb, 100, 300},
		{"half the floor live: GOGC's own", 32 * mb, 64 * mb, 100, 100},
		{"above the floor: GOGC's own", 100 * mb, 64 * mb, 100, 100},
		{"a higher GOGC is kept", 16 * mb, 64 * mb, 500, 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := floorPercent(c.live, c.floor, c.base); got != c.want {
				t.Errorf("floorPercent(%d MB, %d MB, %d) = %d; want %d", c.live/mb, c.floor/mb, c.base, got, c.want)
			}
		})
	}
}

// TestHeapFloorGoal: with the floor on, the collector's heap goal after a
// cycle is near the floor, neither the runtime's 4 MB nor past the floor;
// stopped, the process's percentage is back.
func TestHeapFloorGoal(t *testing.T) {
	before := debug.SetGCPercent(100)
	debug.SetGCPercent(before)
	const floor = 48 << 20
	h := newHeapFloor(floor)
	goal := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	// A collection, then the finalizer's adjustment for what it left
	// live (a condition, not a duration), then one more collection with
	// that percentage.
	for range 2 {
		n := h.adjusted.Load()
		runtime.GC()
		for h.adjusted.Load() == n {
			runtime.Gosched()
		}
	}
	if g := goal(); g < floor/2 || g > floor*11/10 {
		t.Errorf("heap goal %d MB with a floor of %d MB", g>>20, floor>>20)
	}
	h.stop()
	if p := debug.SetGCPercent(before); p != before {
		t.Errorf("percentage %d after stop; want %d", p, before)
	}
}
