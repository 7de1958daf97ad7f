package worker

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// laterRunner has one task due at first; its step, once run, makes a
// second task due (as a submit releases its task due for a poll soon
// after). Nothing else wakes the claimer: no Events, and the timer is an
// hour away.
type laterRunner struct {
	mu      sync.Mutex
	due     int // tasks due now, not yet claimed
	claimed int
	stepped chan struct{} // closed when the second task's step runs
	steps   int
}

func (r *laterRunner) ClaimDue(ctx context.Context, limit int) ([]*gengate.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	give := min(limit, r.due)
	r.due -= give
	r.claimed += give
	out := make([]*gengate.Task, give)
	for i := range out {
		out[i] = &gengate.Task{ID: "t"}
	}
	return out, nil
}

func (r *laterRunner) NextDue(context.Context) (time.Duration, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.due > 0 {
		return 0, true, nil
	}
	return time.Hour, true, nil
}

func (r *laterRunner) Purge(context.Context) (int, error) { return 0, nil }

func (r *laterRunner) Step(ctx context.Context, t *gengate.Task) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps++
	if r.steps == 1 {
		r.due++ // the step's release makes the next step due
	} else if r.steps == 2 {
		close(r.stepped)
	}
	return nil
}

// TestClaimerLooksWhenASlotFrees: a step that became due while slots were
// idle (the last claim filled only some of them) is claimed when a step
// ends, by a look (a read) then a claim, not left until the claimer's
// timer.
func TestClaimerLooksWhenASlotFrees(t *testing.T) {
	r := &laterRunner{due: 1, stepped: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, r, gengate.NewEvents(), Config{Concurrency: 4, PollInterval: time.Hour, Grace: time.Minute}, slog.New(slog.DiscardHandler))
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-r.stepped:
	case <-time.After(time.Minute): // the timer is an hour away: only a look on the freed slot gets here
		r.mu.Lock()
		claimed, steps := r.claimed, r.steps
		r.mu.Unlock()
		t.Fatalf("the step due after the first was not claimed (%d claimed, %d steps run)", claimed, steps)
	}
}
