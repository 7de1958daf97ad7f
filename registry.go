package gengate

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Routes checked against the providers' own model registries. A catalog
// fixed at build time cannot know that a provider retired a model last
// month; each provider that publishes a listing of its models (fal's
// Platform API, Replicate's models API, OpenAI's and the Gemini API's
// model lists) is asked about the routes gengate would send it, and a
// route its provider does not know, or marks deprecated, leaves routing
// until a later check finds it again. A registry that cannot be read
// changes nothing and says so (docs/providers.md, "Routes checked against
// the providers' registries").

// Route states a registry check gives.
const (
	RouteLive       = "live"
	RouteUnknown    = "unknown"    // the provider does not list it
	RouteDeprecated = "deprecated" // the provider lists it as deprecated
	RouteUnchecked  = "unchecked"  // no registry, or it could not be read
)

// RouteStatus is what a provider's registry says of one upstream id.
type RouteStatus struct {
	State  string
	Reason string
	// Price is the upstream's price as the provider publishes it ("0.025
	// USD/megapixels"), "" when it publishes none.
	Price string
}

// RouteCheck is one route in a registry check: the catalog model, the
// engine (provider) and upstream id of the route, and what its registry
// said.
type RouteCheck struct {
	ModelID  string `json:"model"`
	Engine   string `json:"provider"`
	Upstream string `json:"upstream"`
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
	Price    string `json:"upstreamPrice,omitempty"`
}

// Registry holds what the latest registry checks found: the routes that
// left routing and the registries that could not be read. Its zero value
// is ready; a Service without one routes everything its catalog names.
type Registry struct {
	mu      sync.Mutex
	retired map[routeKey]string // reason
	checks  map[string][]RouteCheck
	errs    map[string]string
	at      time.Time
}

type routeKey struct{ engine, upstream string }

// Retired reports whether the route left routing, and why.
func (r *Registry) Retired(engine, upstream string) (string, bool) {
	if r == nil {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	why, ok := r.retired[routeKey{engine, upstream}]
	return why, ok
}

// RegistryReport is the state of the registry checks, for /readyz.
type RegistryReport struct {
	CheckedAt time.Time `json:"checkedAt,omitzero"`
	// Retired are the routes out of routing, with the reason.
	Retired []RouteCheck `json:"retired"`
	// Unreachable names the providers whose registry could not be read
	// at the last check, with why; their routes are as they were.
	Unreachable map[string]string `json:"unreachable,omitempty"`
}

// Report returns the state of the checks.
func (r *Registry) Report() RegistryReport {
	if r == nil {
		return RegistryReport{Retired: []RouteCheck{}}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := RegistryReport{CheckedAt: r.at, Retired: []RouteCheck{}}
	for _, cs := range r.checks {
		for _, c := range cs {
			if _, out := r.retired[routeKey{c.Engine, c.Upstream}]; out {
				rep.Retired = append(rep.Retired, c)
			}
		}
	}
	sortChecks(rep.Retired)
	if len(r.errs) > 0 {
		rep.Unreachable = map[string]string{}
		for k, v := range r.errs {
			rep.Unreachable[k] = v
		}
	}
	return rep
}

func sortChecks(cs []RouteCheck) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.ModelID != b.ModelID {
			return a.ModelID < b.ModelID
		}
		if a.Engine != b.Engine {
			return a.Engine < b.Engine
		}
		return a.Upstream < b.Upstream
	})
}

// record keeps one engine's answer: the routes it found unknown or
// deprecated leave routing, the others (back) in.
func (r *Registry) record(engine string, checks []RouteCheck, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.retired == nil {
		r.retired, r.checks, r.errs = map[routeKey]string{}, map[string][]RouteCheck{}, map[string]string{}
	}
	for k := range r.retired {
		if k.engine == engine {
			delete(r.retired, k)
		}
	}
	for _, c := range checks {
		if c.State == RouteUnknown || c.State == RouteDeprecated {
			r.retired[routeKey{c.Engine, c.Upstream}] = c.Reason
		}
	}
	r.checks[engine] = checks
	delete(r.errs, engine)
	r.at = now
}

// unreachable notes that an engine's registry could not be read; its
// routes stay as the last check left them.
func (r *Registry) unreachable(engine, why string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.retired == nil {
		r.retired, r.checks, r.errs = map[routeKey]string{}, map[string][]RouteCheck{}, map[string]string{}
	}
	r.errs[engine] = why
	r.at = now
}

// RegistryCheckTimeout bounds one provider's registry check.
const RegistryCheckTimeout = 30 * time.Second

// CheckRegistries asks every engine that has a registry (RegistryChecker)
// about the routes the catalog (and the operator's routes) would send it,
// records the answers in s.Registry (a route unknown or deprecated leaves
// routing; a registry that cannot be read changes nothing), and returns
// every route of every configured engine with what was found: unchecked
// for engines without a registry. Engines are asked one after another.
func (s *Service) CheckRegistries(ctx context.Context) []RouteCheck {
	byEngine := map[string][]RouteCheck{}
	for _, m := range s.Catalog.Models() {
		rs := m.Routes
		if o, ok := s.Routes[m.ID]; ok {
			rs = o
		}
		for _, r := range rs {
			if _, ok := s.Engines[r.Engine]; !ok || r.Engine == "sandbox" {
				continue
			}
			byEngine[r.Engine] = append(byEngine[r.Engine], RouteCheck{ModelID: m.ID, Engine: r.Engine, Upstream: r.Upstream, State: RouteUnchecked})
		}
	}
	names := make([]string, 0, len(byEngine))
	for n := range byEngine {
		names = append(names, n)
	}
	sort.Strings(names)
	var all []RouteCheck
	for _, name := range names {
		checks := byEngine[name]
		rc, ok := s.Engines[name].(RegistryChecker)
		if !ok {
			for i := range checks {
				checks[i].Reason = "the provider publishes no model registry gengate reads"
			}
			all = append(all, checks...)
			continue
		}
		ids := map[string]bool{}
		var list []string
		for _, c := range checks {
			if !ids[c.Upstream] {
				ids[c.Upstream] = true
				list = append(list, c.Upstream)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, RegistryCheckTimeout)
		got, err := rc.CheckRegistry(cctx, list)
		cancel()
		if err != nil {
			why := "its registry could not be read: " + ErrorMessage(err)
			s.log().WarnContext(ctx, "provider registry check failed; routes unchanged", "provider", name, "err", err)
			if s.Registry != nil {
				s.Registry.unreachable(name, why, s.now())
			}
			for i := range checks {
				checks[i].Reason = why
			}
			all = append(all, checks...)
			continue
		}
		for i, c := range checks {
			if st, ok := got[c.Upstream]; ok {
				checks[i].State, checks[i].Reason, checks[i].Price = st.State, st.Reason, st.Price
			}
			if checks[i].State == RouteUnknown || checks[i].State == RouteDeprecated {
				s.log().WarnContext(ctx, "route leaves routing: its provider's registry", "model", c.ModelID,
					"provider", name, "upstream", c.Upstream, "state", checks[i].State, "reason", checks[i].Reason)
			}
		}
		if s.Registry != nil {
			s.Registry.record(name, checks, s.now())
		}
		all = append(all, checks...)
	}
	sortChecks(all)
	return all
}
