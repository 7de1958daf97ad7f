package sqlstore

import (
	"context"
	"testing"
	"time"
)

// TestGatheredWaves: once a batch is over, the next waits for the callers
// to come back, by each batcher's rule: the creations' batcher waits for
// as many as the batch held even with none queued yet; the step saver
// waits for a wave as large as the batch once a record of it is queued,
// and sends a lone record at once. The batches are the real batchers'
// with their send replaced, and a wait far longer than the test: a batch
// that leaves before its callers are back is seen as a batch too small.
func TestGatheredWaves(t *testing.T) {
	type probe struct {
		started chan int      // a batch of this many began
		proceed chan struct{} // lets it end
	}
	newProbe := func() probe { return probe{make(chan int), make(chan struct{})} }
	creations := func(p probe) *gatherer[*createJob] {
		g := newPGCreator(nil, time.Minute, time.Minute, func() {}).gather
		g.send = func(b []*createJob) { p.started <- len(b); <-p.proceed }
		return g
	}
	steps := func(p probe) *gatherer[*stepJob] {
		g := newPGStepSaver(nil, time.Minute, time.Minute).gather
		g.send = func(b []*stepJob) { p.started <- len(b); <-p.proceed }
		return g
	}
	for _, c := range []struct {
		name string
		// add adds one job (blocking until its batch is over); queued,
		// waiting (its state: waiting, running) and hold are the
		// gatherer's.
		start func(p probe) (add func(), queued func() int, waiting func() (bool, bool), hold func() func())
		// during is how many jobs are queued while the first batch is in
		// flight.
		during int
	}{
		{"creations, none queued meanwhile", func(p probe) (func(), func() int, func() (bool, bool), func() func()) {
			g := creations(p)
			return func() { g.add(&createJob{ctx: context.Background()}) }, g.queued, g.state, g.hold
		}, 0},
		{"steps, one queued meanwhile", func(p probe) (func(), func() int, func() (bool, bool), func() func()) {
			g := steps(p)
			return func() { g.add(&stepJob{ctx: context.Background()}) }, g.queued, g.state, g.hold
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			const wave = 4
			p := newProbe()
			add, queued, waiting, hold := c.start(p)
			release := hold()
			for range wave {
				go add()
			}
			waitFor(t, "the first wave queued", func() bool { return queued() == wave })
			release()
			if n := <-p.started; n != wave {
				t.Fatalf("first batch of %d; want %d", n, wave)
			}
			for range c.during {
				go add()
			}
			waitFor(t, "the jobs queued meanwhile", func() bool { return queued() == c.during })
			p.proceed <- struct{}{}
			// The callers come back: the next batch waits for all of them.
			waitFor(t, "the batcher to wait for the wave", func() bool {
				select {
				case n := <-p.started:
					t.Fatalf("a batch of %d left before the wave was back; want it to wait for %d", n, wave)
				default:
				}
				w, running := waiting()
				if !running {
					t.Fatalf("the batcher stopped after the first batch; want it to wait for the wave of %d", wave)
				}
				return w
			})
			for range wave - c.during {
				go add()
			}
			if n := <-p.started; n != wave {
				t.Errorf("second batch of %d; want the whole wave, %d", n, wave)
			}
			p.proceed <- struct{}{}
		})
	}
	// A wave of step records with none of the next queued meanwhile ends
	// the run: no step record is known to be coming.
	t.Run("steps, none queued meanwhile", func(t *testing.T) {
		p := newProbe()
		g := steps(p)
		release := g.hold()
		for range 4 {
			go g.add(&stepJob{ctx: context.Background()})
		}
		waitFor(t, "the wave queued", func() bool { return g.queued() == 4 })
		release()
		<-p.started
		p.proceed <- struct{}{}
		waitFor(t, "the batcher to stop", func() bool {
			waiting, running := g.state()
			if waiting {
				t.Fatal("the step saver waits for records with none queued")
			}
			return !running
		})
	})
	// A lone step record expects no wave: the next one is sent at once.
	t.Run("steps, a lone record", func(t *testing.T) {
		p := newProbe()
		g := steps(p)
		go g.add(&stepJob{ctx: context.Background()})
		if n := <-p.started; n != 1 {
			t.Fatalf("batch of %d; want 1", n)
		}
		go g.add(&stepJob{ctx: context.Background()})
		waitFor(t, "the second record queued", func() bool { return g.queued() == 1 })
		p.proceed <- struct{}{}
		if n := <-p.started; n != 1 {
			t.Fatalf("batch of %d; want 1", n)
		}
		p.proceed <- struct{}{}
	})
}

// waitFor polls cond until it holds, failing the test after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// queued returns how many jobs wait for a batch.
func (g *gatherer[J]) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// hold makes the gatherer leave the jobs added to it queued until release
// is called; they then go in one batch (up to max). Call it while no
// batch is in flight.
func (g *gatherer[J]) hold() (release func()) {
	g.mu.Lock()
	g.running = true
	g.mu.Unlock()
	return func() { go g.run() }
}

// state reports whether the batcher waits for expected jobs, and whether
// it runs at all.
func (g *gatherer[J]) state() (waiting, running bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting, g.running
}
