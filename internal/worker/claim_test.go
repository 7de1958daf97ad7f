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
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
	"github.com/gengate/gengate/internal/worker"
)

// countingStore is the real store, with the claims and due-time reads the
// workers make counted.
type countingStore struct {
	gengate.Store
	claims, empty, nextDue atomic.Int64
}

func (c *countingStore) ClaimTask(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (*gengate.Task, error) {
	t, err := c.Store.ClaimTask(ctx, id, owner, now, lease)
	if id == "" {
		c.claims.Add(1)
		if t == nil {
			c.empty.Add(1)
		}
	}
	return t, err
}

func (c *countingStore) ClaimTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*gengate.Task, error) {
	ts, err := c.Store.ClaimTasks(ctx, owner, now, lease, limit)
	c.claims.Add(1)
	if len(ts) == 0 {
		c.empty.Add(1)
	}
	return ts, err
}

func (c *countingStore) NextDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	c.nextDue.Add(1)
	return c.Store.NextDue(ctx, now)
}

// TestClaimsWithoutStorm runs the real workers (4 step slots) on a real
// store with the sandbox engine while tasks are submitted one after the
// other: a claim that finds nothing is rare while they are processed (an
// accepted task wakes one claimer, not every slot), and once they are done
// the idle workers look for work by reads only, never by a claim on the
// writer's connection.
func TestClaimsWithoutStorm(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := sqltest.Open(t, d)
			store := &countingStore{Store: db}
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
				Engines: map[string]gengate.Engine{"sandbox": sandbox.New(0)}, Fetcher: fetch.New(fetch.Config{}),
				Log: slog.New(slog.DiscardHandler), Owner: "w", Lease: 10 * time.Second}
			acct := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: time.Now()}
			if err := db.CreateAccount(ctx, acct, 100000); err != nil {
				t.Fatal(err)
			}
			_, key := gengate.NewAPIKey(acct.ID, "k", time.Now())
			if err := db.CreateAPIKey(ctx, key); err != nil {
				t.Fatal(err)
			}

			wctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				worker.Run(wctx, svc, events, worker.Config{Concurrency: 4, PollInterval: 20 * time.Millisecond}, svc.Log)
			}()
			defer func() { cancel(); <-done }()

			const n = 60
			for i := range n {
				body := fmt.Sprintf(`{"type":"image","modelId":"flux","prompt":"fox %d"}`, i)
				if _, err := svc.Generate(ctx, key, []byte(body), ""); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(2 * time.Minute)
			for {
				counts, err := db.CountTasks(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if counts[gengate.StatusSucceeded] == n {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("tasks not done after 2 minutes: %v", counts)
				}
				<-time.After(10 * time.Millisecond)
			}
			claims, empty := store.claims.Load(), store.empty.Load()
			t.Logf("while %d tasks were processed: %d claims, %d of them empty, %d due-time reads", n, claims, empty, store.nextDue.Load())
			if empty > n/3 {
				t.Errorf("%d of %d claims found nothing while %d tasks were processed: workers woken for nothing", empty, claims, n)
			}
			// Idle: wait until the workers have looked for work ten more
			// times (by a read or by a claim), then count the claims.
			looks := func() int64 { return store.claims.Load() + store.nextDue.Load() }
			before := looks()
			for looks() < before+10 {
				if time.Now().After(deadline) {
					t.Fatalf("idle workers did not look for work in 2 minutes")
				}
				<-time.After(10 * time.Millisecond)
			}
			if idle := store.claims.Load() - claims; idle > 0 {
				t.Errorf("idle workers made %d claims (writes) in %d looks for work; want reads only", idle, looks()-before)
			}
		})
	}
}
