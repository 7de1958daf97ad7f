package worker

import (
	"sync"

	"github.com/gengate/gengate"
)

// Handoff is gengate.Handoff over the step slots of this process's
// claimer: task creation reserves a free slot before it writes a task
// claimed, then starts the task's first step in it, or gives it back
// (gengate's handoff.go). A reserved slot counts as a running step, so
// the claimer never claims for it and Run waits for it at shutdown. Until
// Run attaches its claimer, and once the claimer has stopped, Reserve
// reports false and every task is created queued.
type Handoff struct {
	mu   sync.Mutex
	p    *pool // the last claimer's: a slot reserved before it stopped is still started or released in it
	open bool  // a claimer runs: Reserve may take a slot
}

var _ gengate.Handoff = (*Handoff)(nil)

// pool is a claimer's slots as it shares them with its Handoff.
type pool struct {
	mu    sync.Mutex // guards sl
	sl    *slots
	wg    *sync.WaitGroup       // the steps Run waits for
	start func(t *gengate.Task) // runs a step in a slot already taken
	wake  chan struct{}         // tells the claimer a reserved slot came back
}

// attach lets Reserve take p's slots; detach stops it. A slot reserved
// before detach is still started or released in p, and Run waits for it.
func (h *Handoff) attach(p *pool) {
	h.mu.Lock()
	h.p, h.open = p, true
	h.mu.Unlock()
}

func (h *Handoff) detach() {
	h.mu.Lock()
	h.open = false
	h.mu.Unlock()
}

// Reserve takes a free slot for one task: it reports false when none is
// free or no claimer runs.
func (h *Handoff) Reserve() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.p
	if !h.open {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sl.room() < 1 {
		return false
	}
	p.sl.take()
	p.wg.Add(1) // under h.mu, while open: never after the claimer stopped, so before Run's Wait
	return true
}

// Release gives back a slot Reserve took, unused.
func (h *Handoff) Release() {
	p := h.pool()
	p.mu.Lock()
	p.sl.end(true)
	p.mu.Unlock()
	p.wg.Done()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Start runs the first step of t, created claimed, in the slot Reserve
// took.
func (h *Handoff) Start(t *gengate.Task) {
	h.pool().start(t)
}

// pool is the claimer whose slot Reserve took.
func (h *Handoff) pool() *pool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.p
}
