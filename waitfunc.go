package gengate

import (
	"context"
	"sync"
	"time"
)

// WaitFunc is Wait without a goroutine: it registers a waiter for the
// account's task and returns at once; done is called once, on a goroutine
// of the service's, with the task as Wait would have returned it (no
// longer active, or as it is when d has passed) or with the error of
// reading it.
//
// It is for callers that hold thousands of waits and want each to cost a
// small record rather than a sleeping goroutine and its stack: the HTTP
// layer hands a waiting connection over to it (internal/httpapi,
// parked.go). Every wake-up of the waiter (a notification, a safety
// recheck, the deadline) queues one read of the task; at most
// MaxWaitChecks reads run at once, on short-lived goroutines that end when
// the queue is empty, so ten thousand tasks finishing together never make
// ten thousand goroutines. A change, the deadline or Finish goes before
// every safety recheck: when the rechecks of thousands of waiters are
// more than the reads keep up with, answers are not kept behind them.
func (s *Service) WaitFunc(accountID, id string, d time.Duration, done func(*Outcome, error)) *Watch {
	w := &Watch{svc: s, accountID: accountID, id: id, done: done}
	w.waiter = s.Events.WaitFunc(id, time.Now().Add(d), w.wake)
	w.wake(false) // the task may have changed before the waiter was registered
	return w
}

// MaxWaitChecks bounds the reads of WaitFunc's tasks that run at once.
const MaxWaitChecks = 8

// waitCheckTimeout bounds one read of a waited-for task.
const waitCheckTimeout = time.Minute

// Watch is one WaitFunc wait.
type Watch struct {
	svc       *Service
	waiter    *Waiter
	accountID string
	id        string
	done      func(*Outcome, error)
	// Guarded by svc.Events.checks.mu:
	queued  bool // in the queue of reads
	recheck bool // in the queue of safety rechecks
	final   bool // Finish: the next read answers
	ended   bool // done called or Stop
}

// Stop ends the wait without calling done. It reports whether it did:
// false when done has been or is being called.
func (w *Watch) Stop() bool {
	q := &w.svc.Events.checks
	q.mu.Lock()
	if w.ended {
		q.mu.Unlock()
		return false
	}
	w.ended = true
	q.mu.Unlock()
	w.svc.Events.Done(w.waiter)
	return true
}

// Finish makes the wait read its task once more and call done with it
// however it is, active or not: a server that drains answers its waiting
// calls at once.
func (w *Watch) Finish() {
	q := &w.svc.Events.checks
	q.mu.Lock()
	w.final = true
	q.mu.Unlock()
	w.wake(false)
}

// wake queues one read of the task, in the queue of safety rechecks
// when it is only for one. The waiter calls it under the registry's
// lock: it only takes the queue's.
func (w *Watch) wake(recheck bool) {
	q := &w.svc.Events.checks
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case w.ended:
		return
	case !recheck && !w.queued:
		w.queued = true
		q.queue = append(q.queue, w)
	case recheck && !w.queued && !w.recheck:
		w.recheck = true
		q.rechecks = append(q.rechecks, w)
	default:
		return // a read is queued already
	}
	if q.running < MaxWaitChecks {
		q.running++
		go q.run()
	}
}

// check reads the task and calls done when the wait is over.
func (w *Watch) check() {
	ctx, cancel := context.WithTimeout(context.Background(), waitCheckTimeout)
	o, err := w.svc.Find(ctx, w.accountID, w.id)
	cancel()
	q := &w.svc.Events.checks
	q.mu.Lock()
	over := err != nil || !o.Task.Status.Active() || w.final || w.waiter.Expired()
	if !over || w.ended {
		q.mu.Unlock()
		return
	}
	w.ended = true
	q.mu.Unlock()
	w.svc.Events.Done(w.waiter)
	w.done(o, err)
}

// waitChecks is the queue of reads of WaitFunc's tasks.
type waitChecks struct {
	mu       sync.Mutex
	queue    []*Watch // changes, deadlines, Finish: first
	rechecks []*Watch // safety rechecks
	running  int      // goroutines of run
}

// run reads queued tasks until both queues are empty.
func (q *waitChecks) run() {
	for {
		q.mu.Lock()
		var w *Watch
		switch {
		case len(q.queue) > 0:
			w = pop(&q.queue)
			w.queued = false
		case len(q.rechecks) > 0:
			w = pop(&q.rechecks)
			w.recheck = false
		default:
			q.queue, q.rechecks = nil, nil // lets a large backlog's arrays go
			q.running--
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		w.check()
	}
}

func pop(q *[]*Watch) *Watch {
	w := (*q)[0]
	(*q)[0] = nil
	*q = (*q)[1:]
	return w
}
