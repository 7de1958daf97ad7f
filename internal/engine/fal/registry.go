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
		var prices struct {
			Prices []struct {
				EndpointID string  `json:"endpoint_id"`
				UnitPrice  float64 `json:"unit_price"`
				Unit       string  `json:"unit"`
				Currency   string  `json:"currency"`
			} `json:"prices"`
		}
		if e.platform.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/v1/models/pricing?" + q.Encode()}, &prices) == nil {
			for _, p := range prices.Prices {
				e.keepPrice(p.EndpointID, price{p.UnitPrice, p.Unit, p.Currency})
				if st, ok := out[p.EndpointID]; ok {
					st.Price = fmt.Sprintf("%s %s/%s", strconv.FormatFloat(p.UnitPrice, 'f', -1, 64), p.Currency, p.Unit)
					out[p.EndpointID] = st
				}
			}
		}
	}
	return out, nil
}
