package gengate

import (
	"context"
	"math"
	"time"
)

// Upstream cost: what a provider charges for a task's work, next to the
// credits the task was charged, so that an operator sees a route that
// loses money. An engine tells it when the provider reports it or
// publishes a price the work can be measured by (fal's pricing API,
// Replicate's predict_time × its hardware's price, OpenAI's usage tokens
// × its published token prices; docs/providers.md, "Upstream cost").
// Every succeeded task on a provider's engine is recorded, with its cost
// or without one, so the share of tasks priced is known too.
//
// Amounts are millionths of a US dollar (micro-USD) in integers: the
// providers publish in USD, per-task costs are fractions of a cent
// (0.003 USD an image), and integers add up without float drift.

// UpstreamCost is one task's cost at its provider.
type UpstreamCost struct {
	// Known is false when the engine could not price the work (no
	// published price, a unit it cannot measure); MicroUSD is then 0.
	Known    bool
	MicroUSD int64
	// Basis says how the cost was found, or why it is not known
	// ("0.003 USD/image × 1 image").
	Basis string
}

// MicroUSD converts US dollars to micro-USD, rounded to the nearest.
func MicroUSD(usd float64) int64 { return int64(math.Round(usd * 1e6)) }

// UnknownCost is an UpstreamCost the engine could not find, with why.
func UnknownCost(why string) *UpstreamCost { return &UpstreamCost{Basis: why} }

// localEngines run in this process: their work costs no provider anything.
var localEngines = map[string]bool{"sandbox": true, "builtin": true}

// upstreamCost is what a task that succeeded with p records: the engine's
// cost, an unknown one for a provider's engine that gave none, nil for
// the engines in this process.
func upstreamCost(t *Task, p Progress) *UpstreamCost {
	if localEngines[t.Engine] {
		return nil
	}
	if p.Cost != nil {
		return p.Cost
	}
	return UnknownCost("the engine reports no cost for this provider")
}

// ModelCost is a model's succeeded tasks on one provider over a period:
// credits charged against what the provider charged.
type ModelCost struct {
	ModelID string `json:"modelId"`
	Engine  string `json:"provider"`
	// Tasks succeeded, and the credits charged for them.
	Tasks   int   `json:"tasks"`
	Credits int64 `json:"credits"`
	// Priced is how many of them have a known upstream cost; PricedCredits
	// the credits charged for those, and UpstreamMicroUSD their cost.
	Priced           int   `json:"pricedTasks"`
	PricedCredits    int64 `json:"pricedCredits"`
	UpstreamMicroUSD int64 `json:"upstreamMicroUsd"`
}

// CostWindow is the period the engines page and providers check sum.
const CostWindow = 30 * 24 * time.Hour

// UpstreamCosts returns the cost sums of the last CostWindow; none when
// the store keeps no costs.
func (s *Service) UpstreamCosts(ctx context.Context) ([]ModelCost, error) {
	cs, ok := s.Store.(CostStore)
	if !ok {
		return nil, nil
	}
	return cs.UpstreamCosts(ctx, s.now().Add(-CostWindow))
}
