package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
	"github.com/gengate/gengate/internal/worker"
)

// claimCounting is the real store (with its StepClaimer and StepKeeper
// abilities) with the tasks the workers' claims return counted.
type claimCounting struct {
	*sqlstore.DB
	claimed atomic.Int64
}

func (c *claimCounting) ClaimSteps(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*gengate.Task, error) {
	ts, err := c.DB.ClaimSteps(ctx, owner, now, lease, limit)
	c.claimed.Add(int64(len(ts)))
	return ts, err
}

type holdRig struct {
	db     *sqlstore.DB
	store  *claimCounting
	svc    *gengate.Service
	key    *gengate.APIKey
	acct   *gengate.Account
	events *gengate.Events
}

func newHoldRig(t *testing.T, dialect string, delay, lease time.Duration) *holdRig {
	ctx := context.Background()
	db := sqltest.Open(t, dialect)
	store := &claimCounting{DB: db}
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	events := gengate.NewEvents()
	svc := &gengate.Service{Store: store, Catalog: catalog, Blobs: blobs, Events: events,
		Engines: map[string]gengate.Engine{"sandbox": sandbox.New(delay)}, Fetcher: fetch.New(fetch.Config{}),
		Log: slog.New(slog.DiscardHandler), Owner: "w", Lease: lease}
	acct := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: time.Now()}
	if err := db.CreateAccount(ctx, acct, 100000); err != nil {
		t.Fatal(err)
	}
	_, key := gengate.NewAPIKey(acct.ID, "k", time.Now())
	if err := db.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	return &holdRig{db: db, store: store, svc: svc, key: key, acct: acct, events: events}
}

// run starts the workers; the returned function stops them and waits.
func (r *holdRig) run(workers, hold int) (stop func()) {
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.Run(wctx, r.svc, r.events, worker.Config{Concurrency: workers, Hold: hold, PollInterval: 20 * time.Millisecond}, r.svc.Log)
	}()
	return func() { cancel(); <-done }
}

func (r *holdRig) submit(t *testing.T, n int) []string {
	var ids []string
	for i := range n {
		body := fmt.Sprintf(`{"type":"image","modelId":"flux","prompt":"fox %d"}`, i)
		o, err := r.svc.Generate(context.Background(), r.key, []byte(body), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.Task.ID)
	}
	return ids
}

// waitFor polls the store until cond holds (at most 2 minutes).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after 2 minutes: %s", what)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// TestPollWithoutClaim: a task whose submit left work upstream is polled
// by the worker that submitted it, without a second claim, while that
// worker holds fewer tasks than its bound (Config.Hold); beyond it a task
// is released and claimed again as before, and every task still ends.
func TestPollWithoutClaim(t *testing.T) {
	const n = 20
	for _, d := range sqltest.Dialects {
		for _, tc := range []struct {
			hold       int
			wantClaims int // 0: more than n allowed
		}{{hold: 0, wantClaims: n}, {hold: 2}} {
			t.Run(fmt.Sprintf("%s/hold=%d", d, tc.hold), func(t *testing.T) {
				r := newHoldRig(t, d, 300*time.Millisecond, 10*time.Second)
				stop := r.run(8, tc.hold)
				defer stop()
				r.submit(t, n)
				waitFor(t, "every task succeeded", func() bool {
					counts, err := r.db.CountTasks(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					return counts[gengate.StatusSucceeded] == n
				})
				claims := r.store.claimed.Load()
				t.Logf("%d tasks, %d claimed (submit and poll steps)", n, claims)
				if tc.wantClaims > 0 && claims != int64(tc.wantClaims) {
					t.Errorf("%d tasks claimed %d times; want %d (the poll steps run without a claim)", n, claims, tc.wantClaims)
				}
			})
		}
	}
}

// TestHeldTaskCancelAndShutdown: a task held by its worker for its next
// poll is canceled at once by a cancel (not refused as busy), and the
// tasks a worker holds when it shuts down are released, not left to
// their leases.
func TestHeldTaskCancelAndShutdown(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			// Work upstream for 2 minutes, a 10-minute lease: held.
			r := newHoldRig(t, d, 2*time.Minute, 10*time.Minute)
			stop := r.run(4, 0)
			ids := r.submit(t, 3)
			held := func(id string) bool {
				tk, err := r.db.FindTask(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return tk.Status == gengate.StatusRunning && tk.LeaseToken != ""
			}
			waitFor(t, "tasks held for their poll", func() bool { return held(ids[0]) && held(ids[1]) && held(ids[2]) })

			start := time.Now()
			o, err := r.svc.Cancel(ctx, r.acct.ID, ids[0])
			if err != nil {
				t.Fatalf("cancel of a held task: %v (after %s)", err, time.Since(start).Round(time.Millisecond))
			}
			if o.Task.Status != gengate.StatusCanceled {
				t.Fatalf("canceled task is %s", o.Task.Status)
			}

			stop()
			for _, id := range ids[1:] {
				tk, err := r.db.FindTask(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if tk.Status != gengate.StatusRunning || tk.LeaseToken != "" {
					t.Errorf("after shutdown task %s is %s leased to %q; want running, released", id, tk.Status, tk.LeaseToken)
				}
			}
		})
	}
}
