package fal

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// price is an endpoint's list price as fal's pricing API gives it
// (GET /v1/models/pricing: unit_price per unit, in currency).
type price struct {
	unitPrice float64
	unit      string
	currency  string
}

func (e *Engine) keepPrice(endpoint string, p price) {
	e.pricesMu.Lock()
	defer e.pricesMu.Unlock()
	if e.prices == nil {
		e.prices = map[string]price{}
	}
	e.prices[endpoint] = p
}

// priceRetry is how long priceOf does not ask the pricing API again about
// an endpoint it gave no price for (none listed, or the answer could not
// be read). Without it each task that ended on such an endpoint (a
// private app fal lists no price for; `gengate bench e2e`'s fake, which
// serves no pricing API) made one more request to fal's Platform API:
// 4 % of the server's CPU in that bench.
const priceRetry = time.Minute

// priceOf returns the endpoint's list price: the one the last registry
// check read, else read now (and kept). ok is false when fal gives none,
// and then for priceRetry without asking again.
func (e *Engine) priceOf(ctx context.Context, endpoint string) (price, bool) {
	now := e.clock()
	e.pricesMu.Lock()
	p, ok := e.prices[endpoint]
	asked := e.noPrice[endpoint]
	e.pricesMu.Unlock()
	if ok {
		return p, true
	}
	if !asked.IsZero() && now.Sub(asked) < priceRetry {
		return price{}, false
	}
	prices, err := e.readPrices(ctx, []string{endpoint})
	if p, ok = prices[endpoint]; err != nil || !ok {
		e.pricesMu.Lock()
		if e.noPrice == nil {
			e.noPrice = map[string]time.Time{}
		}
		e.noPrice[endpoint] = now
		e.pricesMu.Unlock()
		return price{}, false
	}
	return p, true
}

func (e *Engine) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// readPrices reads the list prices of the endpoints from fal's pricing
// API and keeps them; endpoints fal gives no price for are left out.
func (e *Engine) readPrices(ctx context.Context, endpoints []string) (map[string]price, error) {
	var ans struct {
		Prices []struct {
			EndpointID string  `json:"endpoint_id"`
			UnitPrice  float64 `json:"unit_price"`
			Unit       string  `json:"unit"`
			Currency   string  `json:"currency"`
		} `json:"prices"`
	}
	q := url.Values{"endpoint_id": endpoints}
	if err := e.platform.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/v1/models/pricing?" + q.Encode()}, &ans); err != nil {
		return nil, err
	}
	out := make(map[string]price, len(ans.Prices))
	for _, a := range ans.Prices {
		p := price{a.UnitPrice, a.Unit, a.Currency}
		e.keepPrice(a.EndpointID, p)
		out[a.EndpointID] = p
	}
	return out, nil
}

// cost prices a completed request: fal bills the output by the unit its
// pricing API names (docs.fal.ai Model APIs pricing: "per image or per
// megapixel of output", "per second of generated video or a flat rate per
// video"), measured here from the result: images counted (every one fal
// made, flagged ones too), megapixels from their width and height, video
// seconds from the job's duration. A unit gengate cannot measure, a
// currency other than USD, or no price at all leaves the cost unknown.
func (e *Engine) cost(ctx context.Context, job gengate.Job, res result) *gengate.UpstreamCost {
	endpoint := job.Route.Upstream
	p, ok := e.priceOf(ctx, endpoint)
	if !ok {
		return gengate.UnknownCost("fal's pricing API gives no price for " + endpoint)
	}
	if !strings.EqualFold(p.currency, "USD") {
		return gengate.UnknownCost("fal prices " + endpoint + " in " + p.currency + ", not USD")
	}
	images := append([]file(nil), res.Images...)
	if res.Image != nil {
		images = append(images, *res.Image)
	}
	videos := len(res.Videos)
	if res.Video != nil {
		videos++
	}
	var qty float64
	var what string
	switch u := strings.ToLower(strings.TrimSpace(p.unit)); u {
	case "image", "images":
		qty, what = float64(len(images)), "images"
	case "megapixel", "megapixels", "mp":
		for _, f := range images {
			if f.Width <= 0 || f.Height <= 0 {
				return gengate.UnknownCost("fal prices " + endpoint + " per megapixel and its result gives no image size")
			}
			qty += float64(f.Width) * float64(f.Height) / 1e6
		}
		what = "megapixels"
	case "second", "seconds", "video_second", "video_seconds":
		d, ok := job.Options["duration"].(int64)
		if !ok || videos == 0 {
			return gengate.UnknownCost("fal prices " + endpoint + " per second and the task names no video duration")
		}
		qty, what = float64(d)*float64(videos), "seconds"
	case "video", "videos":
		qty, what = float64(videos), "videos"
	case "request", "requests", "call", "calls", "unit", "units":
		qty, what = 1, "requests"
	default:
		return gengate.UnknownCost("fal prices " + endpoint + " per " + p.unit + ", which gengate does not measure")
	}
	return &gengate.UpstreamCost{Known: true, MicroUSD: gengate.MicroUSD(p.unitPrice * qty),
		Basis: fmt.Sprintf("%s USD/%s × %s %s", strconv.FormatFloat(p.unitPrice, 'f', -1, 64), p.unit, strconv.FormatFloat(qty, 'f', -1, 64), what)}
}
