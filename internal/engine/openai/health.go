package openai

import (
	"context"
	"net/http"

	"github.com/gengate/gengate/internal/engine/upstream"
)

// CheckHealth asks the provider a cheap authenticated question, so that a
// key it refuses or an address that does not answer is known at start
// (cmd/gengate logs it and shows it in /readyz). It creates nothing.
func (e *Engine) CheckHealth(ctx context.Context) error {
	return e.client.Submit(ctx, upstream.Request{Method: http.MethodGet, Path: healthPath}, nil)
}

// healthPath is GET /v1/models: the models the key can use (OpenAI-compatible servers answer it too).
const healthPath = "/models"
