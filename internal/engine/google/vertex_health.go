package google

import (
	"context"
	"net/http"

	"github.com/gengate/gengate/internal/engine/upstream"
)

// CheckHealth fetches an access token (the credentials are taken) and
// lists at most one of the project's operations in the location (GET
// /projects/{p}/locations/{l}/operations?pageSize=1: Vertex AI answers
// and the token may use the project), so that refused credentials or an
// address that does not answer are known at start. It creates nothing.
func (v *Vertex) CheckHealth(ctx context.Context) error {
	if err := v.authorize(ctx, true); err != nil {
		return err
	}
	return v.refused(v.core.client.Submit(ctx, upstream.Request{Method: http.MethodGet, Path: "/" + v.resource + "/operations?pageSize=1"}, nil))
}
