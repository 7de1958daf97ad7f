package gengate

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestNewTaskID: task ids are UUIDs of version 7 that sort in the order of
// their times, distinct within one millisecond.
func TestNewTaskID(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)
	var ids []string
	for _, d := range []time.Duration{0, time.Millisecond, time.Second, time.Hour, 24 * time.Hour, 3 * 365 * 24 * time.Hour} {
		id := NewTaskID(t0.Add(d))
		if !uuidV7.MatchString(id) {
			t.Errorf("NewTaskID = %q; want a UUID of version 7", id)
		}
		ids = append(ids, id)
	}
	if !slices.IsSorted(ids) {
		t.Errorf("ids of increasing times %v; want them sorted", ids)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := NewTaskID(t0)
		if seen[id] {
			t.Fatalf("NewTaskID gave %s twice in one millisecond", id)
		}
		seen[id] = true
	}
}

// TestOutputShard: the outputs of time-ordered ids still spread over the
// 256 directories; an older random id keeps its directory.
func TestOutputShard(t *testing.T) {
	now := time.Now()
	shards := map[string]bool{}
	for range 2000 {
		shards[outputShard(NewTaskID(now))] = true
	}
	if len(shards) < 200 {
		t.Errorf("2,000 task ids of one millisecond went to %d directories; want nearly all 256", len(shards))
	}
	for _, c := range []struct{ id, want string }{
		{"3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", "3f"}, // NewID (version 4): its first two
		{"019ab2c3-d4e5-7f60-8a1b-2c3d4e5f6a7b", "7b"}, // NewTaskID: its last two
		{"x", "x"},
	} {
		if got := outputShard(c.id); got != c.want {
			t.Errorf("outputShard(%q) = %q; want %q", c.id, got, c.want)
		}
	}
}
