package gengate

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Account webhook endpoints: an account registers URLs, each with the
// event types it wants and its own signing secret; every task of the
// account that reaches a final (or review) state sends one event to each
// endpoint that wants its type, besides the task's own webhookUrl. Secrets
// are shown once (at creation and rotation) and kept sealed (SecretBox).
// A rotation keeps the previous secret signing beside the new one for
// WebhookOverlap, so receivers can switch without losing an event.

// WebhookKeys is a signing secret and, for a while after a rotation, the
// one before it. The store holds them sealed.
type WebhookKeys struct {
	Secret        string
	Previous      string
	PreviousUntil time.Time
}

// WebhookEndpoint is one of an account's webhook endpoints.
type WebhookEndpoint struct {
	ID         string // ep_<uuid>
	AccountID  string
	URL        string
	EventTypes []string
	CreatedAt  time.Time
	Keys       WebhookKeys // sealed
}

// WebhookAttemptRecord is one delivery attempt with its event, as the
// endpoint's attempts list shows it.
type WebhookAttemptRecord struct {
	ID    string
	Event WebhookEvent
	WebhookAttempt
}

// Webhook endpoint defaults (Service fields, flags of gengate serve).
const (
	// DefaultWebhookOverlap is how long a rotated-out secret still signs
	// (--webhook-secret-overlap).
	DefaultWebhookOverlap = 24 * time.Hour
	// DefaultMaxWebhookEndpoints bounds an account's endpoints
	// (--max-webhook-endpoints).
	DefaultMaxWebhookEndpoints = 10
)

// WebhookEndpointPrefix starts every endpoint id.
const WebhookEndpointPrefix = "ep_"

// EventTypes lists every event type, in the order an endpoint lists them.
var EventTypes = []string{EventSucceeded, EventFailed, EventNeedsReview, EventCanceled}

// checkWebhookURL checks a webhook target URL: an absolute http(s) URL with
// a host and no credentials, at most MaxWebhookURLLength bytes. It returns
// the field code and message of a bad one, "" for a good one.
func checkWebhookURL(s string) (code, msg string) {
	if len(s) > MaxWebhookURLLength {
		return FieldTooLong, "must be at most " + strconv.Itoa(MaxWebhookURLLength) + " bytes"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return FieldValue, "must be an absolute http or https URL without credentials"
	}
	return "", ""
}

func fieldError(field, code, msg string) *Error {
	return &Error{Code: EInvalid, Message: "invalid request: " + field + " " + msg,
		Fields: []FieldError{{Field: field, Code: code, Message: msg}}}
}

// webhookEventTypes checks an endpoint's event types: known ones, without
// repeats; none given means every type. They come back in EventTypes order.
func webhookEventTypes(types []string) ([]string, error) {
	if len(types) == 0 {
		return slices.Clone(EventTypes), nil
	}
	var out []string
	for _, t := range types {
		if !slices.Contains(EventTypes, t) {
			return nil, fieldError("eventTypes", FieldValue, "must hold only "+joinQuoted(EventTypes))
		}
	}
	for _, t := range EventTypes {
		if slices.Contains(types, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func joinQuoted(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(x)
	}
	return out
}

// WebhookSecretOwner is the owner a webhook signing secret is sealed for:
// the account, and its endpoint ("" for the account's own secret, which
// signs the tasks' webhookUrl deliveries).
func WebhookSecretOwner(accountID, endpointID string) []string {
	return []string{accountID, endpointID}
}

func (s *Service) box() (*SecretBox, error) {
	if s.Webhooks.Box == nil {
		return nil, Errorf(EInternal, "webhook secrets need a server key (--webhook-key)")
	}
	return s.Webhooks.Box, nil
}

func (s *Service) overlap() time.Duration {
	if s.Webhooks.Overlap > 0 {
		return s.Webhooks.Overlap
	}
	return DefaultWebhookOverlap
}

// WebhookSecret returns the account's signing secret (for the tasks' own
// webhookUrl), made on first use.
func (s *Service) WebhookSecret(ctx context.Context, accountID string) (string, error) {
	keys, err := s.accountKeys(ctx, accountID)
	if err != nil {
		return "", err
	}
	return s.Webhooks.Box.Open(keys.Secret, WebhookSecretOwner(accountID, "")...)
}

func (s *Service) accountKeys(ctx context.Context, accountID string) (WebhookKeys, error) {
	box, err := s.box()
	if err != nil {
		return WebhookKeys{}, err
	}
	return s.Store.WebhookSecret(ctx, accountID, box.Seal(NewWebhookSecret(), WebhookSecretOwner(accountID, "")...), s.now())
}

// RotateWebhookSecret gives the account a new signing secret, returned
// once; the previous one still signs until the time returned.
func (s *Service) RotateWebhookSecret(ctx context.Context, accountID string) (string, time.Time, error) {
	if _, err := s.accountKeys(ctx, accountID); err != nil { // the secret to rotate out
		return "", time.Time{}, err
	}
	return s.rotate(ctx, accountID, "")
}

func (s *Service) rotate(ctx context.Context, accountID, endpointID string) (string, time.Time, error) {
	box, err := s.box()
	if err != nil {
		return "", time.Time{}, err
	}
	secret := NewWebhookSecret()
	until := s.now().Add(s.overlap())
	if err := s.Store.RotateWebhookSecret(ctx, accountID, endpointID, box.Seal(secret, WebhookSecretOwner(accountID, endpointID)...), until); err != nil {
		return "", time.Time{}, err
	}
	return secret, until, nil
}

// CreateWebhookEndpoint adds an endpoint to the account and returns its
// secret (shown this once) with it. The URL is checked as a webhookUrl is
// (form, then the address guard).
func (s *Service) CreateWebhookEndpoint(ctx context.Context, accountID, rawURL string, types []string) (string, *WebhookEndpoint, error) {
	if code, msg := checkWebhookURL(rawURL); code != "" {
		return "", nil, fieldError("url", code, msg)
	}
	types, err := webhookEventTypes(types)
	if err != nil {
		return "", nil, err
	}
	if s.Webhooks.Guard != nil {
		if err := s.Webhooks.Guard(ctx, rawURL); err != nil {
			return "", nil, fieldError("url", ErrorCode(err), ErrorMessage(err))
		}
	}
	box, err := s.box()
	if err != nil {
		return "", nil, err
	}
	max := s.Webhooks.MaxEndpoints
	if max <= 0 {
		max = DefaultMaxWebhookEndpoints
	}
	e := &WebhookEndpoint{ID: WebhookEndpointPrefix + NewID(), AccountID: accountID, URL: rawURL, EventTypes: types,
		CreatedAt: s.now()}
	secret := NewWebhookSecret()
	e.Keys.Secret = box.Seal(secret, WebhookSecretOwner(accountID, e.ID)...)
	if err := s.Store.CreateWebhookEndpoint(ctx, e, max); err != nil {
		return "", nil, err
	}
	return secret, e, nil
}

// RotateWebhookEndpoint gives the account's endpoint a new secret,
// returned once; the previous one still signs until the time returned.
func (s *Service) RotateWebhookEndpoint(ctx context.Context, accountID, id string) (string, time.Time, error) {
	return s.rotate(ctx, accountID, id)
}

// WebhookSigningSecrets returns the secrets an attempt of e is signed
// with: the current one, and the previous one while its overlap lasts.
func (s *Service) WebhookSigningSecrets(ctx context.Context, e *WebhookEvent) ([]string, error) {
	var keys WebhookKeys
	if e.EndpointID == "" {
		k, err := s.accountKeys(ctx, e.AccountID)
		if err != nil {
			return nil, err
		}
		keys = k
	} else {
		ep, err := s.Store.WebhookEndpoint(ctx, e.AccountID, e.EndpointID)
		if err != nil {
			return nil, err
		}
		keys = ep.Keys
	}
	box, err := s.box()
	if err != nil {
		return nil, err
	}
	cur, err := box.Open(keys.Secret, WebhookSecretOwner(e.AccountID, e.EndpointID)...)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if keys.Previous != "" && s.now().Before(keys.PreviousUntil) {
		// A rotated-out secret no key opens (lost to a server key the
		// process does not have) no longer signs; the current one does.
		prev, err := box.Open(keys.Previous, WebhookSecretOwner(e.AccountID, e.EndpointID)...)
		switch {
		case err == nil:
			out = append(out, prev)
		case ErrorCode(err) != EServerKey:
			return nil, err
		}
	}
	return out, nil
}

// ReplayWebhookEvent sends the account's event again, with the same
// webhook-id and payload: it is due at once, with a fresh retry schedule.
func (s *Service) ReplayWebhookEvent(ctx context.Context, accountID, eventID string) (*WebhookEvent, error) {
	return s.Store.ReplayWebhookEvent(ctx, accountID, eventID, s.now())
}
