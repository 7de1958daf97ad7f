package gengate

import (
	"container/heap"
	"sync"
	"time"
)

// Events tells waiting requests that a task changed and wakes workers when
// work arrives, inside one process. cmd/gengate bridges it to PostgreSQL
// LISTEN/NOTIFY so that API and worker processes hear each other.
//
// Waiting is lean, because a gateway holds thousands of synchronous calls
// at once (docs/architecture.md, "Waiting and notification"): a waiter is a small
// record in one registry keyed by task id, with a one-slot channel the
// request's own goroutine sleeps on. It has no goroutine, timer or ticker
// of its own: one shared goroutine, running only while someone waits,
// keeps every waiter's next time in one heap and wakes each at its
// deadline and for its safety rechecks.
type Events struct {
	mu      sync.Mutex
	waiting map[string][]*Waiter // by task id
	times   waiterHeap           // by next wake-up time
	timing  bool                 // the shared timing goroutine runs
	rate    int                  // rechecks per second at most (MaxRechecks)
	sooner  chan struct{}        // tells it that a waiter needs it earlier
	work    chan struct{}
	checks  waitChecks // the reads of Service.WaitFunc's tasks (waitfunc.go)
}

// MaxRechecks is the default bound on the safety rechecks of all waiters
// of a process together, per second (serve --wait-rechecks): with many
// waiters each is rechecked less often than SafetyRecheck, so that
// thousands of waiters do not keep the database busy rereading tasks that
// notifications will announce anyway.
const MaxRechecks = 500

// NewEvents returns an empty Events.
func NewEvents() *Events {
	return &Events{waiting: map[string][]*Waiter{}, rate: MaxRechecks, sooner: make(chan struct{}, 1), work: make(chan struct{}, 1)}
}

// SetMaxRechecks sets the bound on safety rechecks per second (≥ 1).
func (e *Events) SetMaxRechecks(n int) {
	e.mu.Lock()
	e.rate = max(n, 1)
	e.mu.Unlock()
}

// Waiter is one request waiting for a task. C receives when the task
// changed, when a safety recheck is due, and at the deadline (Expired).
type Waiter struct {
	C        <-chan struct{}
	c        chan struct{}
	f        func(recheck bool) // instead of c (WaitFunc)
	task     string
	deadline time.Time
	next     time.Time // the next wake-up: a recheck or the deadline
	index    int       // in Events.times; -1 once past its deadline
}

// Expired reports whether the waiter's deadline has passed.
func (w *Waiter) Expired() bool { return !time.Now().Before(w.deadline) }

func (w *Waiter) wake() { w.wakeFor(false) }

// wakeFor wakes w; recheck says it is for a safety recheck only.
func (w *Waiter) wakeFor(recheck bool) {
	if w.f != nil {
		w.f(recheck)
		return
	}
	select {
	case w.c <- struct{}{}:
	default: // a wake-up is already pending: one is enough
	}
}

// Wait registers a waiter for the task until deadline. The caller must
// call Done with it when it stops waiting.
func (e *Events) Wait(taskID string, deadline time.Time) *Waiter {
	c := make(chan struct{}, 1)
	w := &Waiter{C: c, c: c, task: taskID, deadline: deadline}
	e.add(w)
	return w
}

// WaitFunc is Wait with a function instead of a channel: wake is called,
// under the registry's lock (it must not block or call Events), whenever
// a Wait's C would receive, with recheck true when it is only for a
// safety recheck (not a change, not the deadline). It lets a waiter hold
// no goroutine at all (Service.WaitFunc). Its C is nil.
func (e *Events) WaitFunc(taskID string, deadline time.Time, wake func(recheck bool)) *Waiter {
	w := &Waiter{f: wake, task: taskID, deadline: deadline}
	e.add(w)
	return w
}

// Waiting returns how many waiters are registered.
func (e *Events) Waiting() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ws := range e.waiting {
		n += len(ws)
	}
	return n
}

func (e *Events) add(w *Waiter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.waiting[w.task] = append(e.waiting[w.task], w)
	w.next = e.nextWake(time.Now(), w)
	heap.Push(&e.times, w)
	if !e.timing {
		e.timing = true
		go e.timeLoop()
	} else if w.index == 0 {
		select {
		case e.sooner <- struct{}{}:
		default:
		}
	}
}

// Done ends the wait of w.
func (e *Events) Done(w *Waiter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ws := e.waiting[w.task]
	for i, x := range ws {
		if x == w {
			ws[i] = ws[len(ws)-1]
			ws[len(ws)-1] = nil
			ws = ws[:len(ws)-1]
			break
		}
	}
	if len(ws) == 0 {
		delete(e.waiting, w.task)
	} else {
		e.waiting[w.task] = ws
	}
	if w.index >= 0 {
		heap.Remove(&e.times, w.index)
	}
}

// nextWake is w's next wake-up after now: its next safety recheck, spaced
// so that all waiters together recheck at most e.rate times a second,
// or its deadline if that comes first.
func (e *Events) nextWake(now time.Time, w *Waiter) time.Time {
	every := max(SafetyRecheck, time.Duration(len(e.times)+1)*time.Second/time.Duration(e.rate))
	if next := now.Add(every); next.Before(w.deadline) {
		return next
	}
	return w.deadline
}

// timeLoop is the one goroutine that wakes waiters at their times. It ends
// when nobody waits; the next Wait starts it again.
func (e *Events) timeLoop() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		e.mu.Lock()
		now := time.Now()
		for len(e.times) > 0 && !now.Before(e.times[0].next) {
			w := e.times[0]
			w.wakeFor(w.next.Before(w.deadline))
			if w.next.Before(w.deadline) {
				w.next = e.nextWake(now, w)
				heap.Fix(&e.times, 0)
			} else {
				heap.Pop(&e.times)
			}
		}
		if len(e.times) == 0 {
			e.timing = false
			e.mu.Unlock()
			return
		}
		t.Reset(e.times[0].next.Sub(now))
		e.mu.Unlock()
		select {
		case <-t.C:
		case <-e.sooner:
		}
	}
}

// Publish tells the task's waiters that it changed.
func (e *Events) Publish(taskID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range e.waiting[taskID] {
		w.wake()
	}
}

// Kick wakes one idle worker loop.
func (e *Events) Kick() {
	select {
	case e.work <- struct{}{}:
	default:
	}
}

// Work receives after Kick.
func (e *Events) Work() <-chan struct{} { return e.work }

// waiterHeap orders waiters by their next wake-up (container/heap).
type waiterHeap []*Waiter

func (h waiterHeap) Len() int           { return len(h) }
func (h waiterHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h waiterHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waiterHeap) Push(x any) {
	w := x.(*Waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waiterHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	w.index = -1
	*h = old[:len(old)-1]
	return w
}
