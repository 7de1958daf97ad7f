// Package worker runs task steps: a few goroutines that claim due tasks
// from the store and run one step each through gengate.Service, woken by
// gengate.Events when work arrives and by a short poll for steps that
// become due later or come from other processes. It also purges task
// records past their retention.
package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// Runner is the part of gengate.Service the workers use.
type Runner interface {
	RunNext(ctx context.Context) (bool, error)
	Purge(ctx context.Context) (int, error)
}

// Config sets the pool's size and rhythm.
type Config struct {
	Concurrency  int           // goroutines running steps (default 4)
	PollInterval time.Duration // how often an idle worker looks for due steps (default 250ms)
	PurgeEvery   time.Duration // default 1h
	// Grace is how long steps already running may go on once ctx ends
	// (default 30s); then their contexts are cancelled and their tasks
	// handed back to the other workers.
	Grace time.Duration
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
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx, steps, r, events, cfg.PollInterval, log)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		purge(ctx, r, cfg.PurgeEvery, log)
	}()
	wg.Wait()
}

func loop(ctx, steps context.Context, r Runner, events *gengate.Events, poll time.Duration, log *slog.Logger) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		// Shutdown stops the loop between steps; a running step goes on
		// until the grace period ends (steps), then hands its task back.
		did, err := r.RunNext(steps)
		switch {
		case err == nil || ctx.Err() != nil:
		case gengate.ErrorCode(err) == gengate.EConflict:
			// Another worker took the task over (this one was too slow to
			// renew its lease); the store refused this step's writes.
			log.Warn("task step lost its lease", "err", err)
		default:
			log.Error("task step", "err", err)
		}
		if did && err == nil {
			events.Kick() // there may be more; let another worker look too
			continue
		}
		select {
		case <-ctx.Done():
		case <-events.Work():
		case <-tick.C:
		}
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
