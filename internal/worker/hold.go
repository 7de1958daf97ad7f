package worker

import (
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// holder keeps the tasks whose step kept their lease (gengate.StepKeeper,
// Task.Kept) until their next step is due, so that this process runs that
// step itself without a claim: one commit less per poll of upstream work.
// It holds at most max tasks, counting the steps running with an offer to
// keep theirs (Task.Keep); a step offered none releases its task as
// before. A held task whose process dies is claimed by any worker once
// its lease (next run plus the lease length) runs out.
type holder struct {
	max  int
	wake chan struct{} // a held task became due

	mu      sync.Mutex
	closed  bool
	offered int // running steps offered to keep their task
	tasks   map[string]*held
}

type held struct {
	t     *gengate.Task
	timer *time.Timer
	due   bool
}

func newHolder(max int) *holder {
	return &holder{max: max, wake: make(chan struct{}, 1), tasks: map[string]*held{}}
}

// offer reports whether a step about to run may keep its task, and if so
// counts it against the bound until done.
func (h *holder) offer() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.tasks)+h.offered >= h.max {
		return false
	}
	h.offered++
	return true
}

// done ends a step's offer: a task it kept is held until due. It reports
// false when the holder is closed (the workers are shutting down): the
// caller then releases the task.
func (h *holder) done(t *gengate.Task) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.offered--
	if !t.Kept {
		return true
	}
	if h.closed {
		return false
	}
	e := &held{t: t}
	h.tasks[t.ID] = e
	e.timer = time.AfterFunc(time.Until(t.RunAt), func() {
		h.mu.Lock()
		e.due = true
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	})
	return true
}

// takeDue hands over up to n held tasks that are due, to be stepped.
func (h *holder) takeDue(n int) []*gengate.Task {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*gengate.Task
	for id, e := range h.tasks {
		if len(out) == n {
			break
		}
		if e.due {
			delete(h.tasks, id)
			out = append(out, e.t)
		}
	}
	return out
}

// close stops holding: it returns the held tasks, for the caller to
// release, and makes every later kept task the caller's to release.
func (h *holder) close() []*gengate.Task {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	var out []*gengate.Task
	for id, e := range h.tasks {
		e.timer.Stop()
		delete(h.tasks, id)
		out = append(out, e.t)
	}
	return out
}
