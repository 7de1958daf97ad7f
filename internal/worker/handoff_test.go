package worker

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// handedRunner has nothing to claim; its steps record their task and
// wait for finish.
type handedRunner struct {
	finish chan struct{}
	mu     sync.Mutex
	ran    []string
	claims int
}

func (r *handedRunner) ClaimDue(ctx context.Context, limit int) ([]*gengate.Task, error) {
	r.mu.Lock()
	r.claims++
	r.mu.Unlock()
	return nil, nil
}
func (r *handedRunner) NextDue(context.Context) (time.Duration, bool, error) { return 0, false, nil }
func (r *handedRunner) Purge(context.Context) (int, error)                   { return 0, nil }
func (r *handedRunner) Step(ctx context.Context, t *gengate.Task) error {
	r.mu.Lock()
	r.ran = append(r.ran, t.ID)
	r.mu.Unlock()
	<-r.finish
	return nil
}

func (r *handedRunner) ranTasks() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran...)
}

// TestHandoffSlots: task creation reserves the claimer's free slots
// (Handoff), no more than it has; a reserved slot runs the step Start
// gives it, or comes back with Release. Once the workers stop no slot is
// reserved, but one reserved before is still started (and Run waits for
// its step: a task created claimed is never left to its lease).
func TestHandoffSlots(t *testing.T) {
	r := &handedRunner{finish: make(chan struct{})}
	h := &Handoff{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, r, gengate.NewEvents(), Config{Concurrency: 2, PollInterval: time.Hour, Grace: time.Minute, Handoff: h}, slog.New(slog.DiscardHandler))
	}()
	deadline := time.Now().Add(20 * time.Second) // a failure, not a pace: the wait ends on the condition
	for !h.Reserve() {
		if time.Now().After(deadline) {
			t.Fatal("no slot reserved: Run never attached its claimer")
		}
		time.Sleep(time.Millisecond)
	}
	if !h.Reserve() {
		t.Fatal("the second of 2 slots could not be reserved")
	}
	if h.Reserve() {
		t.Fatal("a third slot was reserved; there are 2")
	}
	h.Start(&gengate.Task{ID: "a"})
	h.Release()
	if !h.Reserve() {
		t.Fatal("a released slot could not be reserved again")
	}
	for len(r.ranTasks()) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the handed-over step never ran")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	for {
		// The claimer stops: no more reservations.
		if !h.Reserve() {
			break
		}
		h.Release()
		if time.Now().After(deadline) {
			t.Fatal("slots still reserved after the workers stopped")
		}
		time.Sleep(time.Millisecond)
	}
	h.Start(&gengate.Task{ID: "b"}) // reserved before the stop
	close(r.finish)
	<-done
	if got := r.ranTasks(); len(got) != 2 || got[1] != "b" {
		t.Errorf("steps run: %v; want a, then b reserved before the stop", got)
	}
}
