package worker

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// slowCommitRunner hands out up to total tasks; each step frees its slot
// (as the service does just before its last write) and then waits on
// commit, as a last write waits for the store's batch and commit.
type slowCommitRunner struct {
	total  int
	commit chan struct{}

	mu      sync.Mutex
	handed  int
	waiting int // steps that freed their slot and wait on commit
}

func (r *slowCommitRunner) ClaimDue(ctx context.Context, limit int) ([]*gengate.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	give := min(limit, r.total-r.handed)
	r.handed += give
	out := make([]*gengate.Task, give)
	for i := range out {
		out[i] = &gengate.Task{ID: "t"}
	}
	return out, nil
}

func (r *slowCommitRunner) NextDue(context.Context) (time.Duration, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return 0, r.handed < r.total, nil
}

func (r *slowCommitRunner) Purge(context.Context) (int, error) { return 0, nil }

func (r *slowCommitRunner) Step(ctx context.Context, t *gengate.Task) error {
	gengate.ReleaseSlot(ctx)
	r.mu.Lock()
	r.waiting++
	r.mu.Unlock()
	select {
	case <-r.commit:
	case <-ctx.Done():
	}
	return nil
}

// TestSlotFreedBeforeLastWrite: a step's slot is free for the next claim
// once the step reaches its last write, not once that write commits (the
// lease keeps the task from other workers meanwhile), so a store slow to
// commit does not idle the slots: with 2 slots and every commit held, 4
// steps start. The steps waiting for their commit are bounded by twice
// the slots (TestSlotsRoom).
func TestSlotFreedBeforeLastWrite(t *testing.T) {
	r := &slowCommitRunner{total: 4, commit: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, r, gengate.NewEvents(), Config{Concurrency: 2, PollInterval: time.Hour, Grace: time.Minute}, slog.New(slog.DiscardHandler))
	}()
	deadline := time.Now().Add(20 * time.Second) // a failure, not a pace: the wait ends on the condition
	for {
		r.mu.Lock()
		waiting := r.waiting
		r.mu.Unlock()
		if waiting == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d steps started while the commits were held; want 4 (2 slots, each freed before its step's last write)", waiting)
		}
		<-time.After(time.Millisecond)
	}
	close(r.commit)
	cancel()
	<-done
}

// TestSlotsRoom: a claim takes at most the free slots, and never more
// steps than twice the slots alive, counting those whose slots were freed
// before their last write.
func TestSlotsRoom(t *testing.T) {
	s := newSlots(2)
	steps := []struct {
		do   func()
		room int
	}{
		{func() {}, 2},
		{func() { s.take(); s.take() }, 0}, // both slots busy
		{func() { s.free(); s.free() }, 2}, // both freed before their last writes
		{func() { s.take(); s.take() }, 0}, // 4 alive: the bound
		{func() { s.free(); s.free() }, 0}, // slots free, but 4 steps still wait for commits
		{func() { s.end(false) }, 1},       // one returned (its slot was freed before)
		{func() { s.end(false); s.end(false) }, 2},
		{func() { s.end(false) }, 2},
	}
	for i, st := range steps {
		st.do()
		if got := s.room(); got != st.room {
			t.Fatalf("after step %d: room %d; want %d (idle %d, alive %d)", i, got, st.room, s.idle, s.alive)
		}
	}
	if s.idle != 2 || s.alive != 0 {
		t.Errorf("at the end: idle %d, alive %d; want 2 and 0", s.idle, s.alive)
	}
}
