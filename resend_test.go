package gengate_test

import (
	"context"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/replicate"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestAmbiguousCreateIsNeverSentAgain: a Replicate create answered 500 may
// have made the prediction (replicate-go sends a POST again only on a 429,
// replicate-python never): the task is never submitted a second time, nor
// on another route. When the fake made the prediction before failing, the
// service finds it in Replicate's list of predictions and delivers it; when
// it made nothing, the task is held for review with its credits held. A
// 429 made nothing: the create is sent again.
func TestAmbiguousCreateIsNeverSentAgain(t *testing.T) {
	cases := []struct {
		name    string
		fail    func(r *replicatetest.Server)
		creates int
		status  gengate.Status
		reason  string
	}{
		{"created then 500", func(r *replicatetest.Server) { r.FailSubmitsAfterCreate(500, 1) }, 1, gengate.StatusSucceeded, ""},
		{"created then 502", func(r *replicatetest.Server) { r.FailSubmitsAfterCreate(502, 1) }, 1, gengate.StatusSucceeded, ""},
		{"500, nothing created", func(r *replicatetest.Server) { r.FailSubmits(500, 1) }, 1, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown},
		{"429", func(r *replicatetest.Server) { r.FailSubmits(429, 1) }, 2, gengate.StatusSucceeded, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forDialects(t, func(t *testing.T, dialect string) {
				r := replicatetest.New(t)
				eng := replicate.New(replicate.Config{APIKey: r.Key(), BaseURL: r.URL(), AllowPrivateOutputs: true})
				d := newEngineDomain(t, dialect, map[string]gengate.Engine{"replicate": eng})
				d.svc.ProvidersConfigured = true
				o, err := d.svc.Generate(context.Background(), d.key,
					[]byte(`{"type":"image","modelId":"flux-schnell","prompt":"a lighthouse at dusk"}`), "")
				if err != nil {
					t.Fatal(err)
				}
				task := o.Task
				if task.Engine != "replicate" {
					t.Fatalf("routed to %s", task.Engine)
				}
				c.fail(r)
				for i := 0; i < 10 && d.task(task.ID).Status.Active(); i++ {
					d.clock.Add(5 * time.Second)
					d.step(task.ID)
				}
				refunds, balance := 0, 100-task.Cost
				got := d.wantState(task.ID, c.status, c.reason, balance, refunds)
				if n := r.Creates(); n != c.creates {
					t.Errorf("the fake received %d creates, want %d", n, c.creates)
				}
				if c.status == gengate.StatusSucceeded && (got.UpstreamID == "" || len(got.Outputs) == 0 && r.Submissions() != 1) {
					t.Errorf("task %+v: want the one prediction's output", got)
				}
				if got.Engine != "replicate" {
					t.Errorf("task moved to %s", got.Engine)
				}
			})
		})
	}
}
