package openai

import (
	"context"
	"net/http"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.RegistryChecker = (*Engine)(nil)

// CheckRegistry asks the server's model list about route ids
// (gengate.RegistryChecker): GET /v1/models, every model the key may use
// (openai-go model.go). A route whose id the list lacks is unknown: a
// model shut down (gpt-image-1 on 2026-10-23, Sora on 2026-09-24) or one
// the key may not use. OpenAI publishes no deprecation flag or price
// there. An OpenAI-compatible server is asked the same way.
func (e *Engine) CheckRegistry(ctx context.Context, ids []string) (map[string]gengate.RouteStatus, error) {
	var ans struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/models"}, &ans); err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, m := range ans.Data {
		listed[m.ID] = true
	}
	out := map[string]gengate.RouteStatus{}
	for _, id := range ids {
		if listed[id] {
			out[id] = gengate.RouteStatus{State: gengate.RouteLive}
		} else {
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: e.name + "'s model list (GET /v1/models) does not list " + id}
		}
	}
	return out, nil
}
