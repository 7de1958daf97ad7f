package gengate

import (
	"context"
)

// Operator review: settling a task held for review.

// Settle ends an operator's review of a task: refund returns its credits
// and fails it; deliver lets it run (or resume polling its upstream) with
// the charge kept.
func (s *Service) Settle(ctx context.Context, id string, refund bool) (*Task, error) {
	t, err := s.Store.FindTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Status != StatusNeedsReview {
		return nil, Errorf(EConflict, "task %s is %s, not needs_review", id, t.Status)
	}
	if refund {
		t.Status, t.ErrorCode, t.ErrorMessage = StatusFailed, CodeRefusedAfterReview, "refunded after review"
		t.LeaseToken = ""
		err = s.finishAsOperator(ctx, t, t.Cost)
		return t, err
	}
	t.Status, t.ReviewReason, t.ErrorMessage, t.LeaseToken, t.Attempts = StatusQueued, "", "", "", 0
	if t.UpstreamID != "" {
		t.Status = StatusRunning
	}
	t.RunAt, t.UpdatedAt = s.now(), s.now()
	if err := s.Store.SaveStep(ctx, t, true); err != nil {
		return nil, err
	}
	s.Events.Kick()
	return t, nil
}

func (s *Service) finishAsOperator(ctx context.Context, t *Task, refund int) error {
	now := s.now()
	t.UpdatedAt, t.CompletedAt = now, now
	if err := s.Store.FinishTask(ctx, t, refund); err != nil {
		return err
	}
	s.deleteInputs(ctx, t)
	s.Events.Publish(t.ID)
	return nil
}
