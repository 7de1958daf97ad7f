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
}

// Run runs the workers until ctx ends, then waits for running steps.
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
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx, r, events, cfg.PollInterval, log)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		purge(ctx, r, cfg.PurgeEvery, log)
	}()
	wg.Wait()
}

func loop(ctx context.Context, r Runner, events *gengate.Events, poll time.Duration, log *slog.Logger) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		// Shutdown stops the loop between steps, not inside one: a step cut
		// short would leave its task waiting for the lease to run out.
		did, err := r.RunNext(context.WithoutCancel(ctx))
		if err != nil && ctx.Err() == nil {
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
