package gengate

import (
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Webhooks follow the Standard Webhooks specification
// (standardwebhooks.com): a task given a webhookUrl, and each endpoint of
// its account that wants the event type (webhook_endpoints.go), gets one
// event when the task reaches a final (or review) state (a prediction's
// webhookUrl gets its prediction events instead, and a fal queue
// request's its fal event: below). The event row is
// written by the store in the transaction that writes the state (the
// outbox); a delivery loop in every worker process (internal/webhook)
// claims due events with a lease, POSTs them signed with the target's
// secret (the account's, or the endpoint's) and retries on the
// WebhookSchedule until one is answered 2xx.

// WebhookURLField is the generate body's optional member naming where a
// task's final-state event is delivered.
const WebhookURLField = "webhookUrl"

// MaxWebhookURLLength bounds a webhookUrl, in bytes.
const MaxWebhookURLLength = 2048

// Event types, one per final (or review) state.
const (
	EventSucceeded   = "generation.succeeded"
	EventFailed      = "generation.failed"
	EventNeedsReview = "generation.needs_review"
	EventCanceled    = "generation.canceled"
)

// Prediction events. A task created as a prediction of the
// Replicate-compatible API with a webhook keeps the prediction's
// webhook_events_filter (Task.WebhookEvents), and its webhookUrl gets
// these events, as Replicate names them, instead of the final-state
// events above (the account's endpoints still get those); the delivery
// sends each as the prediction object in its state when the event was
// written (docs/replicate.md, "Webhooks"). The store writes them:
//   - start, in the claim that moves the task out of queued for its
//     first submit (StepClaimer), once;
//   - logs, with a progress report whose log lines differ from those of
//     the prediction's last logs event, at most one per
//     PredictionLogsInterval (a change within it goes with the next
//     report after it, or with completed);
//   - output, in the transaction that moves the task to succeeded (gengate
//     has a task's outputs only when it finishes), just before completed;
//   - completed, in the transaction that moves it to succeeded, failed
//     or canceled (a prediction held for review sends nothing: Replicate
//     has no such state).
//
// A task's events to its own webhookUrl are delivered one after the
// other, in the order they were written: each waits until the one before
// it is delivered or given up. Replicate retries only a prediction's
// final webhook; so does gengate (WebhookRetried).
const (
	PredictionStart     = "start"
	PredictionOutput    = "output"
	PredictionLogs      = "logs"
	PredictionCompleted = "completed"
)

// PredictionEvents are the prediction events, in the order a prediction
// sends them: a create call with a webhook and no webhook_events_filter
// gets them all, as on Replicate (Cog's default_events).
var PredictionEvents = []string{PredictionStart, PredictionOutput, PredictionLogs, PredictionCompleted}

// predictionTypePrefix starts the outbox type of every prediction event.
const predictionTypePrefix = "prediction."

// PredictionEventType is the outbox type (WebhookEvent.Type) of
// prediction event ev: "prediction.start", "prediction.completed", ...
func PredictionEventType(ev string) string { return predictionTypePrefix + ev }

// PredictionEvent returns the prediction event an outbox type is, and
// false for any other event type.
func PredictionEvent(typ string) (string, bool) { return strings.CutPrefix(typ, predictionTypePrefix) }

// PredictionLogsInterval is the least time between two logs events of a
// prediction: Replicate sends output and logs webhooks at most once every
// 500 ms.
const PredictionLogsInterval = 500 * time.Millisecond

// WebhookRetried reports whether an event whose attempt failed is tried
// again on the schedule: every event but a prediction's start, output
// and logs, which get one attempt (Replicate retries only the final
// webhook of a prediction, "not any webhooks for intermediate states").
func WebhookRetried(typ string) bool {
	ev, ok := PredictionEvent(typ)
	return !ok || ev == PredictionCompleted
}

// PredictionFilter is a webhook_events_filter as a task keeps it: the
// known prediction events among events, each once, in PredictionEvents'
// order.
func PredictionFilter(events []string) []string {
	var out []string
	for _, ev := range PredictionEvents {
		if slices.Contains(events, ev) {
			out = append(out, ev)
		}
	}
	return out
}

// PredictionFinalEvents are the prediction events a task in status s
// writes with its state change (the store's order): output and completed
// when it succeeded, completed when it failed or was canceled, none
// otherwise.
func PredictionFinalEvents(s Status) []string {
	switch s {
	case StatusSucceeded:
		return []string{PredictionOutput, PredictionCompleted}
	case StatusFailed, StatusCanceled:
		return []string{PredictionCompleted}
	}
	return nil
}

// fal queue webhooks. A request submitted to the fal-compatible queue
// with fal_webhook (docs/fal.md) keeps FalWebhookEvents as its
// Task.WebhookEvents, and its webhookUrl gets one event, FalCompleted,
// instead of the final-state events (the account's endpoints still get
// those). The store writes it in the transaction that moves the task to
// succeeded, failed or canceled (FalFinalEvent); a request held for
// review sends nothing until it is settled, since fal has no such state.
// The delivery sends it as fal sends a queue webhook, signed as fal signs
// one but with the install's signing key (signingkey.go), retried on the
// schedule like any final-state event.
const FalCompleted = "fal.completed"

// FalWebhookEvents is the WebhookEvents of a fal queue request's task:
// kept as "fal" beside its webhookUrl, it names no prediction event.
var FalWebhookEvents = []string{"fal"}

// FalFinalEvent is the event a fal queue request's webhookUrl gets when
// its task reaches status s: FalCompleted for succeeded, failed and
// canceled, "" otherwise.
func FalFinalEvent(s Status) string {
	switch s {
	case StatusSucceeded, StatusFailed, StatusCanceled:
		return FalCompleted
	}
	return ""
}

// WebhookFilter is a request's WebhookEvents as its task keeps them:
// FalWebhookEvents as they are, any other list a prediction's filter
// (PredictionFilter).
func WebhookFilter(events []string) []string {
	if slices.Equal(events, FalWebhookEvents) {
		return FalWebhookEvents
	}
	return PredictionFilter(events)
}

// EventType is the event a task in status s sends, or "" for an active
// status.
func EventType(s Status) string {
	switch s {
	case StatusSucceeded:
		return EventSucceeded
	case StatusFailed:
		return EventFailed
	case StatusNeedsReview:
		return EventNeedsReview
	case StatusCanceled:
		return EventCanceled
	}
	return ""
}

// WebhookSchedule is how long after each failed attempt the next one is
// due: 5s, 30s, 2m, 10m, 30m, 1h, then every 2h, 11 of them, so the last
// attempt comes about 25 hours after the first. Each delay gets up to 10%
// random jitter. After the last, the event is given up (status "failed").
var WebhookSchedule = func() []time.Duration {
	s := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	for range 11 {
		s = append(s, 2*time.Hour)
	}
	return s
}()

// WebhookDelay is the delay after failed attempt n (1-based) on the
// schedule, with jitter, and false once the schedule is spent.
func WebhookDelay(schedule []time.Duration, n int) (time.Duration, bool) {
	if n < 1 || n > len(schedule) {
		return 0, false
	}
	d := schedule[n-1]
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/10 + 1))
	}
	return d, true
}

// Delivery fairness and bounds (flags of gengate serve; docs/api.md,
// "Delivery"). A delivery holds one of a process's WebhookWorkers for as
// long as its receiver takes (up to the attempt's timeout), so an account
// whose receivers are slow or dead could otherwise hold them all and delay
// every other account's events by the timeout, again and again. So:
//   - an account has at most WebhookAccountWorkers deliveries in flight
//     at once (over the cluster, counted from the leases); the others stay
//     free for the other accounts;
//   - a target (an endpoint, or a task's own webhookUrl) that failed is
//     paused: its other events wait until WebhookBackoff has passed, then
//     one of them is tried alone, and a success ends the pause;
//   - an endpoint keeps at most MaxWebhookEventsPerEndpoint events (the
//     oldest go first, with their attempts), an event at most
//     WebhookAttemptsKept attempts, and events go with their tasks.
const (
	// DefaultWebhookWorkers is how many deliveries a process runs at once
	// (--webhook-workers).
	DefaultWebhookWorkers = 16
	// DefaultWebhookAccountWorkers is how many deliveries of one account
	// run at once (--webhook-account-workers).
	DefaultWebhookAccountWorkers = 4
	// DefaultMaxWebhookEventsPerEndpoint bounds the events an endpoint
	// keeps (--max-webhook-events-per-endpoint).
	DefaultMaxWebhookEventsPerEndpoint = 1000
)

// WebhookBackoff is how long a target's events wait after its failures-th
// failure in a row: the retry schedule's delay for that attempt, its last
// delay once failures is past its end, without jitter (the pause is one
// per target, not one per event). It is 0 for an empty schedule.
func WebhookBackoff(schedule []time.Duration, failures int) time.Duration {
	if len(schedule) == 0 || failures < 1 {
		return 0
	}
	return schedule[min(failures, len(schedule))-1]
}

// WebhookAttemptsKept is how many attempts an event keeps: one run of
// the schedule (every attempt until it is spent) and one more; a replay's
// attempts push out the oldest.
func WebhookAttemptsKept(schedule []time.Duration) int { return len(schedule) + 1 }

// Target names where the event goes, for the backoff: its endpoint's id,
// or the task's own webhookUrl.
func (e *WebhookEvent) Target() string {
	if e.EndpointID != "" {
		return e.EndpointID
	}
	return e.URL
}

// WebhookOutcome is how a recorded attempt moves its event and its target
// on.
type WebhookOutcome struct {
	// Status is the event's next status: "delivered", "pending" (again
	// at Next) or "failed" (the schedule spent).
	Status string
	Next   time.Time
	// Backoff is the target's pause after its failures-th failure in a
	// row (WebhookBackoff); nil for none.
	Backoff func(failures int) time.Duration
	// KeepAttempts is how many of the event's attempts are kept, the
	// newest (WebhookAttemptsKept); 0 keeps all.
	KeepAttempts int
}

// WebhookSecretPrefix starts every signing secret.
const WebhookSecretPrefix = "whsec_"

// NewWebhookSecret returns a new signing secret: whsec_ and the base64 of
// 32 random bytes.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	if _, err := cryptorand(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// SignWebhook returns the webhook-signature header value for one secret:
// "v1," and the base64 HMAC-SHA256, keyed by the secret's decoded bytes, of
// "<id>.<unix seconds>.<body>".
func SignWebhook(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, WebhookSecretPrefix))
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// WebhookEvent is one event in the outbox.
type WebhookEvent struct {
	ID        string // the webhook-id header, the same on every attempt
	AccountID string
	TaskID    string
	// EndpointID is the account endpoint the event goes to, or "" for the
	// task's own webhookUrl (signed with the account's secret).
	EndpointID string
	URL        string
	Type       string
	CreatedAt  time.Time
	// Status is "pending", "delivered" or "failed" (the schedule spent).
	Status      string
	Attempts    int
	NextAt      time.Time
	DeliveredAt time.Time
	LastStatus  int    // the receiver's HTTP status of the last attempt, 0 for none
	LastError   string // why the last attempt failed
	// ScheduleFrom is the attempt count when the retry schedule last
	// started (0, or Attempts at the last replay): the delay after a
	// failed attempt is the schedule's (Attempts-ScheduleFrom)th.
	ScheduleFrom int
	// Logs are a prediction's log lines, newline-joined, when its start
	// or logs event was written: the body shows them as they were then.
	Logs string
}

// WebhookAttempt records one delivery attempt.
type WebhookAttempt struct {
	N      int
	At     time.Time
	Status int    // HTTP status, 0 when no answer came
	Error  string // "" on success
}

// webhookURL checks the webhookUrl member (checkWebhookURL).
func (v *validator) webhookURL(raw any) string {
	s, ok := raw.(string)
	if !ok {
		v.bad(WebhookURLField, FieldType, "must be a string")
		return ""
	}
	if code, msg := checkWebhookURL(s); code != "" {
		v.bad(WebhookURLField, code, msg)
		return ""
	}
	return s
}

// checkWebhookTarget refuses a webhookUrl whose host is not allowed
// (Service.Webhooks.Guard), as an INVALID_REQUEST naming the field.
func (s *Service) checkWebhookTarget(ctx context.Context, rawURL string) error {
	if s.Webhooks.Guard == nil {
		return nil
	}
	if err := s.Webhooks.Guard(ctx, rawURL); err != nil {
		msg := ErrorMessage(err)
		return &Error{Code: EInvalid, Message: "invalid request: " + WebhookURLField + " " + msg,
			Fields: []FieldError{{Field: WebhookURLField, Code: ErrorCode(err), Message: msg}}}
	}
	return nil
}

func cryptorand(b []byte) (int, error) { return cryptoRead(b) }

var cryptoRead = crand.Read
