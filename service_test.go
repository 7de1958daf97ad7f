package gengate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// upstream is a fake paid upstream provider: an Engine whose Submit and
// Check do what the test says and count their calls. It is not repeatable,
// as paid upstream calls are not. It registers as "fal", one of flux's
// routes, so that new flux tasks go to it.
type upstream struct {
	name       string // "fal" when empty
	repeatable bool
	validate   func(job gengate.Job) error
	cancels    []string
	mu         sync.Mutex
	submits    int
	checks     int
	submit     func(job gengate.Job) (gengate.Progress, error)
	check      func(job gengate.Job, id string) (gengate.Progress, error)
}

var _ gengate.Engine = (*upstream)(nil)

func (u *upstream) Name() string {
	if u.name == "" {
		return "fal"
	}
	return u.name
}

func (u *upstream) Validate(job gengate.Job) error {
	if u.validate == nil {
		return nil
	}
	return u.validate(job)
}

func (u *upstream) Cancel(ctx context.Context, job gengate.Job, id string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cancels = append(u.cancels, id)
	return nil
}
func (u *upstream) Repeatable() bool { return u.repeatable }

func (u *upstream) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	u.mu.Lock()
	u.submits++
	f := u.submit
	u.mu.Unlock()
	if f == nil {
		return gengate.Progress{Outputs: pngOutputs(job.NumOutputs)}, nil
	}
	return f(job)
}

func (u *upstream) Check(ctx context.Context, job gengate.Job, id string) (gengate.Progress, error) {
	u.mu.Lock()
	u.checks++
	f := u.check
	u.mu.Unlock()
	if f == nil {
		return gengate.Progress{Outputs: pngOutputs(job.NumOutputs)}, nil
	}
	return f(job, id)
}

func (u *upstream) calls() (submits, checks int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.submits, u.checks
}

func pngOutputs(n int) []gengate.Output {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4)))
	outs := make([]gengate.Output, max(n, 1))
	for i := range outs {
		outs[i] = gengate.Output{Data: b.Bytes(), ContentType: "image/png", Ext: "png"}
	}
	return outs
}

// testClock is the service's injected clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// domain is a Service on a real store, with the fake upstream.
type domain struct {
	t     *testing.T
	svc   *gengate.Service
	store *sqlstore.DB
	clock *testClock
	up    *upstream
	files string // the blob directory
	acct  string
	key   *gengate.APIKey
}

const testLease = 10 * time.Second

func newDomain(t *testing.T, dialect string, up *upstream) *domain {
	t.Helper()
	if up == nil {
		return newDomainWith(t, dialect)
	}
	return newDomainWith(t, dialect, up)
}

// newDomainWith builds a domain whose engines are the sandbox and ups (by
// their names); the first of ups is d.up.
func newDomainWith(t *testing.T, dialect string, ups ...*upstream) *domain {
	t.Helper()
	var up *upstream
	if len(ups) > 0 {
		up = ups[0]
	}
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
	engines := map[string]gengate.Engine{"sandbox": sandbox.New(0)}
	for _, u := range ups {
		engines[u.Name()] = u
	}
	svc := &gengate.Service{
		Store: store, Catalog: catalog, Engines: engines, Blobs: blobs,
		Fetcher: fetch.New(fetch.Config{}), Events: gengate.NewEvents(), Log: slog.New(slog.DiscardHandler),
		Now: clock.Now, SyncWait: time.Second, ReviewTerms: []string{"hold me"},
		Owner: "test", Lease: testLease, MaxAttempts: 4,
	}
	d := &domain{t: t, svc: svc, store: store, clock: clock, up: up, files: files}
	d.acct, d.key = d.account(100)
	return d
}

func (d *domain) account(credits int) (string, *gengate.APIKey) {
	d.t.Helper()
	ctx := context.Background()
	a := &gengate.Account{ID: gengate.NewID(), Name: "t", CreatedAt: d.clock.Now()}
	if err := d.store.CreateAccount(ctx, a, credits); err != nil {
		d.t.Fatal(err)
	}
	secret, k := gengate.NewAPIKey(a.ID, "t", d.clock.Now())
	if err := d.store.CreateAPIKey(ctx, k); err != nil {
		d.t.Fatal(err)
	}
	key, err := d.svc.Authenticate(ctx, secret)
	if err != nil {
		d.t.Fatal(err)
	}
	return a.ID, key
}

// generate creates a flux task (4 credits) and returns it.
func (d *domain) generate(prompt, idemKey string) *gengate.Task {
	d.t.Helper()
	o, err := d.svc.Generate(context.Background(), d.key,
		[]byte(`{"type":"image","modelId":"flux","prompt":"`+prompt+`"}`), idemKey)
	if err != nil {
		d.t.Fatal(err)
	}
	return o.Task
}

func (d *domain) task(id string) *gengate.Task {
	d.t.Helper()
	t, err := d.store.FindTask(context.Background(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return t
}

func (d *domain) balance() int {
	d.t.Helper()
	a, err := d.store.FindAccount(context.Background(), d.acct)
	if err != nil {
		d.t.Fatal(err)
	}
	return a.Balance
}

// runNext runs one step and reports whether there was a due task.
func (d *domain) runNext() bool {
	d.t.Helper()
	did, err := d.svc.RunNext(context.Background())
	if err != nil {
		d.t.Fatalf("RunNext: %v", err)
	}
	return did
}

// ledger returns the charges and refunds of each task, checking that the
// entries sum to the balance.
func (d *domain) ledger() (charges, refunds map[string]int) {
	d.t.Helper()
	entries, err := d.store.Ledger(context.Background(), d.acct)
	if err != nil {
		d.t.Fatal(err)
	}
	charges, refunds = map[string]int{}, map[string]int{}
	sum := 0
	for _, e := range entries {
		sum += e.Amount
		switch e.Kind {
		case gengate.LedgerCharge:
			charges[e.TaskID]++
		case gengate.LedgerRefund:
			refunds[e.TaskID]++
		}
	}
	if b := d.balance(); sum != b {
		d.t.Errorf("ledger sums to %d, balance is %d", sum, b)
	}
	return charges, refunds
}

// wantState checks a task's status, review reason, the balance and the
// task's charges and refunds.
func (d *domain) wantState(id string, status gengate.Status, reason string, balance, refunds int) *gengate.Task {
	d.t.Helper()
	t := d.task(id)
	if t.Status != status || t.ReviewReason != reason {
		d.t.Errorf("task is %s (reason %q), want %s (reason %q)", t.Status, t.ReviewReason, status, reason)
	}
	if b := d.balance(); b != balance {
		d.t.Errorf("balance %d, want %d", b, balance)
	}
	c, r := d.ledger()
	if c[id] != 1 || r[id] != refunds {
		d.t.Errorf("task charged %d and refunded %d times, want 1 and %d", c[id], r[id], refunds)
	}
	return t
}

func forDialects(t *testing.T, f func(t *testing.T, dialect string)) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) { f(t, d) })
	}
}

// TestStepSubmittingNotRepeatable: a task a crash left in submitting with a
// non-repeatable engine is never submitted again; it goes to review with
// its credits held.
func TestStepSubmittingNotRepeatable(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		task := d.generate("a cat", "")
		if task.Engine != "fal" {
			t.Fatalf("task engine %q, want fal", task.Engine)
		}
		// A worker claims it, checkpoints submitting, and dies.
		claimed, err := d.store.ClaimTask(ctx, task.ID, "dead-worker", d.clock.Now(), testLease)
		if err != nil || claimed == nil {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		claimed.Status = gengate.StatusSubmitting
		if err := d.store.SaveStep(ctx, claimed, false); err != nil {
			t.Fatal(err)
		}
		if d.runNext() {
			t.Fatal("a task under a live lease was claimed")
		}
		d.clock.Add(testLease + time.Second)
		if !d.runNext() {
			t.Fatal("the task with an expired lease was not claimed")
		}
		if s, _ := d.up.calls(); s != 0 {
			t.Errorf("Submit called %d times; a non-repeatable submission must not be repeated", s)
		}
		d.wantState(task.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0)
		if d.runNext() {
			t.Error("a task in review was claimed")
		}
		o, err := d.svc.Advance(ctx, d.acct, task.ID)
		if err != nil || o.Task.Status != gengate.StatusNeedsReview {
			t.Errorf("Advance: %v %v", o, err)
		}
		// The dead worker's late write is refused.
		claimed.Status = gengate.StatusRunning
		claimed.UpstreamID = "late"
		if err := d.store.SaveStep(ctx, claimed, true); gengate.ErrorCode(err) != gengate.EConflict {
			t.Errorf("stale SaveStep: %v, want CONFLICT", err)
		}
		d.wantState(task.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0)
	})
}

// TestStepSubmittingRepeatable is the contrast: a repeatable engine (the
// sandbox) is simply submitted again.
func TestStepSubmittingRepeatable(t *testing.T) {
	ctx := context.Background()
	d := newDomain(t, "sqlite", nil)
	task := d.generate("a cat", "")
	claimed, err := d.store.ClaimTask(ctx, task.ID, "dead-worker", d.clock.Now(), testLease)
	if err != nil || claimed == nil {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	claimed.Status = gengate.StatusSubmitting
	if err := d.store.SaveStep(ctx, claimed, false); err != nil {
		t.Fatal(err)
	}
	d.clock.Add(testLease + time.Second)
	if !d.runNext() {
		t.Fatal("not claimed")
	}
	got := d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
	if len(got.Outputs) != 1 {
		t.Errorf("%d outputs, want 1", len(got.Outputs))
	}
}

// TestDefiniteFailureRefundsOnce: GENERATION_FAILED from Submit or Check
// fails the task and refunds it exactly once, however many callers race.
func TestDefiniteFailureRefundsOnce(t *testing.T) {
	no := func(gengate.Job) (gengate.Progress, error) {
		return gengate.Progress{}, &gengate.Error{Code: gengate.EFailed, Message: "the upstream refused the prompt"}
	}
	for _, tc := range []struct {
		name       string
		up         func() *upstream
		inputFault bool
	}{
		{"submit fails", func() *upstream { return &upstream{submit: no} }, false},
		{"check fails", func() *upstream {
			return &upstream{
				submit: func(gengate.Job) (gengate.Progress, error) { return gengate.Progress{UpstreamID: "up-1"}, nil },
				check: func(gengate.Job, string) (gengate.Progress, error) {
					return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "the upstream job failed")
				}}
		}, false},
		{"input at fault", func() *upstream {
			return &upstream{submit: func(gengate.Job) (gengate.Progress, error) {
				return gengate.Progress{}, gengate.Errorf(gengate.EInvalid, "the upstream cannot read the input")
			}}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forDialects(t, func(t *testing.T, dialect string) {
				ctx := context.Background()
				up := tc.up()
				d := newDomain(t, dialect, up)
				task := d.generate("a dog", "")
				// Ten workers race for the task at once, step after
				// step.
				for step := 0; step < 2; step++ {
					var wg sync.WaitGroup
					errs := make(chan error, 10)
					for range 10 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							if _, err := d.svc.RunNext(ctx); err != nil {
								errs <- err
							}
						}()
					}
					wg.Wait()
					close(errs)
					for err := range errs {
						t.Errorf("Advance: %v", err)
					}
					d.clock.Add(time.Second)
				}
				got := d.wantState(task.ID, gengate.StatusFailed, "", 100, 1)
				if got.ErrorCode != gengate.EFailed || got.ErrorMessage == "" || got.CompletedAt.IsZero() || got.InputFault != tc.inputFault {
					t.Errorf("failed task: code %q message %q completed %v inputFault %v", got.ErrorCode, got.ErrorMessage, got.CompletedAt, got.InputFault)
				}
				if s, _ := up.calls(); s != 1 {
					t.Errorf("Submit called %d times, want 1", s)
				}
				// Nothing refunds it again.
				if _, err := d.svc.Settle(ctx, task.ID, true); gengate.ErrorCode(err) != gengate.EConflict {
					t.Errorf("Settle of a failed task: %v, want CONFLICT", err)
				}
				if d.runNext() {
					t.Error("a failed task was claimed")
				}
				d.wantState(task.ID, gengate.StatusFailed, "", 100, 1)
			})
		})
	}
}

// TestAmbiguousSubmit: an ambiguous error from a non-repeatable Submit
// sends the task to review with its credits held; from a repeatable engine
// the task is simply queued again with backoff.
func TestAmbiguousSubmit(t *testing.T) {
	reset := func(gengate.Job) (gengate.Progress, error) {
		return gengate.Progress{}, errors.New("read tcp: connection reset by peer")
	}
	forDialects(t, func(t *testing.T, dialect string) {
		d := newDomain(t, dialect, &upstream{submit: reset})
		task := d.generate("a bird", "")
		d.runNext()
		d.wantState(task.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0)
		if s, _ := d.up.calls(); s != 1 {
			t.Errorf("Submit called %d times, want 1", s)
		}
	})
	t.Run("repeatable", func(t *testing.T) {
		up := &upstream{repeatable: true, submit: reset}
		d := newDomain(t, "sqlite", up)
		task := d.generate("a bird", "")
		start := d.clock.Now()
		d.runNext()
		got := d.wantState(task.ID, gengate.StatusQueued, "", 96, 0)
		if !got.RunAt.After(start) {
			t.Errorf("retry due at %v, not after %v", got.RunAt, start)
		}
		if d.runNext() {
			t.Error("retried before its backoff")
		}
		up.mu.Lock()
		up.submit = nil
		up.mu.Unlock()
		d.clock.Add(got.RunAt.Sub(start))
		if !d.runNext() {
			t.Fatal("not retried after its backoff")
		}
		d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
	})
}

// TestAmbiguousCheckRetries: ambiguous Check errors are retried with a
// growing backoff; after MaxAttempts the task goes to review, never
// submitted twice and never refunded. An operator's deliver then resumes
// polling the same upstream id.
func TestAmbiguousCheckRetries(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		var checkedID string
		up := &upstream{
			submit: func(gengate.Job) (gengate.Progress, error) {
				return gengate.Progress{UpstreamID: "up-42", RetryAfter: time.Second}, nil
			},
			check: func(_ gengate.Job, id string) (gengate.Progress, error) {
				checkedID = id
				return gengate.Progress{}, errors.New("context deadline exceeded")
			},
		}
		d := newDomain(t, dialect, up)
		task := d.generate("a fish", "")
		if !d.runNext() {
			t.Fatal("not claimed")
		}
		running := d.wantState(task.ID, gengate.StatusRunning, "", 96, 0)
		if running.UpstreamID != "up-42" {
			t.Fatalf("upstream id %q", running.UpstreamID)
		}
		var delays []time.Duration
		for {
			tk := d.task(task.ID)
			if tk.Status != gengate.StatusRunning {
				break
			}
			wait := tk.RunAt.Sub(d.clock.Now())
			if wait > time.Millisecond {
				d.clock.Add(wait - time.Millisecond)
				if d.runNext() {
					t.Fatalf("stepped %s before it was due", time.Millisecond)
				}
				d.clock.Add(time.Millisecond)
			}
			if !d.runNext() {
				t.Fatal("due task not claimed")
			}
			if tk := d.task(task.ID); tk.Status == gengate.StatusRunning {
				delays = append(delays, tk.RunAt.Sub(d.clock.Now()))
			}
			if len(delays) > 20 {
				t.Fatal("never gave up")
			}
		}
		if checkedID != "up-42" {
			t.Errorf("Check got upstream id %q", checkedID)
		}
		submits, checks := up.calls()
		// MaxAttempts bounds the failed steps: the checks, and the claim
		// that submitted if it is counted too.
		if submits != 1 || checks < d.svc.MaxAttempts-1 || checks > d.svc.MaxAttempts {
			t.Errorf("%d submits and %d checks, want 1 and %d or %d", submits, checks, d.svc.MaxAttempts-1, d.svc.MaxAttempts)
		}
		for i, dl := range delays {
			if dl < time.Second || (i > 0 && dl <= delays[i-1]) {
				t.Errorf("backoff delays %v do not grow from ≥1s", delays)
				break
			}
		}
		inReview := d.wantState(task.ID, gengate.StatusNeedsReview, gengate.ReviewCheckFailing, 96, 0)
		if inReview.UpstreamID != "up-42" {
			t.Errorf("review lost the upstream id: %q", inReview.UpstreamID)
		}

		// Deliver: resume polling the same upstream work; no new submit.
		up.mu.Lock()
		up.check = nil
		up.mu.Unlock()
		settled, err := d.svc.Settle(ctx, task.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		if settled.Status != gengate.StatusRunning {
			t.Errorf("delivered task is %s, want running", settled.Status)
		}
		if !d.runNext() {
			t.Fatal("delivered task not claimed")
		}
		done := d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
		if len(done.Outputs) != 1 {
			t.Errorf("%d outputs", len(done.Outputs))
		}
		if s, _ := up.calls(); s != 1 {
			t.Errorf("Submit called %d times after deliver, want 1", s)
		}
	})
}

// TestSettle: an operator refunds or delivers a task in review; neither
// can happen twice, and only tasks in review can be settled.
func TestSettle(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		refund := d.generate("please hold me", "")
		deliver := d.generate("HOLD ME too", "")
		d.wantState(refund.ID, gengate.StatusNeedsReview, gengate.ReviewTerms, 92, 0)
		if d.runNext() {
			t.Fatal("a task held for review was run")
		}
		if s, _ := d.up.calls(); s != 0 {
			t.Fatalf("the engine ran for a held task")
		}

		got, err := d.svc.Settle(ctx, refund.ID, true)
		if err != nil || got.Status != gengate.StatusFailed {
			t.Fatalf("Settle refund: %v %v", got, err)
		}
		// The review reason stays on the failed record as its history.
		d.wantState(refund.ID, gengate.StatusFailed, gengate.ReviewTerms, 96, 1)
		for _, r := range []bool{true, false} {
			if _, err := d.svc.Settle(ctx, refund.ID, r); gengate.ErrorCode(err) != gengate.EConflict {
				t.Errorf("second Settle(refund=%v): %v, want CONFLICT", r, err)
			}
		}
		d.wantState(refund.ID, gengate.StatusFailed, gengate.ReviewTerms, 96, 1)

		got, err = d.svc.Settle(ctx, deliver.ID, false)
		if err != nil || got.Status != gengate.StatusQueued {
			t.Fatalf("Settle deliver: %v %v", got, err)
		}
		if _, err := d.svc.Settle(ctx, deliver.ID, true); gengate.ErrorCode(err) != gengate.EConflict {
			t.Errorf("refund after deliver: %v, want CONFLICT", err)
		}
		if !d.runNext() {
			t.Fatal("delivered task not run")
		}
		done := d.wantState(deliver.ID, gengate.StatusSucceeded, "", 96, 0)
		if len(done.Outputs) != 1 {
			t.Fatalf("%d outputs", len(done.Outputs))
		}
		data, err := d.svc.Blobs.Get(ctx, done.Outputs[0].Key)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("output blob: %v", err)
		}
		if _, err := d.svc.Settle(ctx, deliver.ID, true); gengate.ErrorCode(err) != gengate.EConflict {
			t.Errorf("Settle of a succeeded task: %v, want CONFLICT", err)
		}
		if _, err := d.svc.Settle(ctx, gengate.NewID(), true); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Errorf("Settle of an unknown task: %v, want NOT_FOUND", err)
		}
	})
}

// TestPurge: task records go once Retention has passed since they
// completed, and their idempotency keys may be used again; creations stay;
// unfinished tasks are never purged.
func TestPurge(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, &upstream{})
		d.svc.Retention = 0 // the default: 90 days
		done := d.generate("old", "key-1")
		if !d.runNext() {
			t.Fatal("not run")
		}
		finished := d.wantState(done.ID, gengate.StatusSucceeded, "", 96, 0)
		held := d.generate("hold me", "key-2")

		d.clock.Add(gengate.DefaultRetention - time.Second)
		if n, err := d.svc.Purge(ctx); err != nil || n != 0 {
			t.Fatalf("Purge before retention: %d, %v", n, err)
		}
		if _, err := d.svc.Generate(ctx, d.key, []byte(`{"type":"image","modelId":"flux","prompt":"new"}`), "key-1"); gengate.ErrorCode(err) != gengate.EKeyReused {
			t.Errorf("key reused within retention: %v, want %s", err, gengate.EKeyReused)
		}
		d.clock.Add(2 * time.Second)
		if n, err := d.svc.Purge(ctx); err != nil || n != 1 {
			t.Fatalf("Purge after retention: %d, %v; want 1", n, err)
		}
		if _, err := d.store.FindTask(ctx, done.ID); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Errorf("purged task: %v, want NOT_FOUND", err)
		}
		if _, err := d.store.FindTask(ctx, held.ID); err != nil {
			t.Errorf("task in review was purged: %v", err)
		}
		// The creation and its file stay.
		c, err := d.store.FindCreation(ctx, finished.Outputs[0].Token)
		if err != nil {
			t.Fatalf("creation after purge: %v", err)
		}
		if _, err := d.svc.Blobs.Get(ctx, c.Key); err != nil {
			t.Errorf("output file after purge: %v", err)
		}
		// The key is free again, with any body.
		o, err := d.svc.Generate(ctx, d.key, []byte(`{"type":"image","modelId":"flux","prompt":"new"}`), "key-1")
		if err != nil {
			t.Fatalf("key after purge: %v", err)
		}
		if o.Replayed || o.Task.ID == done.ID {
			t.Errorf("key after purge named the old task")
		}
		if b := d.balance(); b != 88 {
			t.Errorf("balance %d, want 88", b)
		}
		// The ledger outlives the record.
		charges, _ := d.ledger()
		if charges[done.ID] != 1 {
			t.Errorf("purged task's charge is gone from the ledger")
		}
	})
}

// TestPollsAreNotFailures: MaxAttempts bounds failed steps, not polls. A
// task polled many times without error and then meeting one ambiguous
// Check error is retried, not sent to review.
func TestPollsAreNotFailures(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		polls := 0
		up := &upstream{
			submit: func(gengate.Job) (gengate.Progress, error) {
				return gengate.Progress{UpstreamID: "up-7", RetryAfter: time.Second}, nil
			},
			check: func(gengate.Job, string) (gengate.Progress, error) {
				polls++
				if polls == 12 {
					return gengate.Progress{}, errors.New("read: connection reset by peer")
				}
				return gengate.Progress{UpstreamID: "up-7", RetryAfter: time.Second}, nil
			},
		}
		d := newDomain(t, dialect, up)
		task := d.generate("a slow video", "")
		for polls < 12 {
			if !d.runNext() {
				d.clock.Add(time.Second)
			}
		}
		got := d.wantState(task.ID, gengate.StatusRunning, "", 96, 0)
		if wait := got.RunAt.Sub(d.clock.Now()); wait > 2*time.Second {
			t.Errorf("first retry after %s; the backoff starts over for a first failure", wait)
		}
	})
}

// TestOutputStoreFailureNotResubmitted: when the outputs a non-repeatable
// upstream returned cannot be stored, the upstream is not asked again (it
// would charge again); the task goes to review instead.
func TestOutputStoreFailureNotResubmitted(t *testing.T) {
	up := &upstream{}
	d := newDomain(t, "sqlite", up)
	task := d.generate("x", "")
	// The output directory of the task (the last two characters of its
	// time-ordered id) cannot be created: a file is there.
	if err := os.MkdirAll(filepath.Join(d.files, "outputs"), 0o755); err != nil {
		t.Fatal(err)
	}
	block := filepath.Join(d.files, "outputs", task.ID[len(task.ID)-2:])
	if err := os.WriteFile(block, []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.runNext()
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d.clock.Add(time.Minute)
		d.runNext()
	}
	if s, _ := up.calls(); s != 1 {
		t.Errorf("Submit called %d times; a non-repeatable upstream must be asked once", s)
	}
	if got := d.task(task.ID); got.Status != gengate.StatusNeedsReview {
		t.Errorf("task is %s, want needs_review", got.Status)
	}
}

// TestSubmittingInputUnreadable: a task a crash left in submitting with a
// non-repeatable engine goes to review even when its input cannot be read
// at that moment; it is never queued for a second submission.
func TestSubmittingInputUnreadable(t *testing.T) {
	ctx := context.Background()
	up := &upstream{}
	d := newDomain(t, "sqlite", up)
	body := `{"type":"image","modelId":"flux-kontext-pro","prompt":"x","imageUrl":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(pngOutputs(1)[0].Data) + `"}`
	o, err := d.svc.Generate(ctx, d.key, []byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := d.store.ClaimTask(ctx, o.Task.ID, "dead-worker", d.clock.Now(), testLease)
	if err != nil || claimed == nil {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	claimed.Status = gengate.StatusSubmitting
	if err := d.store.SaveStep(ctx, claimed, false); err != nil {
		t.Fatal(err)
	}
	// The input file cannot be read for now: a directory is in its place.
	in := filepath.Join(d.files, "inputs", o.Task.ID, "imageUrl")
	if err := os.Rename(in, in+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	d.clock.Add(testLease + time.Second)
	d.runNext()
	if err := os.Remove(in); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(in+".away", in); err != nil {
		t.Fatal(err)
	}
	d.clock.Add(time.Minute)
	d.runNext()
	if s, _ := up.calls(); s != 0 {
		t.Errorf("Submit called %d times for a task whose first submission may have reached the upstream", s)
	}
	d.wantState(o.Task.ID, gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, 96, 0)
}

// TestSweepOrphanedInputs: Purge deletes input files no task needs (a
// request that crashed between storing its inputs and creating its task,
// or a finished task's leftovers) once they are an hour old, and keeps the
// inputs of tasks still active or in review.
func TestSweepOrphanedInputs(t *testing.T) {
	ctx := context.Background()
	d := newDomain(t, "sqlite", &upstream{})
	d.clock.Add(time.Since(d.clock.Now())) // the clock at the files' own time
	finished := d.generate("done", "")
	if !d.runNext() {
		t.Fatal("not run")
	}
	d.wantState(finished.ID, gengate.StatusSucceeded, "", 96, 0)
	held := d.generate("hold me", "")
	orphan := gengate.NewID()
	keys := map[string]bool{ // key → kept
		"inputs/" + orphan + "/imageUrl":      false,
		"inputs/" + finished.ID + "/imageUrl": false,
		"inputs/" + held.ID + "/imageUrl":     true,
	}
	for key := range keys {
		if err := d.svc.Blobs.Put(ctx, key, []byte("png"), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.svc.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	for key := range keys {
		if _, err := d.svc.Blobs.Get(ctx, key); err != nil {
			t.Fatalf("%s was deleted within its hour of grace: %v", key, err)
		}
	}
	d.clock.Add(61 * time.Minute)
	if _, err := d.svc.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	for key, kept := range keys {
		_, err := d.svc.Blobs.Get(ctx, key)
		if kept && err != nil {
			t.Errorf("%s was deleted: %v", key, err)
		}
		if !kept && gengate.ErrorCode(err) != gengate.ENotFound {
			t.Errorf("%s was kept (err %v)", key, err)
		}
	}
}

// TestCreationIDsTimeOrdered: a stored output's creation has a
// time-ordered id (a UUID of version 7 of the finish's time) and a URL
// token that starts with its time, so that its row goes to the end of the
// creations' key and token indexes.
func TestCreationIDsTimeOrdered(t *testing.T) {
	forDialects(t, func(t *testing.T, dialect string) {
		d := newDomain(t, dialect, nil)
		var ids, tokens []string
		for range 2 {
			task := d.generate("a cat", "")
			if !d.runNext() {
				t.Fatal("task not run")
			}
			done := d.wantState(task.ID, gengate.StatusSucceeded, "", d.balance(), 0)
			if len(done.Outputs) != 1 {
				t.Fatalf("%d outputs", len(done.Outputs))
			}
			id := done.Outputs[0].ID
			ms, err := strconv.ParseInt(strings.ReplaceAll(id[:13], "-", ""), 16, 64)
			if err != nil || id[14] != '7' || ms != d.clock.Now().UnixMilli() {
				t.Errorf("creation id %s: want a UUID of version 7 of the clock's %d ms", id, d.clock.Now().UnixMilli())
			}
			ids = append(ids, id)
			tokens = append(tokens, done.Outputs[0].Token)
			d.clock.Add(time.Millisecond)
		}
		if ids[0] >= ids[1] {
			t.Errorf("creation ids %v: want the later one after", ids)
		}
		for _, tok := range tokens {
			if len(tok) != 40 || strings.Trim(tok, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
				t.Errorf("file token %q: want 8 characters of its time and 32 random ones, base62", tok)
			}
		}
		if tokens[0] >= tokens[1] || tokens[0][8:] == tokens[1][8:] {
			t.Errorf("file tokens %v: want the later one after, their random parts different", tokens)
		}
	})
}
