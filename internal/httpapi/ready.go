package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// Readiness (/readyz), the same on the public listener and on the
// operator one (--admin-addr), for every role: each check the process was
// given (the database, the output storage, a worker seen recently) is
// run, its result shown by name, and any failure answers 503 with the
// failing checks; the providers' states, re-checked in the background,
// are shown but do not make a process unready (routes to other providers
// go on serving). A draining process is unready.

// ReadyCheck is one named check of /readyz: nil when it passes. Detail,
// when set, adds what the check saw (how many workers, when last seen).
type ReadyCheck struct {
	Name   string
	Check  func(ctx context.Context) error
	Detail func() any
}

// ReadyConfig is what /readyz checks and shows.
type ReadyConfig struct {
	Checks    []ReadyCheck
	Providers func() any // shown, never failing
	// Replication, when set, is serve --replicate's state, shown.
	Replication func() any
	// Routes, when set, is the state of the registry checks of the
	// providers' routes (gengate.RegistryReport), shown as "routes".
	Routes  func() any
	Drain   <-chan struct{} // closed: unready
	Timeout time.Duration   // per check (default 3s)
}

// ReadyHandler serves /readyz.
func ReadyHandler(cfg ReadyConfig, log *slog.Logger) http.Handler {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 3 * time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		checks := map[string]any{}
		select {
		case <-cfg.Drain:
			status = http.StatusServiceUnavailable
			checks["drain"] = map[string]any{"status": "draining"}
		default:
		}
		for _, c := range cfg.Checks {
			ctx, cancel := context.WithTimeout(r.Context(), cfg.Timeout)
			err := c.Check(ctx)
			cancel()
			res := map[string]any{"status": "ok"}
			if err != nil {
				status = http.StatusServiceUnavailable
				res = map[string]any{"status": "failing", "error": err.Error()}
				log.WarnContext(r.Context(), "not ready", "check", c.Name, "err", err)
			}
			if c.Detail != nil {
				if d := c.Detail(); d != nil {
					res["detail"] = d
				}
			}
			checks[c.Name] = res
		}
		body := map[string]any{"status": "ready", "checks": checks}
		if status != http.StatusOK {
			body["status"] = "unavailable"
		}
		if cfg.Providers != nil {
			if p := cfg.Providers(); p != nil {
				body["providers"] = p
			}
		}
		if cfg.Replication != nil {
			body["replication"] = cfg.Replication()
		}
		if cfg.Routes != nil {
			if p := cfg.Routes(); p != nil {
				body["routes"] = p
			}
		}
		writeJSON(w, status, body)
	})
}
