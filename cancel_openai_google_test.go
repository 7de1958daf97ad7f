package gengate_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/google"
	"github.com/gengate/gengate/internal/engine/google/googletest"
	"github.com/gengate/gengate/internal/engine/openai"
	"github.com/gengate/gengate/internal/engine/openai/openaitest"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// The cancel rules of docs/api.md for OpenAI and Google, with their strict
// fakes: image work answers inside the submit call, so there is nothing
// upstream to stop (TASK_BUSY while the call runs, TASK_FINISHED once it
// answered); a video in progress is canceled here and upstream (OpenAI:
// DELETE /videos/{id}; Veo: operations/{id}:cancel) and never refunded,
// since neither provider confirms that nothing was charged.

// waitCond waits for cond (a condition, never a duration; a minute at
// most, for a busy machine).
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// generateModel submits a request for modelID and returns its task.
func (d *domain) generateModel(typ, modelID string) *gengate.Task {
	d.t.Helper()
	o, err := d.generateBody(`{"type":"` + typ + `","modelId":"` + modelID + `","prompt":"a red fox"}`)
	if err != nil {
		d.t.Fatal(err)
	}
	return o.Task
}

// TestCancelOpenAIImageBusyThenFinished: while the Images API call runs
// (the fake holds it) a cancel answers TASK_BUSY and changes nothing;
// once it answered, the task has its result and a cancel answers
// TASK_FINISHED: charged once, never refunded.
func TestCancelOpenAIImageBusyThenFinished(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		srv := openaitest.New(t)
		srv.ShrinkImages(8)
		d := newEngineDomain(t, dialect, map[string]gengate.Engine{"openai": openai.New(openai.Config{APIKey: srv.Key(), BaseURL: srv.URL()})})
		d.svc.ProvidersConfigured = true
		task := d.generateModel("image", "gpt-image-2")
		if task.Engine != "openai" {
			t.Fatalf("routed to %q, want openai", task.Engine)
		}
		srv.Hold()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.svc.RunNext(ctx); err != nil {
				t.Error(err)
			}
		}()
		waitCond(t, "the Images API call to arrive", func() bool { return srv.Submissions() == 1 })
		_, err := d.svc.Cancel(ctx, d.acct, task.ID)
		if gengate.ErrorCode(err) != gengate.ETaskBusy {
			t.Fatalf("cancel during the Images API call: %v, want %s", err, gengate.ETaskBusy)
		}
		srv.Release()
		wg.Wait()
		d.wantState(task.ID, gengate.StatusSucceeded, "", 100-task.Cost, 0)
		_, err = d.svc.Cancel(ctx, d.acct, task.ID)
		if gengate.ErrorCode(err) != gengate.ETaskFinished {
			t.Fatalf("cancel after the call answered: %v, want %s", err, gengate.ETaskFinished)
		}
		d.wantState(task.ID, gengate.StatusSucceeded, "", 100-task.Cost, 0)
	})
}

// TestCancelGoogleImageFinished: Gemini's generateContent answers inside
// the submit: the task has its result, a cancel answers TASK_FINISHED and
// the fake is asked nothing.
func TestCancelGoogleImageFinished(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		g := googletest.New(t)
		d := newEngineDomain(t, dialect, map[string]gengate.Engine{"google": google.New(google.Config{APIKey: g.Key(), BaseURL: g.URL()})})
		d.svc.ProvidersConfigured = true
		task := d.generateModel("image", "nano-banana")
		if task.Engine != "google" {
			t.Fatalf("routed to %q, want google", task.Engine)
		}
		d.runNext()
		d.wantState(task.ID, gengate.StatusSucceeded, "", 100-task.Cost, 0)
		_, err := d.svc.Cancel(ctx, d.acct, task.ID)
		if gengate.ErrorCode(err) != gengate.ETaskFinished {
			t.Fatalf("cancel: %v, want %s", err, gengate.ETaskFinished)
		}
		if g.Cancels() != 0 {
			t.Errorf("the fake answered %d cancels, want 0", g.Cancels())
		}
		d.wantState(task.ID, gengate.StatusSucceeded, "", 100-task.Cost, 0)
	})
}

// TestCancelVideosNoRefund: an OpenAI video and a Veo operation in
// progress are canceled here and upstream, with no refund
// (CANCELED_AFTER_CHARGE): OpenAI's video is deleted, Veo's operation gets
// its :cancel.
func TestCancelVideosNoRefund(t *testing.T) {
	type setup struct {
		engine  gengate.Engine
		model   string
		hold    func()
		stopped func(d *domain, upstreamID string) bool // the upstream was told
	}
	providers := map[string]func(t *testing.T) setup{
		"openai": func(t *testing.T) setup {
			srv := openaitest.New(t)
			return setup{
				engine: openai.New(openai.Config{APIKey: srv.Key(), BaseURL: srv.URL()}),
				model:  "openai-sora-2",
				hold:   srv.Hold,
				stopped: func(d *domain, upstreamID string) bool {
					id := upstreamID[len("video:"):]
					req, _ := http.NewRequest("GET", srv.URL()+"/videos/"+id, nil)
					req.Header.Set("Authorization", "Bearer "+srv.Key())
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						d.t.Fatal(err)
					}
					resp.Body.Close()
					return resp.StatusCode == http.StatusNotFound // deleted
				},
			}
		},
		"google": func(t *testing.T) setup {
			g := googletest.New(t)
			return setup{
				engine:  google.New(google.Config{APIKey: g.Key(), BaseURL: g.URL()}),
				model:   "google-veo-3-fast",
				hold:    g.Hold,
				stopped: func(*domain, string) bool { return g.Cancels() == 1 },
			}
		},
	}
	for _, dialect := range sqltest.Dialects {
		for name, mk := range providers {
			t.Run(dialect+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				s := mk(t)
				d := newEngineDomain(t, dialect, map[string]gengate.Engine{name: s.engine})
				d.svc.ProvidersConfigured = true
				d.acct, d.key = d.account(1000) // a Veo video costs more than 100
				// The catalog routes Sora through fal and Replicate; an
				// operator may add OpenAI.
				if name == "openai" {
					m, _ := d.svc.Catalog.Model(s.model)
					m.Routes = []gengate.Route{{Engine: "openai", Upstream: "sora-2"}}
				}
				s.hold()
				task := d.generateModel("video", s.model)
				d.runNext()
				got := d.task(task.ID)
				if got.Status != gengate.StatusRunning || got.Engine != name || got.UpstreamID == "" {
					t.Fatalf("task is %s on %q (upstream %q), want running on %s", got.Status, got.Engine, got.UpstreamID, name)
				}
				c, err := d.svc.Cancel(ctx, d.acct, task.ID)
				if err != nil {
					t.Fatalf("cancel: %v", err)
				}
				if c.Task.Status != gengate.StatusCanceled || c.Task.Refunded() {
					t.Errorf("canceled task %s, refunded %v; want canceled, not refunded", c.Task.Status, c.Task.Refunded())
				}
				if !s.stopped(d, got.UpstreamID) {
					t.Errorf("the %s fake was not told to stop %s", name, got.UpstreamID)
				}
				d.wantState(task.ID, gengate.StatusCanceled, "", 1000-task.Cost, 0)
			})
		}
	}
}
