package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// stepRunner has one task; its step runs until its context ends or it is
// let go.
type stepRunner struct {
	started chan struct{}
	release chan struct{}
	ended   chan error // the step's context error when it ended
}

func (r *stepRunner) ClaimDue(ctx context.Context, limit int) ([]*gengate.Task, error) {
	select {
	case r.started <- struct{}{}:
		return []*gengate.Task{{ID: "t1"}}, nil
	default:
		return nil, nil // only one step; then nothing is due
	}
}

func (r *stepRunner) Purge(context.Context) (int, error) { return 0, nil }

// NextDue says the one task is due until it has been claimed.
func (r *stepRunner) NextDue(context.Context) (time.Duration, bool, error) {
	return 0, len(r.started) == 0, nil
}

func (r *stepRunner) Step(ctx context.Context, t *gengate.Task) error {
	select {
	case <-ctx.Done():
	case <-r.release:
	}
	r.ended <- ctx.Err()
	return nil
}

func run(t *testing.T, grace time.Duration, release bool) error {
	r := &stepRunner{started: make(chan struct{}, 1), release: make(chan struct{}), ended: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Run(ctx, r, gengate.NewEvents(), Config{Concurrency: 2, Grace: grace, PollInterval: time.Millisecond}, slog.New(slog.DiscardHandler))
		close(done)
	}()
	for len(r.started) == 0 {
		<-time.After(time.Millisecond)
	}
	cancel() // shutdown begins with the step running
	if release {
		close(r.release)
	}
	err := <-r.ended
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	return err
}

// TestGrace: a step running at shutdown may finish within the grace
// period; one that outlasts it has its context cancelled, and Run returns.
func TestGrace(t *testing.T) {
	if err := run(t, time.Minute, true); err != nil {
		t.Errorf("a step that finished in time saw %v", err)
	}
	if err := run(t, 50*time.Millisecond, false); err != context.Canceled {
		t.Errorf("a step past the grace period saw %v, want context.Canceled", err)
	}
}
