package gengate

import "time"

// Status is a task's internal state. docs/architecture.md draws the state
// machine:
//
//	queued ──► submitting ──► running ──► succeeded
//	   │            │            │
//	   │            ├────────────┴──────► failed (credits refunded)
//	   │            └─► needs_review (outcome unknown; credits held)
//	   └─► needs_review (held by review terms, before any engine runs)
//
// An operator settles needs_review: refund (→ failed) or deliver (→ queued
// or running again, charge kept). A client's cancel (cancel.go) moves a
// queued or running task, or one held by the review terms, to canceled:
// refunded when no provider charged for it.
type Status string

// Task states.
const (
	StatusQueued      Status = "queued"
	StatusSubmitting  Status = "submitting"
	StatusRunning     Status = "running"
	StatusSucceeded   Status = "succeeded"
	StatusFailed      Status = "failed"
	StatusNeedsReview Status = "needs_review"
	StatusCanceled    Status = "canceled"
)

// Active reports whether a worker still has steps to run for the task.
func (s Status) Active() bool {
	return s == StatusQueued || s == StatusSubmitting || s == StatusRunning
}

// Done reports whether the task has reached a final state.
func (s Status) Done() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCanceled
}

// Public is the status shown to API clients: "processing" for every
// unfinished state, as the spec says, and the final names as they are.
func (s Status) Public() string {
	if s.Active() {
		return "processing"
	}
	return string(s)
}

// Task is one generation request and its life. The task row is the truth:
// it is also the queue item that workers claim.
type Task struct {
	ID        string
	AccountID string
	ModelID   string
	Type      string
	Status    Status
	Prompt    string
	// Options holds the validated options with defaults filled in.
	Options map[string]any
	// Inputs maps an input field to the blob key of its fetched file.
	Inputs map[string]string
	// InputURLs maps an input field to the URL the task was given (a
	// data: URL is kept as a short description, not whole).
	InputURLs map[string]string
	// KeyID is the API key that created the task, empty when a signed-in
	// member's session did (or for tasks from before keys were recorded).
	KeyID string
	// Cost is what the task was charged.
	Cost           int
	IdempotencyKey string
	Fingerprint    string
	// Engine is the engine the task runs on and Route the route that chose
	// it (empty for tasks created before routes were stored: the engine
	// alone then). A submit the upstream refused moves both to the next
	// route. UpstreamID names the engine's work once Submit returned one.
	Engine     string
	Route      Route
	UpstreamID string
	// ErrorCode and ErrorMessage explain a failed task; InputFault says the
	// caller's input was at fault (HTTP 400 rather than 500).
	ErrorCode    string
	ErrorMessage string
	InputFault   bool
	// ReviewReason says why a task waits in needs_review.
	ReviewReason string
	// LeaseToken identifies the claim this process holds on the task; the
	// store refuses writes from a claim that has been superseded.
	LeaseToken string
	// LeaseUntil is when the lease of a task created already claimed
	// (Handoff) runs out; the store writes it with the task's row. Zero
	// otherwise: a claim's lease is the store's to write.
	LeaseUntil time.Time
	// Attempts counts the claims of the task since its last step that made
	// progress; it bounds retries of a step that keeps failing.
	Attempts int
	// Checkpointed says the claim that returned the task (StepClaimer)
	// already wrote it as submitting, the checkpoint before an engine's
	// submit, while Status still says queued, as the task was before the
	// claim: the submit step need not write the checkpoint again.
	Checkpointed bool
	// TakenOver is the lease token of another claim whose lease had run
	// out when the claim that returned the task (StepClaimer) took it: a
	// worker died or was cut off mid-step. Empty when the task was free.
	TakenOver string
	// RunAt is when the next step is due.
	RunAt       time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time
	// Outputs are the creations of a succeeded task.
	Outputs []Creation
	// WebhookURL is where the task's final-state event goes (the request's
	// webhookUrl), or "". The store keeps it beside the task (written with
	// it, read only when the task's webhook events are written).
	WebhookURL string
	// WebhookEvents are the prediction events (webhook.go) WebhookURL gets
	// instead of the final-state events, for a prediction of the
	// Replicate-compatible API (its webhook_events_filter, in
	// PredictionFilter's form), or FalWebhookEvents for a fal queue
	// request's (its fal event); nil for any other task. Kept beside
	// WebhookURL.
	WebhookEvents []string
	// UpstreamCost is what the provider charged for a succeeded task's
	// work (upstreamcost.go), set when it succeeds on a provider's engine;
	// the store keeps it apart from the task (written with the final
	// state, read only in sums).
	UpstreamCost *UpstreamCost
}

// Creation is a finished output file. Creations outlive task records.
type Creation struct {
	ID          string
	AccountID   string
	TaskID      string
	Index       int
	Key         string // blob key
	Token       string // unguessable; the file's URL is /files/<token>.<ext>
	ContentType string
	Ext         string
	Size        int64
	CreatedAt   time.Time
}

// Path is the creation's URL path.
func (c Creation) Path() string { return "/files/" + c.Token + "." + c.Ext }

// Review reasons.
const (
	ReviewTerms          = "review_terms"
	ReviewOutcomeUnknown = "submission_outcome_unknown"
	ReviewCheckFailing   = "upstream_check_failing"
	ReviewOutputsLost    = "outputs_not_stored"
	// ReviewUnreadable: a claimed task's stored row could not be decoded
	// (its options, inputs or route), so no step can run it.
	ReviewUnreadable = "stored_task_unreadable"
)
