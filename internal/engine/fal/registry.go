package fal

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// PlatformURL is fal's Platform API, where its model registry and prices
// are (https://docs.fal.ai/platform-apis/v1/models).
const PlatformURL = "https://api.fal.ai"

var _ gengate.RegistryChecker = (*Engine)(nil)

// platformBatch is the most endpoint ids one model search takes ("1-50
// models").
const platformBatch = 50

// CheckRegistry asks fal's Platform API about endpoint ids
// (gengate.RegistryChecker): GET /v1/models?endpoint_id=…, 50 at a time;
// an id it does not list is unknown, one listed with status "deprecated"
// is deprecated, the others live, each with the list price of GET
// /v1/models/pricing?endpoint_id=… when fal gives one (a pricing answer
// that cannot be read only leaves prices out).
func (e *Engine) CheckRegistry(ctx context.Context, ids []string) (map[string]gengate.RouteStatus, error) {
	out := map[string]gengate.RouteStatus{}
	for start := 0; start < len(ids); start += platformBatch {
		batch := ids[start:min(len(ids), start+platformBatch)]
		q := url.Values{"endpoint_id": batch}
		var ans struct {
			Models []struct {
				EndpointID string `json:"endpoint_id"`
				Metadata   struct {
					Status string `json:"status"`
				} `json:"metadata"`
			} `json:"models"`
		}
		if err := e.platform.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/v1/models?" + q.Encode()}, &ans); err != nil {
			return nil, err
		}
		for _, id := range batch {
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: "fal's model registry does not list " + id}
		}
		for _, m := range ans.Models {
			if _, asked := out[m.EndpointID]; !asked {
				continue
			}
			st := gengate.RouteStatus{State: gengate.RouteLive}
			if m.Metadata.Status == "deprecated" {
				st = gengate.RouteStatus{State: gengate.RouteDeprecated, Reason: "fal marks " + m.EndpointID + " deprecated"}
			}
			out[m.EndpointID] = st
		}
		if prices, err := e.readPrices(ctx, batch); err == nil {
			for id, p := range prices {
				if st, ok := out[id]; ok {
					st.Price = fmt.Sprintf("%s %s/%s", strconv.FormatFloat(p.unitPrice, 'f', -1, 64), p.currency, p.unit)
					out[id] = st
				}
			}
		}
	}
	return out, nil
}
