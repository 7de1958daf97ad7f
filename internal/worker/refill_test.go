package worker

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// waveRunner hands out 8 tasks at the first claim and, at the second,
// waits until all 8 steps have ended before it answers: meanwhile every
// step's slot comes free. It records the limit of each claim.
type waveRunner struct {
	mu       sync.Mutex
	limits   []int
	handed   int
	ended    atomic.Int64
	allEnded chan struct{} // closed when the first 8 steps have ended
	hold     chan struct{} // the steps of the second wave wait on it
}

func (r *waveRunner) ClaimDue(ctx context.Context, limit int) ([]*gengate.Task, error) {
	r.mu.Lock()
	r.limits = append(r.limits, limit)
	n := len(r.limits)
	r.mu.Unlock()
	if n == 2 {
		<-r.allEnded
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	give := min(limit, 16-r.handed)
	r.handed += give
	out := make([]*gengate.Task, give)
	for i := range out {
		out[i] = &gengate.Task{ID: "t"}
	}
	return out, nil
}

func (r *waveRunner) NextDue(context.Context) (time.Duration, bool, error) { return 0, true, nil }

func (r *waveRunner) Purge(context.Context) (int, error) { return 0, nil }

func (r *waveRunner) Step(ctx context.Context, t *gengate.Task) error {
	if r.ended.Load() >= 8 { // the second wave
		select {
		case <-r.hold:
		case <-ctx.Done():
		}
		return nil
	}
	if r.ended.Add(1) == 8 {
		close(r.allEnded)
	}
	return nil
}

// TestClaimRefillsFreedSlotsAtOnce: the claimer waits for each claim's
// commit; the slots of the steps that ended meanwhile must be filled by
// the next claim together, not one claim (one write, one commit) per
// slot. Here the 8 steps of the first claim all end while the second
// claim waits; the 8 slots must be refilled in far fewer than 8 claims.
func TestClaimRefillsFreedSlotsAtOnce(t *testing.T) {
	r := &waveRunner{allEnded: make(chan struct{}), hold: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, r, gengate.NewEvents(), Config{Concurrency: 8, PollInterval: time.Hour, Grace: time.Minute}, slog.New(slog.DiscardHandler))
	}()
	for {
		r.mu.Lock()
		handed := r.handed
		r.mu.Unlock()
		if handed == 16 {
			break
		}
		<-time.After(time.Millisecond)
	}
	cancel()
	close(r.hold)
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	// One claim of 8, then the refill: one claim per freed slot would be
	// 8 more claims of 1.
	if refills := len(r.limits) - 1; refills >= 8 {
		t.Errorf("8 freed slots refilled in %d claims (limits %v); want them claimed together", refills, r.limits)
	}
	t.Logf("claim limits: %v", r.limits)
}
