package builtin

import (
	"context"
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// DefaultMaxJobs is how many builtin jobs a process admits at once
// (--max-cpu-jobs). An operation on a 50 megapixel image can take more
// than a GB and a core for seconds; two at once keep a small machine
// responsive.
const DefaultMaxJobs = 2

// admitTTL is how long an admitted job that never reached this process's
// Submit (its task was held for review, failed first, or runs elsewhere)
// counts against the cap.
const admitTTL = 5 * time.Minute

// admission bounds the builtin jobs in flight in this process: at most max
// admitted and unfinished (refused beyond that at generate time, before
// any charge, with OVERLOADED), and at most max running (a step beyond
// that waits for a slot).
type admission struct {
	mu      sync.Mutex
	max     int
	pending map[string]time.Time // admitted task ids whose job has not finished
	slots   chan struct{}
}

func newAdmission(max int) *admission {
	if max <= 0 {
		max = DefaultMaxJobs
	}
	return &admission{max: max, pending: map[string]time.Time{}, slots: make(chan struct{}, max)}
}

// Admit takes a place for the task's job, or refuses with OVERLOADED when
// max jobs are in flight.
func (e *Engine) Admit(job gengate.Job) error {
	a := e.adm
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, at := range a.pending {
		if now.Sub(at) > admitTTL {
			delete(a.pending, id)
		}
	}
	if _, ok := a.pending[job.TaskID]; !ok && len(a.pending) >= a.max {
		return gengate.Errorf(gengate.EOverloaded,
			"the server is running as many image operations as it may (%d); retry in a few seconds", a.max)
	}
	a.pending[job.TaskID] = now
	return nil
}

// Forget gives back the place of a job whose task was not created.
func (e *Engine) Forget(taskID string) {
	e.adm.mu.Lock()
	delete(e.adm.pending, taskID)
	e.adm.mu.Unlock()
}

// run holds one of the running slots while f runs, waiting for one if
// they are all taken, and ends the job's admission when it is done.
func (a *admission) run(ctx context.Context, taskID string, f func() (gengate.Progress, error)) (gengate.Progress, error) {
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return gengate.Progress{}, ctx.Err()
	}
	defer func() { <-a.slots }()
	p, err := f()
	if ctx.Err() == nil {
		a.mu.Lock()
		delete(a.pending, taskID)
		a.mu.Unlock()
	}
	return p, err
}

// SetMaxJobs sets how many jobs are admitted and run at once (0: the
// default). Call it before the engine is used.
func (e *Engine) SetMaxJobs(n int) { e.adm = newAdmission(n) }
