package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/sqlstore"
)

// Watching a process run, whatever its role: every role serves
// --admin-addr (/healthz, /readyz, /metrics); workers beat into the
// database so that /readyz of any process knows whether one is alive; the
// queue is on /metrics; one line at start says what the process is.

// heartbeat beats for a worker process every stale/6 until ctx ends, then
// forgets it (a clean stop is not a dead worker).
func heartbeat(ctx context.Context, store *sqlstore.DB, owner, role string, stale time.Duration, log *slog.Logger) {
	started := time.Now()
	ver := readBuildInfo()
	every := max(stale/6, 100*time.Millisecond)
	failing := false
	for {
		err := store.Heartbeat(ctx, owner, role, ver.Version+" "+ver.short(), started, time.Now())
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			log.Warn("worker heartbeat failed: other processes' /readyz may count this worker gone", "err", err)
			failing = true
		case err == nil && failing:
			log.Info("worker heartbeat recovered")
			failing = false
		}
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = store.ForgetWorker(fctx, owner)
			cancel()
			return
		case <-time.After(every):
		}
	}
}

// readyChecks are the checks of /readyz: the database answers, the output
// storage answers (a read of a key that is not there must say "not
// found", not fail), and a worker beat within --worker-stale.
func readyChecks(store *sqlstore.DB, blobs gengate.Blobs, stale time.Duration) []httpapi.ReadyCheck {
	var mu sync.Mutex
	var seen map[string]any
	return []httpapi.ReadyCheck{
		{Name: "database", Check: func(ctx context.Context) error { return store.SQL().PingContext(ctx) }},
		{Name: "storage", Check: func(ctx context.Context) error {
			f, err := blobs.Open(ctx, ".gengate-readyz-probe")
			if err == nil {
				f.Close()
				return nil
			}
			if gengate.ErrorCode(err) == gengate.ENotFound {
				return nil
			}
			return err
		}},
		{Name: "workers", Check: func(ctx context.Context) error {
			n, last, err := store.WorkersSeen(ctx, time.Now().Add(-stale))
			mu.Lock()
			seen = map[string]any{"alive": n}
			if !last.IsZero() {
				seen["lastSeenAt"] = last
			}
			mu.Unlock()
			switch {
			case err != nil:
				return err
			case n == 0 && last.IsZero():
				return errors.New("no worker process has ever beat on this database: start one (serve --role worker or all)")
			case n == 0:
				return fmt.Errorf("no worker seen within --worker-stale (%s); the last beat %s ago", stale, time.Since(last).Round(time.Second))
			}
			return nil
		}, Detail: func() any {
			mu.Lock()
			defer mu.Unlock()
			return seen
		}},
	}
}

// queueCollector reports the queue on /metrics: gengate_queue_depth by
// state (queued, submitting, running), read from the active tasks' index
// at each scrape, and gengate_queue_oldest_age_seconds, the age of the
// oldest task still waiting for a worker (0 when none waits).
type queueCollector struct {
	store *sqlstore.DB
	log   *slog.Logger
}

var (
	queueDepthDesc = prometheus.NewDesc("gengate_queue_depth",
		"Tasks in the queue by state: queued (waiting for a worker), submitting, running (upstream working).", []string{"state"}, nil)
	queueAgeDesc = prometheus.NewDesc("gengate_queue_oldest_age_seconds",
		"Age of the oldest task still queued, waiting for a worker (0 when none is).", nil, nil)
)

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- queueAgeDesc
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	depth, err := c.store.QueueDepth(ctx)
	if err != nil {
		c.log.Warn("metrics: queue depth", "err", err)
		return
	}
	for state, n := range depth {
		ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), state)
	}
	oldest, ok, err := c.store.OldestQueued(ctx)
	if err != nil {
		c.log.Warn("metrics: oldest queued task", "err", err)
		return
	}
	age := 0.0
	if ok {
		age = max(time.Since(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, age)
}

// startLine is the one line logged at start: what this process is.
func startLine(log *slog.Logger, cfg *Config) {
	b := readBuildInfo()
	db := "sqlite " + filepath.Join(cfg.Data, "gengate.db")
	if abs, err := filepath.Abs(filepath.Join(cfg.Data, "gengate.db")); err == nil {
		db = "sqlite " + abs
	}
	if cfg.Database != "" {
		db = "postgres " + maskValue("database", cfg.Database)
		if u, err := url.Parse(cfg.Database); err == nil {
			db = "postgres " + u.Host + u.Path
		}
	}
	storage := cfg.Storage
	if storage == "" {
		storage = filepath.Join(cfg.Data, "files")
	}
	if u, err := url.Parse(storage); err == nil && u.Scheme == "s3" {
		storage = "s3://" + u.Host + u.Path + " at " + u.Query().Get("endpoint")
	}
	admin := cfg.AdminAddr
	if admin == "" {
		admin = "none"
	}
	addr := cfg.Addr
	if cfg.Role == "worker" {
		addr = "none (worker)"
	}
	log.Info("gengate starting", "version", b.Version, "commit", b.short(), "schema", b.Schema, "role", cfg.Role,
		"database", db, "storage", storage, "addr", addr, "adminAddr", admin, "workers", cfg.Workers)
}
