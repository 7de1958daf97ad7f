package gengate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// These tests drive the route, fallback and deadline rules of the task life
// with scripted engines (the upstream type in service_test.go). The
// provider engines' own answers are tested against fakes of each
// provider's protocol in their packages.

func busy(after time.Duration) error {
	return &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Status: 429, Message: "slow down", RetryAfter: after}
}

func refused(code string) error {
	return &gengate.UpstreamError{Kind: gengate.Refused, Code: code, Status: 401, Message: "fal answered 401: bad key"}
}

func noWide(job gengate.Job) error {
	if job.AspectRatio == "21:9" {
		return &gengate.Error{Code: gengate.EUnsupportedOption, Message: "no 21:9 here",
			Fields: []gengate.FieldError{{Field: "aspectRatio", Code: gengate.FieldUnsupported, Message: "no 21:9"}}}
	}
	return nil
}

func (d *domain) generateBody(body string) (*gengate.Outcome, error) {
	return d.svc.Generate(context.Background(), d.key, []byte(body), "")
}

// TestRouteChosenBeforeCharge: the first route that can do the request
// takes it; when none can, the request is refused before any charge.
func TestRouteChosenBeforeCharge(t *testing.T) {
	fal := &upstream{validate: noWide}
	rep := &upstream{name: "replicate"}
	d := newDomainWith(t, "sqlite", fal, rep)
	o, err := d.generateBody(`{"type":"image","modelId":"flux","prompt":"x","aspectRatio":"21:9"}`)
	if err != nil {
		t.Fatal(err)
	}
	if o.Task.Engine != "replicate" || o.Task.Route.Upstream != "black-forest-labs/flux-dev" {
		t.Fatalf("routed to %s %+v, want replicate", o.Task.Engine, o.Task.Route)
	}
	if got := d.task(o.Task.ID); got.Route.Engine != "replicate" {
		t.Fatalf("stored route %+v", got.Route)
	}
	o, err = d.generateBody(`{"type":"image","modelId":"flux","prompt":"x","aspectRatio":"1:1"}`)
	if err != nil || o.Task.Engine != "fal" {
		t.Fatalf("1:1 should go to fal: %v %+v", err, o)
	}

	// Both refuse: 400 before any charge.
	d2 := newDomainWith(t, "sqlite", &upstream{validate: noWide}, &upstream{name: "replicate", validate: noWide})
	_, err = d2.generateBody(`{"type":"image","modelId":"flux","prompt":"x","aspectRatio":"21:9"}`)
	if gengate.ErrorCode(err) != gengate.EUnsupportedOption {
		t.Fatalf("got %v, want UNSUPPORTED_MODEL_OPTION", err)
	}
	if b := d2.balance(); b != 100 {
		t.Errorf("balance %d after a refused request", b)
	}
	if c, _ := d2.ledger(); len(c) != 0 {
		t.Errorf("charges %v after a refused request", c)
	}
}

// TestRoutesFor: which routes serve a model in which configuration.
func TestRoutesFor(t *testing.T) {
	d := newDomainWith(t, "sqlite", &upstream{})
	flux, _ := d.svc.Catalog.Model("flux")
	wan, _ := d.svc.Catalog.Model("wan-2-5-t2v") // fal and replicate routes
	gpt, _ := d.svc.Catalog.Model("gpt-image-2") // openai only
	if got := d.svc.RoutesFor(flux); len(got) != 1 || got[0].Engine != "fal" {
		t.Errorf("flux: %+v", got)
	}
	if got := d.svc.RoutesFor(gpt); len(got) != 1 || got[0].Engine != "sandbox" {
		t.Errorf("offline default must fall back to the sandbox: %+v", got)
	}
	d.svc.ProvidersConfigured = true
	if got := d.svc.RoutesFor(gpt); len(got) != 0 {
		t.Errorf("with a provider configured the sandbox must not serve gpt-image-2: %+v", got)
	}
	if _, err := d.generateBody(`{"type":"image","modelId":"gpt-image-2","prompt":"x"}`); gengate.ErrorCode(err) != gengate.EInvalid {
		t.Errorf("unavailable model: %v", err)
	}
	d.svc.Routes = map[string][]gengate.Route{"wan-2-5-t2v": {{Engine: "sandbox", Upstream: "demo"}, {Engine: "fal", Upstream: "x"}}}
	if got := d.svc.RoutesFor(wan); len(got) != 2 || got[0].Engine != "sandbox" {
		t.Errorf("an operator's route naming the sandbox: %+v", got)
	}
}

// TestBusySubmitRetriesThenFallsBack: 429 at submit means nothing was
// accepted: the same route is tried again after Retry-After, and after
// MaxAttempts the next route takes the task. One charge, no refund.
func TestBusySubmitRetriesThenFallsBack(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		fal := &upstream{submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{}, busy(5 * time.Second) }}
		rep := &upstream{name: "replicate"}
		d := newDomainWith(t, dialect, fal, rep)
		task := d.generate("a bird", "")
		start := d.clock.Now()
		d.runNext()
		got := d.wantState(task.ID, gengate.StatusQueued, "", 96, 0)
		if got.RunAt.Before(start.Add(5 * time.Second)) {
			t.Errorf("Retry-After not honoured: due %v", got.RunAt.Sub(start))
		}
		if d.runNext() {
			t.Fatal("ran before Retry-After")
		}
		for i := 0; i < 10 && d.task(task.ID).Engine == "fal"; i++ {
			d.clock.Add(2 * time.Minute)
			d.runNext()
		}
		if s, _ := fal.calls(); s != d.svc.MaxAttempts {
			t.Errorf("fal submits %d, want MaxAttempts %d", s, d.svc.MaxAttempts)
		}
		d.runNext()
		d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
		if s, _ := rep.calls(); s != 1 {
			t.Errorf("replicate submits %d, want 1", s)
		}
	})
}

// TestRefusedSubmit: a refusal moves the task to the next route at once;
// with no route left it fails with the refusal's code and a refund.
func TestRefusedSubmit(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		fal := &upstream{submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{}, refused(gengate.CodeUpstream) }}
		rep := &upstream{name: "replicate"}
		d := newDomainWith(t, dialect, fal, rep)
		task := d.generate("a bird", "")
		d.runNext()
		got := d.wantState(task.ID, gengate.StatusQueued, "", 96, 0)
		if got.Engine != "replicate" || got.Route.Upstream != "black-forest-labs/flux-dev" || got.Attempts != 0 {
			t.Fatalf("after refusal: engine %s route %+v attempts %d", got.Engine, got.Route, got.Attempts)
		}
		d.runNext()
		d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
	})
	t.Run("last route", func(t *testing.T) {
		fal := &upstream{submit: func(gengate.Job) (gengate.Progress, error) {
			return gengate.Progress{}, refused(gengate.CodeRejectedInput)
		}}
		d := newDomainWith(t, "sqlite", fal)
		task := d.generate("a bird", "")
		d.runNext()
		got := d.wantState(task.ID, gengate.StatusFailed, "", 100, 1)
		if got.ErrorCode != gengate.CodeRejectedInput || !got.InputFault {
			t.Errorf("code %s fault %v", got.ErrorCode, got.InputFault)
		}
	})
}

// TestFailedAndAmbiguousNeverFallBack: a content-policy failure fails the
// task (refunded) and an ambiguous submit goes to review (held); neither
// is sent to another route.
func TestFailedAndAmbiguousNeverFallBack(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status gengate.Status
		reason string
		bal    int
		refund int
		code   string
	}{
		{"content policy", &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeContentPolicy, Message: "flagged"},
			gengate.StatusFailed, "", 100, 1, gengate.CodeContentPolicy},
		{"reset after send", errors.New("read tcp: connection reset by peer"),
			gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fal := &upstream{submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{}, tc.err }}
			rep := &upstream{name: "replicate"}
			d := newDomainWith(t, "sqlite", fal, rep)
			task := d.generate("a bird", "")
			d.runNext()
			got := d.wantState(task.ID, tc.status, tc.reason, tc.bal, tc.refund)
			if got.ErrorCode != tc.code {
				t.Errorf("code %q, want %q", got.ErrorCode, tc.code)
			}
			if s, _ := rep.calls(); s != 0 {
				t.Errorf("the next route was tried %d times", s)
			}
			if d.runNext() {
				t.Error("a finished task ran again")
			}
		})
	}
}

// TestBusyCheckKeepsPolling: 429s while polling never end a task that the
// upstream holds; they only delay the next poll.
func TestBusyCheckKeepsPolling(t *testing.T) {
	n := 0
	fal := &upstream{
		submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "req-1"}, nil },
		check: func(job gengate.Job, id string) (gengate.Progress, error) {
			if n++; n <= 12 {
				return gengate.Progress{}, busy(3 * time.Second)
			}
			return gengate.Progress{Outputs: pngOutputs(1)}, nil
		},
	}
	d := newDomainWith(t, "sqlite", fal)
	task := d.generate("a bird", "")
	d.runNext() // submit
	d.clock.Add(time.Second)
	d.runNext() // first poll: busy
	for i := 1; i < 12; i++ {
		d.clock.Add(time.Second)
		if d.runNext() {
			t.Fatalf("poll %d ran before Retry-After", i)
		}
		d.clock.Add(gengate.MaxPollInterval)
		if !d.runNext() {
			t.Fatalf("poll %d did not run after Retry-After", i)
		}
	}
	d.wantState(task.ID, gengate.StatusRunning, "", 96, 0)
	d.clock.Add(time.Minute)
	d.runNext()
	d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
}

// TestDeadline: upstream work still running at the model's deadline is
// cancelled upstream and the task fails with DEADLINE_EXCEEDED, refunded.
func TestDeadline(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		fal := &upstream{
			submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "req-9"}, nil },
			check:  func(gengate.Job, string) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "req-9"}, nil },
		}
		d := newDomainWith(t, dialect, fal)
		task := d.generate("a bird", "")
		d.runNext()
		for i := 0; i < 200 && d.task(task.ID).Status == gengate.StatusRunning; i++ {
			d.clock.Add(30 * time.Second)
			d.runNext()
		}
		got := d.wantState(task.ID, gengate.StatusFailed, "", 100, 1)
		if got.ErrorCode != gengate.CodeDeadline {
			t.Errorf("code %s", got.ErrorCode)
		}
		if el := got.CompletedAt.Sub(got.CreatedAt); el < gengate.DefaultImageDeadline || el > gengate.DefaultImageDeadline+time.Minute {
			t.Errorf("stopped after %v, deadline %v", el, gengate.DefaultImageDeadline)
		}
		if len(fal.cancels) != 1 || fal.cancels[0] != "req-9" {
			t.Errorf("cancels %v, want [req-9]", fal.cancels)
		}
	})
}

// TestPollBackoff: the next poll of a task grows with its age, up to
// MaxPollInterval, whatever the engine suggests below that.
func TestPollBackoff(t *testing.T) {
	fal := &upstream{
		submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "r"}, nil },
		check:  func(gengate.Job, string) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "r"}, nil },
	}
	d := newDomainWith(t, "sqlite", fal)
	task := d.generate("a bird", "")
	d.runNext()
	var gaps []time.Duration
	for i := 0; i < 25; i++ {
		due := d.task(task.ID).RunAt
		gaps = append(gaps, due.Sub(d.clock.Now()))
		d.clock.Add(due.Sub(d.clock.Now()) + 10*time.Second) // a busy worker comes late
		d.runNext()
	}
	for i := 1; i < len(gaps); i++ {
		if gaps[i] < gaps[i-1] || gaps[i] > gengate.MaxPollInterval {
			t.Fatalf("gaps not growing up to the cap: %v", gaps)
		}
	}
	if gaps[len(gaps)-1] != gengate.MaxPollInterval {
		t.Errorf("last gap %v, want the cap", gaps[len(gaps)-1])
	}
}

// TestSlowStepKeepsItsLease: a step that outlasts the task lease (a slow
// synchronous upstream) keeps renewing it, so no other worker takes the
// task over and submits it a second time. This test runs on the real clock:
// the lease is what it tests.
func TestSlowStepKeepsItsLease(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		release := make(chan struct{})
		started := make(chan struct{})
		fal := &upstream{submit: func(job gengate.Job) (gengate.Progress, error) {
			close(started)
			<-release
			return gengate.Progress{Outputs: pngOutputs(1)}, nil
		}}
		d := newDomainWith(t, dialect, fal)
		d.svc.Now = nil // real time
		d.svc.Lease = 300 * time.Millisecond
		task := d.generate("slow", "")
		done := make(chan error, 1)
		go func() { _, err := d.svc.RunNext(context.Background()); done <- err }()
		<-started
		// Wait out three leases, then try to take the task as another worker.
		<-time.After(3 * d.svc.Lease)
		other, err := d.store.ClaimTask(context.Background(), task.ID, "other", time.Now(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if other != nil {
			t.Fatalf("another worker took the task while its step ran (status %s)", other.Status)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := d.task(task.ID); got.Status != gengate.StatusSucceeded {
			t.Fatalf("status %s", got.Status)
		}
		if s, _ := fal.calls(); s != 1 {
			t.Fatalf("submitted %d times", s)
		}
	})
}

// TestShutdownHandsBack: a step whose context a shutting-down worker
// cancels hands its task back, due at once and unleased, without counting
// a failure; polling is simply asked again by the next worker.
func TestShutdownHandsBack(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx, cancel := context.WithCancel(context.Background())
		fal := &upstream{
			submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "r-1"}, nil },
			check: func(gengate.Job, string) (gengate.Progress, error) {
				cancel() // the worker's grace period ends during the poll
				return gengate.Progress{}, busy(0)
			},
		}
		d := newDomainWith(t, dialect, fal)
		task := d.generate("bye", "")
		d.runNext() // submitted
		d.clock.Add(time.Second)
		if did, err := d.svc.RunNext(ctx); !did || err != nil {
			t.Fatalf("RunNext: %v %v", did, err)
		}
		got := d.task(task.ID)
		if got.Status != gengate.StatusRunning || got.UpstreamID != "r-1" || got.LeaseToken != "" || got.RunAt.After(d.clock.Now()) {
			t.Fatalf("after hand-back: %s id %q lease %q due in %v", got.Status, got.UpstreamID, got.LeaseToken, got.RunAt.Sub(d.clock.Now()))
		}
		fal.mu.Lock()
		fal.check = nil
		fal.mu.Unlock()
		if !d.runNext() {
			t.Fatal("the handed-back task was not due at once")
		}
		d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
		if s, _ := fal.calls(); s != 1 {
			t.Errorf("submitted %d times", s)
		}
	})
}
