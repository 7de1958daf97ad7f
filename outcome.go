package gengate

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Step outcomes: what an engine's answer (or error) does to a task:
// progress, a retry with backoff, a fallback to the next route, a search
// for lost work, review, or the end with its refund.

// definite reports whether an engine error is a definite failure.
func definite(err error) bool {
	c := ErrorCode(err)
	return c == EFailed || c == EInvalid
}

func upstreamError(err error) *UpstreamError {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		return ue
	}
	return nil
}

// submitted acts on the answer to a submit. Only an answer that proves the
// upstream did not take the work lets it be sent again, here or on the next
// route; an ambiguous one never does for a non-repeatable engine.
func (s *Service) submitted(ctx context.Context, t *Task, eng Engine, p Progress, err error) error {
	ue := upstreamError(err)
	switch {
	case err == nil:
		return s.progress(ctx, t, p)
	case ue != nil && ue.Kind == Busy:
		if t.Attempts >= s.maxAttempts() {
			return s.fallback(ctx, t, ue)
		}
		s.log().WarnContext(ctx, "upstream busy at submit", "jobId", t.ID, "engine", t.Engine, "err", err)
		t.Status = StatusQueued
		t.RunAt = s.now().Add(max(ue.RetryAfter, backoff(t.Attempts)))
		return s.saveLast(ctx, t)
	case ue != nil && ue.Kind == Refused:
		return s.fallback(ctx, t, ue)
	case ue != nil:
		return s.fail(ctx, t, ue.Code, ue.Message, ue.InputFault())
	case definite(err):
		return s.fail(ctx, t, EFailed, ErrorMessage(err), ErrorCode(err) == EInvalid)
	case !resubmittable(eng):
		s.log().WarnContext(ctx, "ambiguous submit", "jobId", t.ID, "engine", t.Engine, "err", err)
		if _, ok := eng.(Finder); ok {
			// Look for the work it may have started in a later step (the
			// provider may list it only after a moment); the task stays
			// in submitting, which is never sent again.
			t.Attempts = 0
			t.RunAt = s.now().Add(FindDelay)
			return s.saveLast(ctx, t)
		}
		return s.review(ctx, t, ReviewOutcomeUnknown, "the upstream did not say whether it accepted the generation")
	}
	return s.retry(ctx, t, err)
}

// FindDelay is the wait between a submit whose outcome is unknown and the
// first look for its work (Finder): long enough for a provider that
// created the work to list it.
const FindDelay = 2 * time.Second

// find looks for the upstream work of a task whose submit has an unknown
// outcome: found, the task follows it (running); not found, or not
// findable, the task goes to review with its credits held. It never
// submits again.
func (s *Service) find(ctx context.Context, t *Task, f Finder, job Job) error {
	// The submit began after the task was created; a minute is left for
	// the provider's clock.
	id, err := f.Find(ctx, job, t.CreatedAt.Add(-time.Minute))
	switch {
	case err == nil && id != "":
		s.log().InfoContext(ctx, "found the upstream work of an ambiguous submit", "jobId", t.ID,
			"engine", t.Engine, "upstreamId", id)
		return s.progress(ctx, t, Progress{UpstreamID: id})
	case err == nil:
		return s.review(ctx, t, ReviewOutcomeUnknown,
			"the upstream did not say whether it accepted the generation, and its recent work shows none for this task")
	case definite(err):
		return s.review(ctx, t, ReviewOutcomeUnknown,
			"the upstream did not say whether it accepted the generation: "+ErrorMessage(err))
	}
	return s.retryFind(ctx, t, err)
}

// retryFind schedules another look for the work of an ambiguous submit,
// up to MaxAttempts; then the task goes to review.
func (s *Service) retryFind(ctx context.Context, t *Task, cause error) error {
	s.log().WarnContext(ctx, "look for upstream work failed", "jobId", t.ID, "attempt", t.Attempts, "err", cause)
	if t.Attempts >= s.maxAttempts() {
		return s.review(ctx, t, ReviewOutcomeUnknown,
			"the upstream did not say whether it accepted the generation, and its recent work could not be read")
	}
	t.RunAt = s.now().Add(backoff(t.Attempts))
	return s.saveLast(ctx, t)
}

// checked acts on the answer to a check of upstream work.
func (s *Service) checked(ctx context.Context, t *Task, p Progress, err error) error {
	ue := upstreamError(err)
	switch {
	case err == nil:
		return s.progress(ctx, t, p)
	case ue != nil && ue.Kind == Busy:
		// The upstream answered: the work is still there. Poll again when
		// it asks, within the task's deadline.
		s.log().InfoContext(ctx, "upstream busy at check", "jobId", t.ID, "err", err)
		t.Attempts = 0
		t.RunAt = s.now().Add(max(ue.RetryAfter, s.pollInterval(t)))
		return s.saveLast(ctx, t)
	case ue != nil:
		return s.fail(ctx, t, ue.Code, ue.Message, ue.InputFault())
	case definite(err):
		return s.fail(ctx, t, EFailed, ErrorMessage(err), ErrorCode(err) == EInvalid)
	}
	return s.retry(ctx, t, err)
}

// fallback moves a task whose submit the upstream refused to the next
// route that can do it, or fails it with a refund when none is left.
func (s *Service) fallback(ctx context.Context, t *Task, ue *UpstreamError) error {
	next, ok := s.nextRoute(ctx, t)
	if !ok {
		return s.fail(ctx, t, ue.Code, ue.Message, ue.InputFault())
	}
	s.log().WarnContext(ctx, "upstream refused; trying the next route", "jobId", t.ID,
		"from", t.Engine, "to", next.Engine, "upstream", next.Upstream, "err", ue)
	t.Engine, t.Route, t.UpstreamID = next.Engine, next, ""
	t.Status, t.Attempts, t.RunAt = StatusQueued, 0, s.now()
	if err := s.saveLast(ctx, t); err != nil {
		return err
	}
	s.Events.Kick()
	return nil
}

func (s *Service) fail(ctx context.Context, t *Task, code, msg string, inputFault bool) error {
	t.Status, t.ErrorCode, t.ErrorMessage, t.InputFault = StatusFailed, code, msg, inputFault
	return s.finish(ctx, t, t.Cost)
}

func (s *Service) progress(ctx context.Context, t *Task, p Progress) error {
	if len(p.Outputs) > 0 {
		return s.succeed(ctx, t, p) // outputs.go
	}
	t.Status, t.Attempts = StatusRunning, 0 // progress: retries count afresh
	if p.UpstreamID != "" {
		t.UpstreamID = p.UpstreamID
	}
	s.saveReport(ctx, t, p.Report) // progress.go
	t.RunAt = s.now().Add(max(p.RetryAfter, s.pollInterval(t)))
	return s.saveLast(ctx, t)
}

// pollInterval is the backoff between polls of upstream work: a tenth of
// the task's age, so young tasks are polled often and old ones seldom,
// between 50 ms and MaxPollInterval.
func (s *Service) pollInterval(t *Task) time.Duration {
	return min(MaxPollInterval, max(50*time.Millisecond, s.now().Sub(t.CreatedAt)/10))
}

func backoff(attempts int) time.Duration { return time.Second << min(attempts, 6) }

// retry schedules a step that failed ambiguously again with backoff, up to
// MaxAttempts; then the task fails with a refund if no upstream work can
// exist, or goes to review if it may. A non-repeatable engine's submit is
// never retried: it may have started paid work.
func (s *Service) retry(ctx context.Context, t *Task, cause error) error {
	s.log().WarnContext(ctx, "task step failed", "jobId", t.ID, "status", t.Status, "attempt", t.Attempts, "err", cause)
	if t.Status == StatusSubmitting {
		if eng, ok := s.Engines[t.Engine]; ok && !resubmittable(eng) {
			return s.review(ctx, t, ReviewOutcomeUnknown, "the upstream did not say whether it accepted the generation")
		}
	}
	if t.Attempts >= s.maxAttempts() {
		if t.Status == StatusRunning {
			return s.review(ctx, t, ReviewCheckFailing, "the upstream could not be asked about this generation")
		}
		return s.fail(ctx, t, EFailed, "the generation failed after repeated errors", false)
	}
	if t.Status == StatusSubmitting {
		t.Status = StatusQueued
	}
	t.RunAt = s.now().Add(backoff(t.Attempts))
	return s.saveLast(ctx, t)
}

func (s *Service) review(ctx context.Context, t *Task, reason, msg string) error {
	s.log().WarnContext(ctx, "task needs review", "jobId", t.ID, "reason", reason)
	t.Status, t.ReviewReason, t.ErrorMessage = StatusNeedsReview, reason, msg
	return s.finish(ctx, t, 0)
}

// finish records a task's final (or review) state; a failed task gets
// refund credits back in the same transaction.
func (s *Service) finish(ctx context.Context, t *Task, refund int) error {
	now := s.now()
	t.UpdatedAt = now
	if t.Status.Done() {
		t.CompletedAt = now
	}
	ReleaseSlot(ctx) // the step's last write (stepslot.go)
	if err := s.Store.FinishTask(ctx, t, refund); err != nil {
		return err
	}
	if t.Status.Done() {
		s.deleteInputs(ctx, t)
	}
	level := slog.LevelInfo
	if t.Status == StatusFailed {
		level = slog.LevelWarn // an operator looks at failures; successes are routine
	}
	s.log().Log(ctx, level, "task finished", "jobId", t.ID, "status", t.Status, "refund", refund,
		"reason", t.ErrorCode, "model", t.ModelID)
	s.Events.Publish(t.ID)
	return nil
}
