package replicate

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.RegistryChecker = (*Engine)(nil)

// CheckRegistry asks Replicate's models API about each route's model
// (gengate.RegistryChecker): GET /v1/models/{owner}/{name}, and for a
// route pinned to a version GET …/versions/{id}. A 404 (the model was
// deleted, made private or renamed; the version is gone) is unknown;
// Replicate marks nothing deprecated and publishes per-model prices only
// on its web pages, so a found model is live with no price. Any other
// failure means the registry could not be read.
func (e *Engine) CheckRegistry(ctx context.Context, ids []string) (map[string]gengate.RouteStatus, error) {
	out := map[string]gengate.RouteStatus{}
	for _, id := range ids {
		name, version := upstreamModel(id)
		owner, mname, ok := strings.Cut(name, "/")
		if !ok || owner == "" || mname == "" {
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: "replicate: route model " + name + " is not owner/name"}
			continue
		}
		p := "/models/" + url.PathEscape(owner) + "/" + url.PathEscape(mname)
		st, err := e.exists(ctx, p, "replicate does not know the model "+name)
		if err == nil && st.State == gengate.RouteLive && version != "" {
			st, err = e.exists(ctx, p+"/versions/"+url.PathEscape(version), "replicate does not know version "+version+" of "+name)
		}
		if err != nil {
			return nil, err
		}
		out[id] = st
	}
	return out, nil
}

// exists reads path: live when it answers, unknown (with why) on a 404.
func (e *Engine) exists(ctx context.Context, path, why string) (gengate.RouteStatus, error) {
	c := *e.client
	status := 0
	c.Explain = func(s int, body []byte) (string, string) {
		status = s
		return explain(s, body)
	}
	err := c.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: path}, nil)
	var ue *gengate.UpstreamError
	switch {
	case err == nil:
		return gengate.RouteStatus{State: gengate.RouteLive}, nil
	case status == http.StatusNotFound && !errors.As(err, &ue):
		return gengate.RouteStatus{State: gengate.RouteUnknown, Reason: why}, nil
	}
	return gengate.RouteStatus{}, err
}
