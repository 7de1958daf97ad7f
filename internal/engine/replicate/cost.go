package replicate

import (
	"fmt"
	"strconv"

	"github.com/gengate/gengate"
)

// HardwareParam is the route parameter that names the Replicate hardware
// (its SKU, "gpu-l40s") a route's model runs on. It is gengate's, not the
// model's: it is never sent as input. Replicate's API does not say which
// hardware runs a public model (its model page does), so an operator who
// wants a time-billed model's cost names it.
const HardwareParam = "hardware"

// routeInput adds a route's parameters to a prediction's input, all but
// gengate's own.
func routeInput(input map[string]any, params map[string]any) {
	for k, v := range params {
		if k != HardwareParam {
			input[k] = v
		}
	}
}

// hardwarePrices are Replicate's published prices per second of its
// hardware, in USD (replicate.com/pricing, "Hardware", read 2026-11-28).
var hardwarePrices = map[string]float64{
	"cpu":               0.000100,
	"gpu-t4":            0.000225,
	"gpu-a40-small":     0.000575,
	"gpu-a40-large":     0.000725,
	"gpu-a40-large-2x":  0.001450,
	"gpu-a40-large-4x":  0.002900,
	"gpu-a40-large-8x":  0.005800,
	"gpu-a100-large":    0.001400,
	"gpu-a100-large-2x": 0.002800,
	"gpu-a100-large-4x": 0.005600,
	"gpu-a100-large-8x": 0.011200,
	"gpu-l40s":          0.000975,
	"gpu-2x-l40s":       0.001950,
	"gpu-4x-l40s":       0.003900,
	"gpu-8x-l40s":       0.007800,
	"gpu-h100":          0.001525,
	"gpu-h100-2x":       0.003050,
	"gpu-h100-4x":       0.006100,
	"gpu-h100-8x":       0.012200,
}

// cost prices a succeeded prediction billed by time: its
// metrics.predict_time × the per-second price of the route's hardware.
// Without the route's hardware, or without predict_time, it is unknown
// (models Replicate maintains are priced per output on their pages, which
// its API does not give).
func cost(job gengate.Job, p prediction) *gengate.UpstreamCost {
	hw, _ := job.Route.Params[HardwareParam].(string)
	if hw == "" {
		return gengate.UnknownCost("Replicate's API does not say which hardware runs " + job.Route.Upstream + " nor its price per output; a route's hardware parameter names it")
	}
	perSecond, ok := hardwarePrices[hw]
	if !ok {
		return gengate.UnknownCost("Replicate publishes no price for hardware " + hw)
	}
	if p.Metrics.PredictTime == nil {
		return gengate.UnknownCost("the prediction reports no metrics.predict_time")
	}
	secs := *p.Metrics.PredictTime
	return &gengate.UpstreamCost{Known: true, MicroUSD: gengate.MicroUSD(secs * perSecond),
		Basis: fmt.Sprintf("predict_time %s s × %s USD/s (%s)", strconv.FormatFloat(secs, 'f', -1, 64), strconv.FormatFloat(perSecond, 'f', -1, 64), hw)}
}
