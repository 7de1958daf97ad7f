package gengate

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// leaseStore is a Store whose ExtendLease waits for release, counting its
// calls; nothing else of the Store is used.
type leaseStore struct {
	Store
	entered  chan struct{}
	release  chan struct{}
	calls    atomic.Int64
	returned atomic.Bool
}

func (l *leaseStore) ExtendLease(ctx context.Context, id, token string, until time.Time) error {
	if l.calls.Add(1) == 1 {
		close(l.entered)
	}
	<-l.release
	l.returned.Store(true)
	return nil
}

// TestHoldLeaseStopWaitsForRenewal: holdLease renews the lease from a
// timer, and its stop function returns only once a renewal under way has
// returned, so that no renewal outlives the step. (That renewals keep a
// slow step's lease: TestSlowStepKeepsItsLease.)
func TestHoldLeaseStopWaitsForRenewal(t *testing.T) {
	st := &leaseStore{entered: make(chan struct{}), release: make(chan struct{})}
	s := &Service{Store: st, Lease: 30 * time.Millisecond}
	stop := s.holdLease(context.Background(), &Task{ID: "t1", LeaseToken: "tok"})
	<-st.entered // a renewal is under way
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	close(st.release)
	<-stopped
	if !st.returned.Load() {
		t.Fatal("stop returned before the renewal under way did")
	}
}
