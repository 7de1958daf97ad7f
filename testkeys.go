package gengate

import "context"

// This file holds the rules of test keys, as Stripe's test mode: a key
// that starts TestKeyPrefix makes tasks that run on the sandbox whatever
// the model's routes, charge nothing, and are marked test (their route's
// Test); everything else (validation, idempotency, webhooks, lists) is as
// for a live key, so an integration is tried end to end for free. Test
// calls cost no credit, so they are paced as free-model calls are
// (paceFree).

// CreateTestKey makes a new test key for an account, as CreateKey makes a
// live one.
func (s *Service) CreateTestKey(ctx context.Context, accountID, name string, spendLimit int) (string, *APIKey, error) {
	return s.createKey(ctx, accountID, name, spendLimit, true)
}

// Test reports whether a test key made the task.
func (t *Task) Test() bool { return t.Route.Test }

// testRoute is the route of a test key's request: the sandbox, if it can
// do the request (its validation as for a live route).
func (s *Service) testRoute(req *Request) (Route, error) {
	if _, ok := s.Engines["sandbox"]; !ok {
		return Route{}, Errorf(EInternal, "test keys need the sandbox engine, which is not configured")
	}
	return s.firstValid([]Route{{Engine: "sandbox", Upstream: req.Model.ID, Test: true}}, s.requestJob(req))
}
