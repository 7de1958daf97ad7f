package gengate

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Running task steps: the workers claim due tasks and run one step of
// each under a lease (submit, check, or give up past the deadline);
// outcome.go applies what the step's answer means.

// RunNext claims the next due task and runs one step of it. It reports
// whether there was one.
func (s *Service) RunNext(ctx context.Context) (bool, error) {
	t, err := s.Store.ClaimTask(ctx, "", s.Owner, s.now(), s.lease())
	if err != nil || t == nil {
		return false, err
	}
	return true, s.Step(ctx, t)
}

// ClaimDue claims up to limit due tasks for this process's workers, who
// then run one step of each with Step.
func (s *Service) ClaimDue(ctx context.Context, limit int) ([]*Task, error) {
	if c, ok := s.Store.(StepClaimer); ok {
		tasks, err := c.ClaimSteps(ctx, s.Owner, s.now(), s.lease(), limit)
		s.noteTakeovers(ctx, tasks)
		return tasks, err
	}
	return s.Store.ClaimTasks(ctx, s.Owner, s.now(), s.lease(), limit)
}

// NextDue returns how long until the next task step is due (zero or less:
// one is due now), or false when no active task waits. It only reads.
func (s *Service) NextDue(ctx context.Context) (time.Duration, bool, error) {
	now := s.now()
	at, ok, err := s.Store.NextDue(ctx, now)
	if err != nil || !ok {
		return 0, false, err
	}
	return at.Sub(now), true, nil
}

// Step runs one step of a task this process has claimed: submit it to its
// engine, check on upstream work, or, for a task a crash left in
// submitting, decide whether it may be submitted again.
func (s *Service) Step(ctx context.Context, t *Task) error {
	// ctx bounds the engine's work: a worker shutting down cancels it when
	// its grace period ends. The step's own records are written regardless.
	engCtx := ctx
	ctx = context.WithoutCancel(ctx)
	defer s.holdLease(ctx, t)()
	eng, ok := s.Engines[t.Engine]
	if !ok {
		// The engine is not configured in this process; try again later
		// rather than fail a paid task because of a configuration change.
		s.log().WarnContext(ctx, "engine not configured", "jobId", t.ID, "engine", t.Engine)
		t.RunAt = s.now().Add(time.Minute)
		return s.saveLast(ctx, t)
	}
	_, finds := eng.(Finder)
	if t.Status == StatusSubmitting && !resubmittable(eng) && !finds {
		return s.review(ctx, t, ReviewOutcomeUnknown,
			"the worker stopped while submitting; the upstream may or may not have started this generation")
	}
	if s.now().After(s.Deadline(t)) && (t.Status != StatusSubmitting || resubmittable(eng)) {
		return s.expire(ctx, t, eng)
	}
	job, err := s.job(ctx, t)
	if err != nil {
		if t.Status == StatusSubmitting && !resubmittable(eng) {
			return s.retryFind(ctx, t, err)
		}
		return s.retry(ctx, t, err)
	}
	if t.Status == StatusSubmitting && !resubmittable(eng) {
		// A submit whose outcome is unknown (a crash, or an answer that
		// did not say): look for its work, never submit again.
		return s.find(ctx, t, eng.(Finder), job)
	}
	switch t.Status {
	case StatusSubmitting, StatusQueued:
		// The checkpoint before the engine is called: a crash after it
		// leaves the task in submitting, which a non-repeatable engine
		// never sends again. Its claim may have written it already
		// (StepClaimer).
		checkpointed := t.Checkpointed && t.Status == StatusQueued
		t.Status, t.Checkpointed = StatusSubmitting, false
		if !checkpointed {
			if err := s.Store.SaveStep(ctx, t, false); err != nil {
				return err
			}
		}
		p, err := eng.Submit(engCtx, job)
		if err != nil && engCtx.Err() != nil && (resubmittable(eng) || notSent(err)) {
			t.Status = StatusQueued
			return s.handBack(ctx, t)
		}
		return s.submitted(ctx, t, eng, p, err)
	case StatusRunning:
		p, err := eng.Check(engCtx, job, t.UpstreamID)
		if err != nil && engCtx.Err() != nil {
			return s.handBack(ctx, t) // reading never starts work: simply ask again
		}
		return s.checked(ctx, t, p, err)
	}
	return nil
}

// resubmittable reports whether a submit whose outcome is unknown may be
// sent again: the engine computes locally, or its upstream takes the task
// id and attaches a repeated submit to the work it already has.
func resubmittable(eng Engine) bool {
	if eng.Repeatable() {
		return true
	}
	i, ok := eng.(IdempotentSubmitter)
	return ok && i.IdempotentSubmit()
}

// notSent reports whether a submit error proves the request never left
// this process.
func notSent(err error) bool {
	ue := upstreamError(err)
	return ue != nil && ue.Kind == Refused && ue.Status == 0
}

// handBack releases a task whose step a shutting-down worker cut short,
// due at once, so that another worker takes it over without waiting out
// the lease.
func (s *Service) handBack(ctx context.Context, t *Task) error {
	s.log().InfoContext(ctx, "step cut short by shutdown; task handed back", "jobId", t.ID, "status", t.Status)
	t.RunAt = s.now()
	return s.saveLast(ctx, t)
}

// holdLease renews the task's lease while a step runs, so that a slow
// upstream call (a synchronous image API can take minutes) is never taken
// for a dead worker's and run a second time. It returns the function that
// stops the renewal, and waits for a renewal under way. The renewals run
// from a timer (time.AfterFunc): a step that ends within a third of the
// lease, as most do, starts no goroutine and no ticker (one of each per
// step was 2 % of the server's CPU in `gengate bench e2e`).
func (s *Service) holdLease(ctx context.Context, t *Task) (stop func()) {
	token, every := t.LeaseToken, s.lease()/3
	var mu sync.Mutex // held by a renewal; stop waits for it
	stopped := false
	var timer *time.Timer
	renew := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if err := s.Store.ExtendLease(context.WithoutCancel(ctx), t.ID, token, s.now().Add(s.lease())); err != nil {
			if ErrorCode(err) == EConflict {
				return // the step has ended or lost its claim; its writes are fenced
			}
			s.log().WarnContext(ctx, "renew lease", "jobId", t.ID, "err", err)
		}
		timer.Reset(every)
	}
	mu.Lock()
	timer = time.AfterFunc(every, renew)
	mu.Unlock()
	return func() {
		timer.Stop()
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

// Deadline is when the task is given up: its model's deadline after its
// creation.
func (s *Service) Deadline(t *Task) time.Time {
	d := DefaultImageDeadline
	if t.Type == "video" {
		d = DefaultVideoDeadline
	}
	if m, ok := s.Catalog.Model(t.ModelID); ok && m.DeadlineSeconds > 0 {
		d = time.Duration(m.DeadlineSeconds) * time.Second
	}
	return t.CreatedAt.Add(d)
}

// expire ends a task past its deadline: the upstream is asked to stop its
// work, and the task fails with a refund.
func (s *Service) expire(ctx context.Context, t *Task, eng Engine) error {
	if c, ok := eng.(Canceler); ok && t.UpstreamID != "" {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := c.Cancel(cctx, Job{TaskID: t.ID, ModelID: t.ModelID, Type: t.Type, Route: t.Route}, t.UpstreamID)
		cancel()
		if err != nil {
			s.log().WarnContext(ctx, "cancel upstream work", "jobId", t.ID, "err", err)
		}
	}
	limit := s.Deadline(t).Sub(t.CreatedAt).Round(time.Second)
	return s.fail(ctx, t, CodeDeadline, fmt.Sprintf("the generation did not finish within %s; it was stopped", limit), false)
}

func (s *Service) maxAttempts() int {
	if s.MaxAttempts == 0 {
		return DefaultMaxAttempts
	}
	return s.MaxAttempts
}
