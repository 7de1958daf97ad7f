package gengate

import (
	"context"
	"fmt"
	"time"
)

// Cancel errors and codes. docs/api.md has the rule table.
const (
	// ETaskFinished refuses a cancel that comes too late: the task (or its
	// upstream work) already finished. Nothing changes.
	ETaskFinished = "TASK_FINISHED"
	// ETaskBusy refuses a cancel while a step of the task runs (a worker is
	// sending it upstream or reading its result): cancel again after
	// Retry-After. Nothing changes.
	ETaskBusy = "TASK_BUSY"
	// ECanceled is what a canceled task's statusUrl answers (409): final,
	// not to be retried.
	ECanceled = "GENERATION_CANCELED"

	// CodeCanceledRefunded is the ErrorCode of a task canceled before any
	// upstream charge: its credits were refunded.
	CodeCanceledRefunded = "CANCELED_BEFORE_CHARGE"
	// CodeCanceledCharged is the ErrorCode of a task canceled after the
	// upstream may have charged for it: its credits are kept.
	CodeCanceledCharged = "CANCELED_AFTER_CHARGE"
)

// CancelBusyWait is how long a cancel waits for a running step of the task
// to end before it answers TASK_BUSY.
const CancelBusyWait = 5 * time.Second

// Refunded reports whether a final task's credits went back to the account:
// a failed task always, a canceled one when it stopped before any charge.
func (t *Task) Refunded() bool {
	switch t.Status {
	case StatusFailed:
		return true
	case StatusCanceled:
		return t.ErrorCode == CodeCanceledRefunded
	}
	return false
}

// Cancellation is an upstream's answer to a request to stop work.
type Cancellation int

// Upstream answers to a cancel.
const (
	// CancelRequested: the upstream took the request but does not confirm
	// that the work stopped before it charged (it was running).
	CancelRequested Cancellation = iota + 1
	// CancelBeforeCharge: the upstream confirms the work stopped before
	// anything was charged (it was still queued).
	CancelBeforeCharge
	// CancelTooLate: the work already ended upstream; its result is
	// delivered as usual.
	CancelTooLate
)

// cancelRule is the decision for one task state; see Cancel.
type cancelRule int

const (
	ruleRefund   cancelRule = iota + 1 // cancel and refund in full
	ruleUpstream                       // ask the upstream; refund only on its confirmation
	ruleFinished                       // refuse: TASK_FINISHED
	ruleReview                         // refuse: an operator settles this review
	ruleBusy                           // refuse: a step runs; retry shortly
	ruleSame                           // already canceled: answer it as it is
)

// cancelRuleFor is the rule table of docs/api.md ("Cancel").
func cancelRuleFor(t *Task, eng Engine) cancelRule {
	switch {
	case t.Status == StatusCanceled:
		return ruleSame
	case t.Status.Done():
		return ruleFinished
	case t.Status == StatusNeedsReview && t.ReviewReason == ReviewTerms && t.UpstreamID == "":
		return ruleRefund // held before any engine ran
	case t.Status == StatusNeedsReview:
		return ruleReview
	case t.Status == StatusSubmitting:
		return ruleBusy // only while its lease is held: see Cancel
	case t.Status == StatusQueued && t.UpstreamID == "" && !idempotentUpstream(eng):
		return ruleRefund // never sent upstream
	case eng != nil && eng.Repeatable():
		return ruleRefund // computed here: no provider charges for it
	}
	return ruleUpstream
}

// idempotentUpstream reports whether a queued task of the engine may have
// upstream work under its own id (a ComfyUI submit whose answer was lost is
// retried from queued).
func idempotentUpstream(eng Engine) bool {
	i, ok := eng.(IdempotentSubmitter)
	return ok && i.IdempotentSubmit() && !eng.Repeatable()
}

// Cancel stops the account's task at the client's request:
//
//   - a task not yet sent upstream (queued, or held for review by the
//     review terms) is canceled and refunded in full;
//   - a task whose work is upstream is canceled there: refunded when the
//     provider confirms it stopped before charging, canceled without a
//     refund when it only took the request (or the engine cannot cancel),
//     and refused with TASK_FINISHED when the work already ended (the
//     result is then delivered);
//   - a finished task is refused with TASK_FINISHED; a canceled one is
//     answered as it is; a task in review for another reason is refused
//     (an operator settles it); a task a worker is submitting right now is
//     refused with TASK_BUSY after CancelBusyWait.
//
// The cancel takes the task's lease (Store.ClaimTask) before it asks the
// upstream, so no worker steps it meanwhile, and writes the canceled state
// under that lease (Store.FinishTask): a task is canceled or succeeded,
// never both, and refunded at most once.
func (s *Service) Cancel(ctx context.Context, accountID, id string) (*Outcome, error) {
	ctx = context.WithoutCancel(ctx)           // a cancel that started ends its writes
	deadline := time.Now().Add(CancelBusyWait) // wall time: how long the caller waits
	wait := 50 * time.Millisecond
	for {
		o, err := s.Find(ctx, accountID, id)
		if err != nil {
			return nil, err
		}
		t := o.Task
		eng := s.Engines[t.Engine]
		switch cancelRuleFor(t, eng) {
		case ruleSame:
			return o, nil
		case ruleFinished:
			return nil, finished(t)
		case ruleReview:
			return nil, &Error{Code: EConflict, Message: "this task is held for review; an operator settles it (refund or delivery)",
				Extra: map[string]any{"jobId": t.ID, "jobStatus": t.Status.Public()}}
		}
		if t.Status == StatusNeedsReview { // held by the review terms
			if err := s.cancelAs(ctx, t, true, ""); ErrorCode(err) == EConflict {
				continue // an operator settled it meanwhile: look again
			} else if err != nil {
				return nil, err
			}
			return s.Find(ctx, accountID, id)
		}
		claimed, err := s.Store.ClaimTask(ctx, id, s.Owner+"-cancel", s.now(), s.lease())
		if err != nil {
			return nil, err
		}
		if claimed == nil { // a step runs (or the task just finished)
			if time.Now().After(deadline) {
				return nil, &Error{Code: ETaskBusy, Message: "a step of this task is running; cancel again in a moment",
					Extra: map[string]any{"jobId": t.ID, "retryAfter": 1}}
			}
			time.Sleep(wait)
			wait = min(2*wait, 500*time.Millisecond)
			continue
		}
		if err := s.cancelClaimed(ctx, claimed, s.Engines[claimed.Engine]); err != nil {
			return nil, err
		}
		return s.Find(ctx, accountID, id)
	}
}

func finished(t *Task) error {
	return &Error{Code: ETaskFinished, Message: fmt.Sprintf("the task already finished (%s); nothing was canceled", t.Status.Public()),
		Extra: map[string]any{"jobId": t.ID, "jobStatus": t.Status.Public()}}
}

// cancelClaimed applies the rule to a task this cancel holds the lease of.
func (s *Service) cancelClaimed(ctx context.Context, t *Task, eng Engine) error {
	switch cancelRuleFor(t, eng) {
	case ruleRefund:
		return s.cancelAs(ctx, t, true, "")
	case ruleBusy:
		// Submitting with no worker holding it: a worker stopped mid-submit.
		// The next step decides (resubmit or review); give it back now.
		s.release(ctx, t, true)
		return &Error{Code: ETaskBusy, Message: "the task is being sent upstream; cancel again in a moment",
			Extra: map[string]any{"jobId": t.ID, "retryAfter": 1}}
	}
	upstreamID := t.UpstreamID
	if upstreamID == "" {
		upstreamID = t.ID // an idempotent submitter's work is named by the task id
	}
	job := s.baseJob(t)
	cctx, stop := context.WithTimeout(ctx, 15*time.Second)
	defer stop()
	var answer Cancellation
	switch c := eng.(type) {
	case ConfirmingCanceler:
		a, err := c.CancelWork(cctx, job, upstreamID)
		if err != nil {
			s.release(ctx, t, false)
			s.log().WarnContext(ctx, "cancel upstream work", "jobId", t.ID, "engine", t.Engine, "err", err)
			return &Error{Code: EOverloaded, Message: "the provider could not be asked to stop this generation; nothing was canceled, try again",
				Extra: map[string]any{"jobId": t.ID}}
		}
		answer = a
	case Canceler:
		if err := c.Cancel(cctx, job, upstreamID); err != nil {
			s.log().WarnContext(ctx, "cancel upstream work", "jobId", t.ID, "engine", t.Engine, "err", err)
		}
		answer = CancelRequested
	default:
		answer = CancelRequested // the work runs on; gengate delivers nothing
	}
	switch answer {
	case CancelBeforeCharge:
		return s.cancelAs(ctx, t, true, "the provider stopped it before charging")
	case CancelTooLate:
		s.release(ctx, t, true) // deliver the result at once
		return finished(t)
	}
	return s.cancelAs(ctx, t, false, "")
}

// cancelAs writes the canceled state, with a full refund or none.
func (s *Service) cancelAs(ctx context.Context, t *Task, refund bool, why string) error {
	t.Status, t.ErrorCode, t.ErrorMessage = StatusCanceled, CodeCanceledCharged, "canceled by the caller"
	credits := 0
	if refund {
		t.ErrorCode, credits = CodeCanceledRefunded, t.Cost
	}
	if why != "" {
		t.ErrorMessage += "; " + why
	}
	return s.finish(ctx, t, credits)
}

// release gives back the lease a cancel took without canceling; now makes
// the task due at once.
func (s *Service) release(ctx context.Context, t *Task, now bool) {
	t.Attempts = max(0, t.Attempts-1) // the cancel's claim was no attempt
	if now {
		t.RunAt = s.now()
	}
	if err := s.Store.SaveStep(ctx, t, true); err != nil {
		s.log().WarnContext(ctx, "release task after cancel", "jobId", t.ID, "err", err)
	}
	s.Events.Kick()
}
