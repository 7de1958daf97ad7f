package fal

import (
	"context"
	"net/http"

	"github.com/gengate/gengate"

	"github.com/gengate/gengate/internal/engine/upstream"
)

// CheckHealth asks the provider a cheap authenticated question, so that a
// key it refuses or an address that does not answer is known at start
// (cmd/gengate logs it and shows it in /readyz). It creates nothing.
func (e *Engine) CheckHealth(ctx context.Context) error {
	err := e.client.Submit(ctx, upstream.Request{Method: http.MethodGet, Path: healthPath}, nil)
	if ue, ok := err.(*gengate.UpstreamError); ok && ue.Status == http.StatusNotFound {
		return nil // the key was taken; the request is unknown, as it should be
	}
	return err
}

// healthPath is the status of a request that does not exist (status URLs
// name the owner and app only): fal checks
// the key first (401), then answers 404 for the unknown request.
const healthPath = "/fal-ai/flux/requests/00000000-0000-4000-8000-000000000000/status"
