package google

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.RegistryChecker = (*Engine)(nil)

// listPages bounds the pages of models.list read (1000 models each).
const listPages = 10

// CheckRegistry asks the Gemini API's models.list about route ids
// (gengate.RegistryChecker): GET /v1beta/models?pageSize=1000, page after
// page; a route whose model is not listed ("models/<id>") is unknown: the
// Gemini API no longer serves it to this key (a preview shut down, Imagen
// and Veo moved to Vertex AI). The list gives no deprecation flag or price.
func (e *Engine) CheckRegistry(ctx context.Context, ids []string) (map[string]gengate.RouteStatus, error) {
	listed := map[string]bool{}
	token := ""
	for page := 0; page < listPages; page++ {
		q := url.Values{"pageSize": {"1000"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		var ans struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
			NextPageToken string `json:"nextPageToken"`
		}
		if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/models?" + q.Encode()}, &ans); err != nil {
			return nil, err
		}
		for _, m := range ans.Models {
			listed[strings.TrimPrefix(m.Name, "models/")] = true
		}
		if token = ans.NextPageToken; token == "" {
			break
		}
	}
	out := map[string]gengate.RouteStatus{}
	for _, id := range ids {
		if listed[id] {
			out[id] = gengate.RouteStatus{State: gengate.RouteLive}
		} else {
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: "the Gemini API's models.list does not list " + id}
		}
	}
	return out, nil
}
