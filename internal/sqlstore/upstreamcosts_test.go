package sqlstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestUpstreamCosts: a succeeded task's upstream cost is written with its
// final state, once however often the finish is retried; the sums by
// model and provider add the credits of every task, and the cost of the
// priced ones only; tasks before the window, failed tasks and tasks
// without a cost record are left out.
func TestUpstreamCosts(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 1000)
			finish := func(model, engine string, cost int, status gengate.Status, at time.Time, uc *gengate.UpstreamCost) {
				t.Helper()
				task := newTask(a.ID, cost)
				task.ModelID, task.Engine, task.Route = model, engine, gengate.Route{Engine: engine, Upstream: "up/" + model}
				mustCreate(t, s, task)
				c := mustClaim(t, s, task.ID, at)
				c.Status, c.UpdatedAt, c.CompletedAt, c.UpstreamCost = status, at, at, uc
				refund := 0
				if status == gengate.StatusFailed {
					refund = cost
				}
				if err := s.FinishTask(ctx, c, refund); err != nil {
					t.Fatal(err)
				}
			}
			now := t0.Add(40 * 24 * time.Hour)
			recent, old := now.Add(-time.Hour), now.Add(-31*24*time.Hour)
			finish("flux", "fal", 10, gengate.StatusSucceeded, recent, &gengate.UpstreamCost{Known: true, MicroUSD: 3000, Basis: "0.003 USD/images × 1 images"})
			finish("flux", "fal", 20, gengate.StatusSucceeded, recent, &gengate.UpstreamCost{Known: true, MicroUSD: 6000})
			finish("flux", "fal", 7, gengate.StatusSucceeded, recent, gengate.UnknownCost("no price"))
			finish("flux", "fal", 50, gengate.StatusSucceeded, old, &gengate.UpstreamCost{Known: true, MicroUSD: 99})
			finish("flux", "fal", 30, gengate.StatusFailed, recent, &gengate.UpstreamCost{Known: true, MicroUSD: 99})
			finish("flux", "replicate", 10, gengate.StatusSucceeded, recent, &gengate.UpstreamCost{Known: true, MicroUSD: 1170})
			finish("flux", "sandbox", 10, gengate.StatusSucceeded, recent, nil)
			finish("veo", "fal", 400, gengate.StatusSucceeded, recent, gengate.UnknownCost("no duration"))

			got, err := s.UpstreamCosts(ctx, now.Add(-gengate.CostWindow))
			if err != nil {
				t.Fatal(err)
			}
			want := []gengate.ModelCost{
				{ModelID: "flux", Engine: "fal", Tasks: 3, Credits: 37, Priced: 2, PricedCredits: 30, UpstreamMicroUSD: 9000},
				{ModelID: "flux", Engine: "replicate", Tasks: 1, Credits: 10, Priced: 1, PricedCredits: 10, UpstreamMicroUSD: 1170},
				{ModelID: "veo", Engine: "fal", Tasks: 1, Credits: 400},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("UpstreamCosts =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
