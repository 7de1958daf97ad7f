package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// Provider health at start: each configured provider is asked one cheap
// authenticated question (its engine's CheckHealth) as gengate starts, in
// the background and in parallel, so a provider that refuses its key or
// does not answer is logged at once and shown in /readyz, and never holds
// up the others or the start itself. Readiness does not depend on it:
// routes to other providers go on serving (docs/providers.md).

// healthChecker is an engine that can check its provider at start.
type healthChecker interface {
	CheckHealth(ctx context.Context) error
}

// Provider states in /readyz.
const (
	healthChecking   = "checking"
	healthOK         = "ok"
	healthKeyRefused = "key_refused"
	healthNoAnswer   = "unreachable"
	healthError      = "error"
	healthUnchecked  = "unchecked" // the engine has no check, or checks are off
)

// providerHealth is one provider's state as /readyz shows it.
type providerHealth struct {
	Status    string           `json:"status"`
	Detail    string           `json:"detail,omitempty"`
	CheckedAt gengate.JSONTime `json:"checkedAt,omitzero"`
}

// healthBoard holds the providers' states.
type healthBoard struct {
	mu sync.Mutex
	m  map[string]providerHealth
}

// snapshot returns the states by provider name (nil when none is
// configured), for /readyz.
func (b *healthBoard) snapshot() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) == 0 {
		return nil
	}
	out := make(map[string]providerHealth, len(b.m))
	for k, v := range b.m {
		out[k] = v
	}
	return out
}

func (b *healthBoard) set(name string, h providerHealth) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[name] = h
}

// checkProviders starts the checks of every configured provider and
// returns at once; each is run again every recheck (0: only at start), so
// that /readyz shows the state now: a provider down at start shows ok once
// it answers. Each change of state is logged (INFO when healthy, WARN
// otherwise) and kept on the board. timeout bounds each check; 0 turns
// the checks off.
func checkProviders(ctx context.Context, engs *engines, log *slog.Logger, timeout, recheck time.Duration) *healthBoard {
	b := &healthBoard{m: map[string]providerHealth{}}
	names := append([]string(nil), engs.Providers...)
	sort.Strings(names)
	for _, name := range names {
		hc, ok := engs.All[name].(healthChecker)
		if !ok || timeout == 0 {
			b.set(name, providerHealth{Status: healthUnchecked})
			continue
		}
		b.set(name, providerHealth{Status: healthChecking})
		go func() {
			last := ""
			for {
				cctx, cancel := context.WithTimeout(ctx, timeout)
				h := classifyHealth(hc.CheckHealth(cctx))
				cancel()
				if ctx.Err() != nil {
					return
				}
				h.CheckedAt = gengate.JSONTime{Time: time.Now()}
				b.set(name, h)
				if h.Status != last {
					if h.Status == healthOK {
						log.Info("provider answers and takes its key", "provider", name)
					} else {
						log.Warn("provider check failed: its routes will be refused until this is fixed; other providers serve",
							"provider", name, "status", h.Status, "detail", h.Detail)
					}
					last = h.Status
				}
				if recheck <= 0 {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(recheck):
				}
			}
		}()
	}
	return b
}

// classifyHealth reads a check's error: a refused key (401, 403, Google's
// 400 "API key not valid", the Google token endpoint's 400 for a service
// account key it refuses), no answer (nothing came back), or another
// answer. Engines clean their messages of secrets.
func classifyHealth(err error) providerHealth {
	if err == nil {
		return providerHealth{Status: healthOK}
	}
	var ue *gengate.UpstreamError
	if !errors.As(err, &ue) {
		return providerHealth{Status: healthNoAnswer, Detail: err.Error()}
	}
	switch {
	case ue.Status == 0:
		return providerHealth{Status: healthNoAnswer, Detail: ue.Message}
	case ue.Status == http.StatusUnauthorized || ue.Status == http.StatusForbidden ||
		(ue.Status == http.StatusBadRequest && strings.Contains(strings.ToLower(ue.Message), "api key")) ||
		(ue.Status == http.StatusBadRequest && strings.Contains(ue.Message, "credentials were refused")): // Vertex AI's token endpoint
		return providerHealth{Status: healthKeyRefused, Detail: ue.Message}
	}
	return providerHealth{Status: healthError, Detail: ue.Message}
}

// checkRegistries checks the routes against the providers' model
// registries (gengate.Service.CheckRegistries) at once, in the background,
// and then every interval until ctx ends: a route its provider no longer
// lists, or marks deprecated, leaves routing, shown in /readyz ("routes")
// and logged at WARN; a registry that cannot be read changes nothing.
func checkRegistries(ctx context.Context, svc *gengate.Service, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		svc.CheckRegistries(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
