package google

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.RegistryChecker = (*Vertex)(nil)

// CheckRegistry asks Vertex AI's Model Garden about each route's publisher
// model (gengate.RegistryChecker): GET /v1/publishers/google/models/{id}
// (publishers.models.get, Vertex AI REST reference v1; go-genai's
// Models.Get on Vertex AI sends the same GET, outside the project). A 404
// (the model was retired, or never served in this location) is unknown.
// A PublisherModel has a launchStage but no deprecation flag or price, so
// a found model is live. Any other failure means the registry could not
// be read.
func (v *Vertex) CheckRegistry(ctx context.Context, ids []string) (map[string]gengate.RouteStatus, error) {
	if err := v.authorize(ctx, false); err != nil {
		return nil, err
	}
	out := map[string]gengate.RouteStatus{}
	for _, id := range ids {
		name := strings.TrimPrefix(id, "publishers/google/models/")
		if name == "" || strings.ContainsAny(name, "/?#: ") {
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: "vertex: " + id + " is not a Vertex AI publisher model id"}
			continue
		}
		c := *v.core.client
		status := 0
		c.Explain = func(s int, body []byte) (string, string) {
			status = s
			return explain(s, body)
		}
		var m struct {
			Name        string `json:"name"`
			LaunchStage string `json:"launchStage"`
		}
		err := c.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/publishers/google/models/" + url.PathEscape(name)}, &m)
		var ue *gengate.UpstreamError
		switch {
		case err == nil:
			out[id] = gengate.RouteStatus{State: gengate.RouteLive}
		case status == http.StatusNotFound && !errors.As(err, &ue):
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: "Vertex AI's publisher models do not include " + name}
		default:
			return nil, v.refused(err)
		}
	}
	return out, nil
}
