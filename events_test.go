package gengate

import (
	"testing"
	"time"
)

// TestEventsWaiters: a waiter wakes when its task is published, not for
// another task's; it wakes at its deadline and is then Expired; Done takes
// it out of the registry and its heap, and the shared timing goroutine
// ends once nobody waits.
func TestEventsWaiters(t *testing.T) {
	e := NewEvents()
	a := e.Wait("a", time.Now().Add(time.Hour))
	b := e.Wait("b", time.Now().Add(time.Hour))
	a2 := e.Wait("a", time.Now().Add(time.Hour))

	e.Publish("a")
	<-a.C
	<-a2.C
	select {
	case <-b.C:
		t.Fatal("b woke for a's change")
	default:
	}
	if a.Expired() {
		t.Error("a expired an hour early")
	}

	soon := e.Wait("c", time.Now().Add(time.Millisecond))
	<-soon.C // the shared goroutine wakes it at its deadline
	for !soon.Expired() {
		<-soon.C // a recheck never comes before the deadline, but be exact
	}

	for _, w := range []*Waiter{a, b, a2, soon} {
		e.Done(w)
	}
	e.mu.Lock()
	n, tasks := len(e.times), len(e.waiting)
	e.mu.Unlock()
	if n != 0 || tasks != 0 {
		t.Fatalf("after Done: %d waiters timed, %d tasks registered", n, tasks)
	}
	for {
		e.mu.Lock()
		timing := e.timing
		e.mu.Unlock()
		if !timing {
			break
		}
		time.Sleep(time.Millisecond) // waits for the condition, not a duration
	}
	e.Publish("a") // nobody waits: nothing to wake, nothing blocks
}

// TestEventsRecheckSpacing: the safety recheck of each waiter is spaced so
// that all waiters together recheck at most MaxRechecks times a second.
func TestEventsRecheckSpacing(t *testing.T) {
	for _, tc := range []struct {
		waiters int
		want    time.Duration
	}{
		{0, SafetyRecheck},
		{MaxRechecks, SafetyRecheck},
		{10 * MaxRechecks, 10 * time.Second},
		{100 * MaxRechecks, 100 * time.Second},
	} {
		e := NewEvents()
		e.times = make(waiterHeap, max(tc.waiters-1, 0)) // the others; the new one makes tc.waiters
		now := time.Now()
		got := e.nextWake(now, &Waiter{deadline: now.Add(time.Hour)}).Sub(now)
		if got != tc.want {
			t.Errorf("%d waiters: recheck after %s, want %s", tc.waiters, got, tc.want)
		}
		near := now.Add(time.Second)
		if got := e.nextWake(now, &Waiter{deadline: near}); !got.Equal(near) {
			t.Errorf("%d waiters: woken at %s, not at the deadline before the recheck", tc.waiters, got.Sub(now))
		}
	}
}

// TestOnOwnStack: f runs to its end before OnOwnStack returns, and its
// panic reaches the caller (where net/http recovers a handler's panic)
// instead of ending the process.
func TestOnOwnStack(t *testing.T) {
	n := 0
	OnOwnStack(func() { n = 42 })
	if n != 42 {
		t.Fatalf("f's result %d not seen by the caller", n)
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the panic of f", p)
		}
	}()
	OnOwnStack(func() { panic("boom") })
	t.Fatal("OnOwnStack returned after f panicked")
}
