// Package worker runs task steps. One claimer per process takes due tasks
// from the store, as many in one claim as it has idle step slots, and runs
// one step of each through gengate.Service in a goroutine of its own. The
// claimer is woken by gengate.Events when work arrives (one wake for one
// accepted task, however many slots are idle) and, for steps that become
// due later or come from other processes, by a short timer; then it first
// asks the store, with a read, whether anything is due, so that idle
// workers never take the writer's connection for a claim that finds
// nothing. It also purges task records past their retention.
package worker

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gengate/gengate"
)

// Runner is the part of gengate.Service the workers use.
type Runner interface {
	// ClaimDue leases up to limit due tasks to this process.
	ClaimDue(ctx context.Context, limit int) ([]*gengate.Task, error)
	// NextDue says how long until the next step is due, by a read.
	NextDue(ctx context.Context) (time.Duration, bool, error)
	// Step runs one step of a claimed task.
	Step(ctx context.Context, t *gengate.Task) error
	Purge(ctx context.Context) (int, error)
}

// Config sets the pool's size and rhythm.
type Config struct {
	Concurrency  int           // steps working with their upstreams at once (default 4); as many more may be waiting for their last write to commit
	PollInterval time.Duration // longest an idle claimer waits before it looks for due steps (default 250ms)
	PurgeEvery   time.Duration // default 1h
	// Grace is how long steps already running may go on once ctx ends
	// (default 30s); then their contexts are cancelled and their tasks
	// handed back to the other workers.
	Grace time.Duration
	// Handoff, when set, lets task creation in this process hand a new
	// task to a free step slot (handoff.go); Run attaches its slots to it.
	Handoff *Handoff
}

// Run runs the workers until ctx ends, then lets running steps finish
// within cfg.Grace and returns.
func Run(ctx context.Context, r Runner, events *gengate.Events, cfg Config, log *slog.Logger) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	if cfg.PurgeEvery <= 0 {
		cfg.PurgeEvery = time.Hour
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 30 * time.Second
	}
	// Steps run under steps, which outlives ctx by the grace period.
	steps, cancelSteps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSteps()
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-stopped:
			return
		case <-ctx.Done():
		}
		select {
		case <-stopped:
		case <-time.After(cfg.Grace):
			log.Warn("shutdown grace period over: cutting running steps short", "grace", cfg.Grace)
			cancelSteps()
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		purge(ctx, r, cfg.PurgeEvery, log)
	}()
	claimer(ctx, steps, r, events, cfg, log, &wg)
	wg.Wait()
}

// claimer claims due tasks for the idle step slots and starts their steps
// until ctx ends. Steps run under steps and are counted in wg.
//
// It claims (a write) only when it knows a step is due: after a claim that
// filled every idle slot (more may be waiting), or when a read (NextDue)
// says so. A wake-up from Events or the timer only makes it look. A step
// that ends tells it when its task is due next (a poll a quarter second
// after a submit), which sets the timer without a read; a freed slot
// looks only if a look is pending (work arrived while every slot was
// busy).
func claimer(ctx, steps context.Context, r Runner, events *gengate.Events, cfg Config, log *slog.Logger, wg *sync.WaitGroup) {
	p := &pool{sl: newSlots(cfg.Concurrency), wg: wg, wake: make(chan struct{}, 1)}
	sl := p.sl
	freed := make(chan struct{}, cfg.Concurrency)
	done := make(chan stepEnd, sl.maxAlive)
	// start runs t's step in a slot already taken (and counted in wg).
	p.start = func(t *gengate.Task) {
		go func() {
			defer wg.Done()
			var released atomic.Bool
			release := func() {
				if released.CompareAndSwap(false, true) {
					freed <- struct{}{}
				}
			}
			step(gengate.WithSlotRelease(steps, release), ctx, r, t, log)
			e := stepEnd{slot: released.CompareAndSwap(false, true)}
			if t.Status.Active() {
				e.next = t.RunAt
			}
			done <- e
		}()
	}
	h := cfg.Handoff
	if h == nil {
		h = &Handoff{}
	}
	h.attach(p)
	defer h.detach() // no slot is reserved after the claimer stops
	timer := time.NewTimer(cfg.PollInterval)
	defer timer.Stop()
	wakeAt := time.Now().Add(cfg.PollInterval) // when timer fires
	wakeBy := func(d time.Duration) {
		if at := time.Now().Add(d); at.Before(wakeAt) {
			timer.Reset(d)
			wakeAt = at
		}
	}
	claim, look := false, true
	// dueAt takes the time a step that ended said its task is due next.
	dueAt := func(at time.Time) {
		switch d := time.Until(at); {
		case at.IsZero():
		case d <= 0:
			look = true
		default:
			wakeBy(d)
		}
	}
	for ctx.Err() == nil {
		p.mu.Lock()
		n := sl.room()
		p.mu.Unlock()
		if n > 0 && (claim || look) {
			look = false
			if !claim {
				d, ok, err := r.NextDue(ctx)
				switch {
				case err != nil:
					if ctx.Err() == nil {
						log.Error("look for due task steps", "err", err)
					}
				case ok && d <= 0:
					claim = true
				case ok && d < cfg.PollInterval:
					wakeBy(d) // wake when it is due
				}
			}
			if claim {
				tasks, err := r.ClaimDue(ctx, n)
				if err != nil && ctx.Err() == nil {
					log.Error("claim task steps", "err", err)
				}
				// A claim that filled every slot it had room for may have
				// left more due tasks: claim again as soon as a slot is
				// free. One that did not looks again at once, by a read,
				// so that the timer is set to the next step's due time
				// rather than left at the poll interval.
				claim = err == nil && len(tasks) == n
				look = err == nil && !claim
				for _, t := range tasks {
					p.mu.Lock()
					sl.take()
					p.mu.Unlock()
					wg.Add(1)
					p.start(t)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-freed:
			// A look still pending (work arrived while every slot was
			// busy) is made now; none is started for a free slot alone.
			p.mu.Lock()
			sl.free()
			dueAt(sl.drain(freed, done))
			p.mu.Unlock()
		case e := <-done:
			// The task's next step, such as a poll due a quarter second
			// after its submit, sets the timer: no read, and no wait for
			// the poll interval.
			p.mu.Lock()
			sl.end(e.slot)
			dueAt(e.next)
			dueAt(sl.drain(freed, done))
			p.mu.Unlock()
		case <-events.Work():
			look = true
		case <-p.wake: // a slot reserved for a new task was given back
			look = true
		case <-timer.C:
			look = true
			timer.Reset(cfg.PollInterval)
			wakeAt = time.Now().Add(cfg.PollInterval)
		}
	}
}

// slots counts a claimer's step slots. idle is the free ones: a step
// frees its slot just before its last write (gengate.WithSlotRelease), or
// when it returns if it did not. alive is the steps not returned yet,
// whose last writes may still wait for the store: at most maxAlive, twice
// the slots, so a store slow to commit holds the claims back instead of
// letting waiting writes pile up.
type slots struct{ idle, alive, maxAlive int }

func newSlots(n int) *slots { return &slots{idle: n, maxAlive: 2 * n} }

// room is how many tasks the next claim may take.
func (s *slots) room() int { return min(s.idle, s.maxAlive-s.alive) }

// take counts a claimed task's step started.
func (s *slots) take() { s.idle--; s.alive++ }

// free counts a step's slot freed before its last write.
func (s *slots) free() { s.idle++ }

// end counts a step returned; slot says its slot is freed with it.
func (s *slots) end(slot bool) {
	s.alive--
	if slot {
		s.idle++
	}
}

// drain counts every slot freed and step ended while the last claim
// committed, so that the next claim takes a task for each in one write
// rather than one write per slot: the claimer waits for each claim's
// commit, and one task per commit capped the whole process at one step
// per commit.
// It returns the earliest time the ended steps' tasks are due next (zero:
// none).
func (s *slots) drain(freed chan struct{}, done chan stepEnd) (next time.Time) {
	for {
		select {
		case <-freed:
			s.free()
		case e := <-done:
			s.end(e.slot)
			if !e.next.IsZero() && (next.IsZero() || e.next.Before(next)) {
				next = e.next
			}
		default:
			return next
		}
	}
}

// stepEnd is a step that returned: slot says its slot is freed with it,
// next when its task's next step is due (zero: the task is done, or left
// this process).
type stepEnd struct {
	slot bool
	next time.Time
}

// step runs one step; ctx is the workers' own context, ended at shutdown.
func step(steps, ctx context.Context, r Runner, t *gengate.Task, log *slog.Logger) {
	err := r.Step(steps, t)
	switch {
	case err == nil || ctx.Err() != nil:
	case gengate.ErrorCode(err) == gengate.EConflict:
		// Another worker took the task over (this one was too slow to
		// renew its lease); the store refused this step's writes.
		log.Warn("task step lost its lease", "jobId", t.ID, "err", err)
	default:
		log.Error("task step", "jobId", t.ID, "err", err)
	}
}

func purge(ctx context.Context, r Runner, every time.Duration, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := r.Purge(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("purge task records", "err", err)
		} else if n > 0 {
			log.Info("purged task records", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
