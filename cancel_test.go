package gengate_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/replicate"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// confirming is the fake upstream with a confirming cancel: it answers
// what the test says.
type confirming struct {
	*upstream
	answer gengate.Cancellation
}

func (c *confirming) CancelWork(ctx context.Context, job gengate.Job, id string) (gengate.Cancellation, error) {
	c.mu.Lock()
	c.cancels = append(c.cancels, id)
	c.mu.Unlock()
	return c.answer, nil
}

// submitsUpstream makes an upstream whose Submit starts work "u1" and
// whose Check finishes it.
func submitsUpstream() *upstream {
	return &upstream{submit: func(job gengate.Job) (gengate.Progress, error) {
		return gengate.Progress{UpstreamID: "u1"}, nil
	}}
}

// TestCancelQueuedRefundsOnce: a queued task is canceled and refunded in
// full, once, however often the cancel is repeated; the upstream is never
// called.
func TestCancelQueuedRefundsOnce(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		task := d.generate("a cat", "")
		for range 3 {
			o, err := d.svc.Cancel(ctx, d.acct, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if o.Task.Status != gengate.StatusCanceled || !o.Task.Refunded() || o.Balance != 100 {
				t.Fatalf("cancel: %s refunded=%v balance %d", o.Task.Status, o.Task.Refunded(), o.Balance)
			}
		}
		d.wantState(task.ID, gengate.StatusCanceled, "", 100, 1)
		if d.runNext() {
			t.Error("a canceled task was stepped")
		}
		if s, c := d.up.calls(); s+c != 0 || len(d.up.cancels) != 0 {
			t.Errorf("upstream called: %d submits, %d checks, %d cancels", s, c, len(d.up.cancels))
		}
	})
}

// TestCancelHeldForReview: a task held by the review terms never reached
// an engine: canceled and refunded. One in review for an unknown outcome
// is left to the operator.
func TestCancelHeldForReview(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		held := d.generate("hold me please", "")
		if _, err := d.svc.Cancel(ctx, d.acct, held.ID); err != nil {
			t.Fatal(err)
		}
		d.wantState(held.ID, gengate.StatusCanceled, gengate.ReviewTerms, 100, 1)

		d.up.submit = func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{}, context.DeadlineExceeded }
		unknown := d.generate("a cat", "")
		d.runNext()
		d.wantState(unknown.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0)
		if _, err := d.svc.Cancel(ctx, d.acct, unknown.ID); gengate.ErrorCode(err) != gengate.EConflict {
			t.Fatalf("cancel of a task in review: %v, want CONFLICT", err)
		}
		d.wantState(unknown.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0)
	})
}

// TestCancelFinishedRefused: a succeeded or failed task is not canceled
// and nothing changes.
func TestCancelFinishedRefused(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		task := d.generate("a cat", "")
		d.runNext()
		d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
		if _, err := d.svc.Cancel(ctx, d.acct, task.ID); gengate.ErrorCode(err) != gengate.ETaskFinished {
			t.Fatalf("cancel of a finished task: %v, want %s", err, gengate.ETaskFinished)
		}
		got := d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
		if len(got.Outputs) != 1 {
			t.Errorf("outputs %d, want 1", len(got.Outputs))
		}
	})
}

// TestCancelOtherAccount: another account's task is not found, and stays
// as it was.
func TestCancelOtherAccount(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		task := d.generate("a cat", "")
		other, _ := d.account(50)
		if _, err := d.svc.Cancel(ctx, other, task.ID); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Fatalf("cancel of another account's task: %v, want NOT_FOUND", err)
		}
		d.wantState(task.ID, gengate.StatusQueued, "", 96, 0)
	})
}

// TestCancelSubmittedRules: work already upstream is canceled there;
// refunded only when the provider confirms it stopped before charging,
// refused when it already ended.
func TestCancelSubmittedRules(t *testing.T) {
	cases := []struct {
		name    string
		answer  gengate.Cancellation // 0: a plain Canceler
		status  gengate.Status
		balance int
		refunds int
		err     string
	}{
		{"confirmed", gengate.CancelBeforeCharge, gengate.StatusCanceled, 100, 1, ""},
		{"requested", gengate.CancelRequested, gengate.StatusCanceled, 96, 0, ""},
		{"plain canceler", 0, gengate.StatusCanceled, 96, 0, ""},
		{"too late", gengate.CancelTooLate, gengate.StatusRunning, 96, 0, gengate.ETaskFinished},
	}
	forDialects(t, func(t *testing.T, dialect string) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				up := submitsUpstream()
				var eng gengate.Engine = up
				if c.answer != 0 {
					eng = &confirming{upstream: up, answer: c.answer}
				}
				d := newEngineDomain(t, dialect, map[string]gengate.Engine{"fal": eng})
				task := d.generate("a cat", "")
				d.runNext()
				if st := d.task(task.ID).Status; st != gengate.StatusRunning {
					t.Fatalf("task is %s, want running", st)
				}
				_, err := d.svc.Cancel(ctx, d.acct, task.ID)
				if gengate.ErrorCode(err) != c.err && !(c.err == "" && err == nil) {
					t.Fatalf("cancel: %v, want %q", err, c.err)
				}
				got := d.wantState(task.ID, c.status, "", c.balance, c.refunds)
				if len(up.cancels) != 1 || up.cancels[0] != "u1" {
					t.Errorf("upstream cancels %v, want [u1]", up.cancels)
				}
				if c.err != "" && !got.RunAt.Equal(d.clock.Now()) {
					t.Errorf("a task whose work ended is due at %v, want now", got.RunAt)
				}
			})
		}
	})
}

// TestCancelRacesCompletion: cancels and steps of the same running tasks
// race; each task ends canceled (refunded once, no outputs) or succeeded
// (no refund), never both.
func TestCancelRacesCompletion(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		up := submitsUpstream()
		d := newEngineDomain(t, dialect, map[string]gengate.Engine{"fal": &confirming{upstream: up, answer: gengate.CancelBeforeCharge}})
		var ids []string
		for range 8 {
			task := d.generate("a cat", "")
			d.runNext()
			ids = append(ids, task.ID)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			for g := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					if g%2 == 0 {
						_, err = d.svc.Cancel(ctx, d.acct, id)
					} else {
						d.step(id) // a worker's step: Check delivers the outputs
					}
					if c := gengate.ErrorCode(err); err != nil && c != gengate.ETaskFinished && c != gengate.ETaskBusy {
						t.Errorf("task %s: %v", id, err)
					}
				}()
			}
		}
		wg.Wait()
		_, refunds := d.ledger()
		outcomes := map[gengate.Status]int{}
		for _, id := range ids {
			task := d.task(id)
			outcomes[task.Status]++
			switch task.Status {
			case gengate.StatusCanceled:
				if refunds[id] != 1 || len(task.Outputs) != 0 {
					t.Errorf("canceled task %s: %d refunds, %d outputs", id, refunds[id], len(task.Outputs))
				}
			case gengate.StatusSucceeded:
				if refunds[id] != 0 || len(task.Outputs) != 1 {
					t.Errorf("succeeded task %s: %d refunds, %d outputs", id, refunds[id], len(task.Outputs))
				}
			default:
				t.Errorf("task %s ended %s", id, task.Status)
			}
		}
		want := 100 - 4*outcomes[gengate.StatusSucceeded]
		if b := d.balance(); b != want {
			t.Errorf("balance %d, want %d (%v)", b, want, outcomes)
		}
		t.Logf("outcomes: %v", outcomes)
	})
}

// TestCancelProviderFakes: a submitted fal request and Replicate
// prediction are canceled upstream; refunded when the fake confirms the
// work never started, not when it ran, refused when it completed.
func TestCancelProviderFakes(t *testing.T) {
	type setup struct {
		engines map[string]gengate.Engine
		cancels func() int
		// before readies the fake for the case after the task was
		// submitted: "queued" leaves it queued, "running" starts it,
		// "done" completes it.
		before func(d *domain, id, state string)
	}
	providers := map[string]func(t *testing.T) setup{
		"fal": func(t *testing.T) setup {
			f := faltest.New(t)
			return setup{
				engines: map[string]gengate.Engine{"fal": fal.New(fal.Config{APIKey: f.Key(), BaseURL: f.URL(), AllowPrivateOutputs: true})},
				cancels: f.Cancels,
				before: func(d *domain, id, state string) {
					switch state {
					case "queued":
						f.Hold()
					case "running":
						f.SetPolls(100)
						d.step(id)
					case "done": // completed upstream, its result not yet read
						f.Hold()
						d.step(id)
						f.Release() // the next status read (the cancel's) completes it
					}
				},
			}
		},
		"replicate": func(t *testing.T) setup {
			r := replicatetest.New(t)
			return setup{
				engines: map[string]gengate.Engine{"replicate": replicate.New(replicate.Config{APIKey: r.Key(), BaseURL: r.URL(), AllowPrivateOutputs: true})},
				cancels: r.Cancels,
				before: func(d *domain, id, state string) {
					switch state {
					case "running":
						r.SetPolls(100)
						d.step(id)
					case "done": // another client's read completes it
						req, _ := http.NewRequest("GET", r.URL()+"/predictions/"+d.task(id).UpstreamID, nil)
						req.Header.Set("Authorization", "Bearer "+r.Key())
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						resp.Body.Close()
					}
				},
			}
		},
	}
	cases := []struct {
		state   string
		status  gengate.Status
		balance int
		refunds int
		err     string
	}{
		{"queued", gengate.StatusCanceled, 100, 1, ""},
		{"running", gengate.StatusCanceled, 96, 0, ""},
		{"done", gengate.StatusSucceeded, 96, 0, gengate.ETaskFinished},
	}
	for _, dialect := range sqltest.Dialects {
		for name, mk := range providers {
			for _, c := range cases {
				t.Run(dialect+"/"+name+"/"+c.state, func(t *testing.T) {
					ctx := context.Background()
					s := mk(t)
					d := newEngineDomain(t, dialect, s.engines)
					d.svc.ProvidersConfigured = true
					task := d.generate("a cat", "")
					d.runNext()
					if got := d.task(task.ID); got.Status != gengate.StatusRunning || got.Engine != name {
						t.Fatalf("task is %s on %s, want running on %s", got.Status, got.Engine, name)
					}
					s.before(d, task.ID, c.state)
					_, err := d.svc.Cancel(ctx, d.acct, task.ID)
					if gengate.ErrorCode(err) != c.err && !(c.err == "" && err == nil) {
						t.Fatalf("cancel: %v, want %q", err, c.err)
					}
					// fal's status read may already say COMPLETED: no cancel then.
					if n := s.cancels(); n > 1 || n == 0 && c.state != "done" {
						t.Errorf("the fake answered %d cancels, want 1", n)
					}
					if c.err != "" { // the work ended upstream: delivered as usual
						d.step(task.ID)
					}
					d.wantState(task.ID, c.status, "", c.balance, c.refunds)
				})
			}
		}
	}
}

// step claims the task, due or not, and runs its next step, as a worker
// would; false when another claim holds it.
func (d *domain) step(id string) bool {
	d.t.Helper()
	ctx := context.Background()
	t, err := d.store.ClaimTask(ctx, id, "stepper", d.clock.Now(), testLease)
	if err != nil {
		d.t.Fatal(err)
	}
	if t == nil {
		return false
	}
	if err := d.svc.Step(ctx, t); err != nil && gengate.ErrorCode(err) != gengate.EConflict {
		d.t.Error(err)
	}
	return true
}

// newEngineDomain is newDomainWith for any engines (by name) besides the
// sandbox.
func newEngineDomain(t *testing.T, dialect string, engines map[string]gengate.Engine) *domain {
	t.Helper()
	store := sqltest.Open(t, dialect)
	files := filepath.Join(t.TempDir(), "files")
	blobs, err := blob.NewLocal(files)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	all := map[string]gengate.Engine{"sandbox": sandbox.New(0)}
	for name, e := range engines {
		all[name] = e
	}
	svc := &gengate.Service{
		Store: store, Catalog: catalog, Engines: all, Blobs: blobs,
		Fetcher: fetch.New(fetch.Config{}), Events: gengate.NewEvents(), Log: slog.New(slog.DiscardHandler),
		Now: clock.Now, SyncWait: time.Second, ReviewTerms: []string{"hold me"},
		Owner: "test", Lease: testLease, MaxAttempts: 4,
	}
	d := &domain{t: t, svc: svc, store: store, clock: clock, files: files}
	d.acct, d.key = d.account(100)
	return d
}
