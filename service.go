package gengate

import (
	"context"
	"log/slog"
	"time"
)

// Service is gengate's use cases: authenticate, generate, advance and read
// tasks, list models, settle reviews, and run task steps for the workers.
// cmd/gengate builds one with its dependencies.
type Service struct {
	Store   Store
	Catalog *Catalog
	// Engines holds the configured engines by name. The sandbox engine is
	// always there and serves every model no other engine can.
	Engines map[string]Engine
	Blobs   Blobs
	Fetcher Fetcher
	Events  *Events
	Log     *slog.Logger
	Now     func() time.Time
	// SyncWait caps how long a generate call waits for its result; zero
	// answers every call at once with its task.
	SyncWait time.Duration
	// FreeLimit, when set, paces each account's calls of free models
	// (cost 0), which no balance bounds; see paceFree.
	FreeLimit Limiter
	// RedeemLimit, when set, paces each account's redemption attempts
	// (codes.go).
	RedeemLimit Limiter
	// Payments, when set, sells credits by card on TopUp's terms
	// (topup.go); nil: no card top-ups.
	Payments Payments
	TopUp    TopUpTerms
	// MaxKeys caps an account's unrevoked API keys made through the API
	// (MintKey); 0 means DefaultMaxKeys.
	MaxKeys int
	// ReviewTerms hold a prompt containing any of them in review before
	// any engine runs, matched however the prompt spells them (case,
	// width, accents, invisible characters, look-alike letters: see
	// foldForReview).
	ReviewTerms []string
	// Owner names this process's workers in task leases; Lease is how long
	// a claimed step may run before another worker may take the task over.
	Owner string
	Lease time.Duration
	// Handoff, when set, is this process's step slots: a new task that
	// finds one free is created already claimed and handed to it
	// (handoff.go); nil: every task is created queued for a claim.
	Handoff Handoff
	// Retention is how long task records and idempotency keys are kept
	// after a task completes.
	Retention time.Duration
	// MaxAttempts bounds retries of a step that keeps failing ambiguously.
	MaxAttempts int
	// Routes overrides the catalog's routes of a model (by model id), in
	// the order they are tried.
	Routes map[string][]Route
	// Registry, when set, holds the routes the providers' registries no
	// longer list (CheckRegistries, registry.go): they leave routing.
	Registry *Registry
	// ProvidersConfigured says an upstream provider is configured: then the
	// sandbox serves only routes that name it. Otherwise (the offline
	// default) it serves every model no configured route can.
	ProvidersConfigured bool
	// UploadRetention is how long uploaded files are kept (default
	// DefaultUploadRetention).
	UploadRetention time.Duration
	// InputURLs says when and how inputs go to upstreams as URLs
	// (inputurl.go).
	InputURLs InputURLSettings
	// MaxOutputBytes caps one output file (default DefaultMaxOutputBytes);
	// a stream over it is cut off and the task fails, refunded.
	MaxOutputBytes int64
	// Keys, when set, serves API-key authentication from memory, with a
	// bounded delay before a change made elsewhere is seen (keycache.go);
	// nil reads the key from the Store on every request.
	Keys *KeyCache
	// Webhooks holds the webhook settings (webhook.go,
	// webhook_endpoints.go).
	Webhooks WebhookSettings
	// Takeovers, when set, counts the claims that took a task over from a
	// worker whose lease ran out (takeover.go).
	Takeovers *LeaseTakeovers
}

// InputURLSettings say when and how an input goes to the upstreams that
// take URLs as a URL rather than as a data: URI.
type InputURLSettings struct {
	// MinBytes is the size from which an input goes as a presigned URL of
	// the store (default DefaultInputURLMinBytes; negative: never).
	MinBytes int64
	// Base (the --public-url) and Key (a secret every process of the
	// install shares) make gengate-signed input URLs when the store cannot
	// presign one (local files); either empty: none.
	Base string
	Key  []byte
}

// WebhookSettings are the webhook settings of a Service.
type WebhookSettings struct {
	// Guard checks a webhookUrl's host before the task is created (the
	// same address rule as inputs: internal/fetch.Guard). Nil allows every
	// host.
	Guard func(ctx context.Context, rawURL string) error
	// Box seals webhook signing secrets at rest; without it no secret can
	// be made or read (webhook_endpoints.go).
	Box *SecretBox
	// Overlap is how long a rotated-out signing secret still signs
	// (default DefaultWebhookOverlap); MaxEndpoints bounds an account's
	// endpoints (default DefaultMaxWebhookEndpoints).
	Overlap      time.Duration
	MaxEndpoints int
}

// DefaultSyncWait is the spec's synchronous wait, the --sync-wait default.
const DefaultSyncWait = 3 * time.Minute

// Defaults used when the Service fields are zero.
const (
	DefaultLease       = 20 * time.Second
	DefaultRetention   = 90 * 24 * time.Hour
	DefaultMaxAttempts = 10
	// Default deadlines of a task, counted from its creation, for models
	// whose catalog entry sets none. Past it the upstream work is
	// cancelled and the task fails with a refund.
	DefaultImageDeadline = 15 * time.Minute
	DefaultVideoDeadline = 60 * time.Minute
	// MaxPollInterval caps the backoff between two polls of upstream work.
	MaxPollInterval = 30 * time.Second
	// SafetyRecheck is how often a waiting request rereads its task in case
	// the change came from a process that cannot notify this one (a CLI
	// settle against SQLite). Notifications normally wake it at once. With
	// many waiters they recheck less often (Events, MaxRechecks).
	SafetyRecheck = 2 * time.Second
)

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLease
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Outcome is a task as a call leaves it, with the account's balance.
type Outcome struct {
	Task    *Task
	Balance int
	// Replayed is set when an Idempotency-Key named an existing task.
	Replayed bool
}
