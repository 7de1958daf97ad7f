package gengate

import (
	"context"
	"time"
)

// Reading tasks: a client finds, waits for or advances its task, and is
// told when to poll again.

// RetryAfter suggests when a client should poll an unfinished task again:
// when its next step is due, or else a third of the typical latency of its
// engine for the model, between 1 and 30 seconds.
func (s *Service) RetryAfter(t *Task) time.Duration {
	wait := 2 * time.Second
	if m, ok := s.Catalog.Model(t.ModelID); ok && m.LatencySeconds > 0 {
		wait = time.Duration(m.LatencySeconds) * time.Second / 3
	}
	if h, ok := s.Engines[t.Engine].(LatencyHinter); ok {
		wait = h.TypicalLatency(t.ModelID) / 3
	}
	if d := t.RunAt.Sub(s.now()); d > 0 {
		wait = d
	}
	return min(30*time.Second, max(time.Second, wait.Round(time.Second)))
}

// Find returns the account's task, or ENotFound (also for other accounts'
// tasks: their existence never leaks).
func (s *Service) Find(ctx context.Context, accountID, id string) (*Outcome, error) {
	t, err := s.Store.FindTask(ctx, id)
	if err == nil && t.AccountID != accountID {
		err = Errorf(ENotFound, "no task %s", id)
	}
	if err != nil {
		return nil, err
	}
	return s.outcome(ctx, t, false)
}

func (s *Service) outcome(ctx context.Context, t *Task, replayed bool) (*Outcome, error) {
	acct, err := s.Store.FindAccount(ctx, t.AccountID)
	if err != nil {
		return nil, err
	}
	return &Outcome{Task: t, Balance: acct.Balance, Replayed: replayed}, nil
}

// Wait waits up to d for the account's task to leave the active states and
// returns it as it then is. It is woken by Events, not by polling; a client
// that goes away ends the wait, not the task. It holds no goroutine or
// timer of its own: the caller's goroutine sleeps on its Waiter.
func (s *Service) Wait(ctx context.Context, accountID, id string, d time.Duration) (*Outcome, error) {
	w := s.Events.Wait(id, time.Now().Add(d))
	defer s.Events.Done(w)
	find := func() (o *Outcome, err error) {
		OnOwnStack(func() { o, err = s.Find(ctx, accountID, id) })
		return o, err
	}
	for {
		o, err := find()
		if err != nil || !o.Task.Status.Active() {
			return o, err
		}
		select {
		case <-w.C:
			if w.Expired() {
				return find()
			}
		case <-ctx.Done():
			return o, nil
		}
	}
}

// Advance is POST on a statusUrl: it wakes the task's worker and returns
// the task as it is. Steps run only in workers, never in the caller: a
// task whose next step is due later (a poll in backoff) is made due now
// and the workers are woken; one that is due or held by a worker is left
// to them. The caller then waits for the task (Wait) as a generate call
// would.
func (s *Service) Advance(ctx context.Context, accountID, id string) (*Outcome, error) {
	o, err := s.Find(ctx, accountID, id)
	if err != nil || !o.Task.Status.Active() {
		return o, err
	}
	if now := s.now(); o.Task.RunAt.After(now) {
		// Claim it only to move its time: a nudge is not an attempt.
		t, err := s.Store.ClaimTask(ctx, id, s.Owner, now, s.lease())
		if err != nil {
			return nil, err
		}
		if t != nil {
			t.Attempts = max(0, t.Attempts-1)
			t.RunAt = now
			if err := s.Store.SaveStep(ctx, t, true); err != nil {
				return nil, err
			}
		}
	}
	s.Events.Kick()
	return o, nil
}
