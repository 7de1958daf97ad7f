package sqlstore

import (
	"slices"
	"sync"
	"time"
)

// gatherer gathers the jobs of concurrent callers into batches, with one
// batch in flight at a time: a job that finds no batch in flight (and none
// waiting) starts one at once, so an idle server adds no delay; the jobs
// that arrive while a batch is in flight go in the next. Once a batch is
// over, the next may wait, up to wait, until expect jobs are queued: the
// callers just answered come back together (a client's next submit, the
// rest of a claim's wave of step records), and waiting for them makes one
// full batch where sending at once would make a small one and a second
// behind it.
//
// PostgreSQL's task creations (pgcreate.go) and step records
// (stepbatch.go) are gathered by one each; they differ in what a batch
// does (send), in how many the next batch waits for (next), and in
// whether it waits with nothing queued yet (waitIdle).
type gatherer[J any] struct {
	max  int           // the most jobs in one batch
	wait time.Duration // the longest a batch waits for expected jobs; 0: never waits
	// waitIdle makes the batcher wait for expected jobs even while none
	// is queued; otherwise an empty queue ends the run at once.
	waitIdle bool
	// next returns how many jobs the batch after one of n jobs waits for,
	// queued being those already queued when it ended (0: none).
	next func(n, queued int) int
	// send runs one batch and sets each job's outcome; the jobs' callers
	// are answered once it returns.
	send func(batch []J)

	mu      sync.Mutex
	queue   []gatheredJob[J]
	running bool          // the batcher runs
	expect  int           // the batcher waits until this many are queued
	waiting bool          // the batcher waits for expect
	filled  chan struct{} // tells the waiting batcher that expect is reached
}

type gatheredJob[J any] struct {
	job  J
	done chan struct{} // closed once the job's batch is over
}

func newGatherer[J any](max int, wait time.Duration, waitIdle bool, next func(n, queued int) int, send func([]J)) *gatherer[J] {
	return &gatherer[J]{max: max, wait: wait, waitIdle: waitIdle, next: next, send: send, filled: make(chan struct{}, 1)}
}

// add queues the job and returns once its batch is over.
func (g *gatherer[J]) add(j J) {
	done := make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, gatheredJob[J]{j, done})
	switch {
	case !g.running:
		g.running = true
		go g.run()
	case g.waiting && len(g.queue) >= g.expect:
		g.waiting = false
		select {
		case g.filled <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
	<-done
}

// run sends batches while jobs are queued or expected.
func (g *gatherer[J]) run() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		g.mu.Lock()
		if g.wait > 0 && (g.waitIdle || len(g.queue) > 0) && len(g.queue) < g.expect {
			g.waiting = true
			g.mu.Unlock()
			timer.Reset(g.wait)
			select {
			case <-g.filled:
				timer.Stop()
			case <-timer.C:
			}
			g.mu.Lock()
			g.waiting = false
			select { // a signal sent as the timer fired
			case <-g.filled:
			default:
			}
		}
		n := min(len(g.queue), g.max)
		if n == 0 {
			g.running, g.expect = false, 0
			g.queue = nil // let the array go after a burst
			g.mu.Unlock()
			return
		}
		batch := slices.Clone(g.queue[:n])
		g.queue = slices.Delete(g.queue, 0, n)
		if len(g.queue) == 0 {
			g.queue = nil
		}
		g.mu.Unlock()
		jobs := make([]J, n)
		for i, b := range batch {
			jobs[i] = b.job
		}
		g.send(jobs)
		g.mu.Lock()
		g.expect = g.next(n, len(g.queue))
		g.mu.Unlock()
		for _, b := range batch {
			close(b.done)
		}
	}
}
