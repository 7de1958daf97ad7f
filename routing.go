package gengate

import (
	"context"
)

// Routing: which engine and upstream model serve a task, chosen at
// creation among the routes this configuration allows, and the next one
// when a route refuses the work.

// RoutesFor returns the routes that can serve m in this configuration, in
// the order they are tried: the operator's routes for the model or the
// catalog's, keeping those whose engine is configured; with no provider
// configured at all, the sandbox when none is left.
func (s *Service) RoutesFor(m *Model) []Route {
	rs := m.Routes
	if o, ok := s.Routes[m.ID]; ok {
		rs = o
	}
	var out []Route
	for _, r := range rs {
		if _, ok := s.Engines[r.Engine]; !ok {
			continue
		}
		if _, retired := s.Registry.Retired(r.Engine, r.Upstream); retired {
			continue // its provider no longer lists it (registry.go)
		}
		out = append(out, r)
	}
	if _, ok := s.Engines["sandbox"]; ok && len(out) == 0 && !s.ProvidersConfigured {
		out = append(out, Route{Engine: "sandbox", Upstream: m.ID})
	}
	return out
}

// EngineName returns the name of the engine that serves new tasks of m
// with default settings, "" when none can.
func (s *Service) EngineName(m *Model) string {
	if rs := s.RoutesFor(m); len(rs) > 0 {
		return rs[0].Engine
	}
	return ""
}

// chooseRoute picks the first route whose engine can do the request, before
// anything is charged: an option no route can do is refused with the first
// route's reason.
func (s *Service) chooseRoute(req *Request) (Route, error) {
	routes := s.RoutesFor(req.Model)
	if len(routes) == 0 {
		return Route{}, &Error{Code: EInvalid,
			Message: "model " + req.Model.ID + " is not available here: no configured provider serves it",
			Fields:  []FieldError{{Field: "modelId", Code: FieldUnsupported, Message: "no configured provider serves this model"}}}
	}
	return s.firstValid(routes, s.requestJob(req))
}

// requestJob is the job of a request as routes validate it before its
// inputs are fetched: the inputs by name only.
func (s *Service) requestJob(req *Request) Job {
	names := map[string]Input{}
	for name := range req.InputURLs {
		names[name] = Input{}
	}
	return Job{ModelID: req.Model.ID, Type: req.Model.Type, Prompt: req.Prompt, AspectRatio: req.AspectRatio(),
		NumOutputs: req.NumOutputs(), OutputFormat: req.OutputFormat(), Options: req.Options, Inputs: names}
}

func (s *Service) firstValid(routes []Route, job Job) (Route, error) {
	var first error
	for _, r := range routes {
		job.Route = r
		v, ok := s.Engines[r.Engine].(Validator)
		if !ok {
			return r, nil
		}
		err := v.Validate(job)
		if err == nil {
			return r, nil
		}
		if first == nil {
			first = err
		}
	}
	return Route{}, first
}

// nextRoute finds the route after the task's current one that can do it.
func (s *Service) nextRoute(ctx context.Context, t *Task) (Route, bool) {
	m, ok := s.Catalog.Model(t.ModelID)
	if !ok || t.Test() { // a test task never leaves the sandbox
		return Route{}, false
	}
	routes := s.RoutesFor(m)
	for i, r := range routes {
		if r.Engine == t.Route.Engine && r.Upstream == t.Route.Upstream {
			names := map[string]Input{}
			for name := range t.Inputs {
				names[name] = Input{}
			}
			job := s.baseJob(t)
			job.Inputs = names
			next, err := s.firstValid(routes[i+1:], job)
			return next, err == nil && next.Engine != ""
		}
	}
	return Route{}, false
}

// routeAndCost is the route a request runs on and what it costs the key:
// a test key's runs on the sandbox and costs nothing (testkeys.go);
// another's runs on the model's first route that can do it, at the
// model's price.
func (s *Service) routeAndCost(key *APIKey, req *Request) (Route, int, error) {
	if key.Test {
		route, err := s.testRoute(req)
		return route, 0, err
	}
	route, err := s.chooseRoute(req)
	if err != nil {
		return Route{}, 0, err
	}
	return route, req.Model.Quote(req.Options), nil
}
