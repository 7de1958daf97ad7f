package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// flakyStore is the real store with faults after a task's transaction:
// reads of tasks and accounts fail once a task is created (failReads), or
// CreateTask commits and then reports an error (failAfterCommit), as a
// database losing its connection would.
type flakyStore struct {
	gengate.Store
	failReads       bool
	failAfterCommit bool
	created         atomic.Bool
}

var errDatabase = errors.New("database: connection lost")

func (f *flakyStore) CreateTask(ctx context.Context, t *gengate.Task) (gengate.CreateResult, error) {
	res, err := f.Store.CreateTask(ctx, t)
	if err == nil {
		f.created.Store(true)
		if f.failAfterCommit {
			return gengate.CreateResult{}, errDatabase
		}
	}
	return res, err
}

func (f *flakyStore) FindTask(ctx context.Context, id string) (*gengate.Task, error) {
	if f.failReads && f.created.Load() {
		return nil, errDatabase
	}
	return f.Store.FindTask(ctx, id)
}

func (f *flakyStore) FindAccount(ctx context.Context, id string) (*gengate.Account, error) {
	if f.failReads && f.created.Load() {
		return nil, errDatabase
	}
	return f.Store.FindAccount(ctx, id)
}

// TestNoErrorForCommittedWork: once a task's transaction has committed, a
// database failure answers the task (202 with its statusUrl), never 500:
// the client must not submit again work it was charged for.
func TestNoErrorForCommittedWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		store func(gengate.Store) *flakyStore
	}{
		{"reads fail after the commit", func(s gengate.Store) *flakyStore { return &flakyStore{Store: s, failReads: true} }},
		{"the commit reports an error", func(s gengate.Store) *flakyStore { return &flakyStore{Store: s, failAfterCommit: true} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, stackOpts{noWorkers: true, syncWait: time.Second})
			acct, key := s.account(100)
			s.svc.Store = tc.store(s.store)
			r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a fox"}, nil)
			id := wantAccepted(t, r)
			if r.str("statusUrl") != jobPath(id) || r.Header.Get("Location") != jobPath(id) {
				t.Errorf("202 without its statusUrl: %s", r.Body)
			}
			task, err := s.store.FindTask(context.Background(), id)
			if err != nil || task.Status != gengate.StatusQueued {
				t.Fatalf("the answered task is %v (%v), want it stored, queued", task, err)
			}
			if got := s.balance(acct); got != 100-task.Cost {
				t.Errorf("balance %d, want %d: charged once", got, 100-task.Cost)
			}
			if r.Status == http.StatusInternalServerError {
				t.Error("500 for committed work")
			}
		})
	}
}
