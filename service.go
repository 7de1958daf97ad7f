package gengate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
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
	// InputURLMinBytes is the size from which an input goes to the
	// upstreams that take URLs as a presigned URL of the store rather than
	// as a data: URI (default DefaultInputURLMinBytes; negative: never).
	InputURLMinBytes int64
	// InputURLBase (the --public-url) and InputURLKey (a secret every
	// process of the install shares) make gengate-signed input URLs when
	// the store cannot presign one (local files); either empty: none.
	InputURLBase string
	InputURLKey  []byte
	// MaxOutputBytes caps one output file (default DefaultMaxOutputBytes);
	// a stream over it is cut off and the task fails, refunded.
	MaxOutputBytes int64
	// WebhookGuard checks a webhookUrl's host before the task is created
	// (the same address rule as inputs: internal/fetch.Guard). Nil allows
	// every host.
	WebhookGuard func(ctx context.Context, rawURL string) error
	// Keys, when set, serves API-key authentication from memory, with a
	// bounded delay before a change made elsewhere is seen (keycache.go);
	// nil reads the key from the Store on every request.
	Keys *KeyCache
	// WebhookBox seals webhook signing secrets at rest; without it no
	// secret can be made or read (webhook_endpoints.go).
	WebhookBox *SecretBox
	// WebhookOverlap is how long a rotated-out signing secret still signs
	// (default DefaultWebhookOverlap); MaxWebhookEndpoints bounds an
	// account's endpoints (default DefaultMaxWebhookEndpoints).
	WebhookOverlap      time.Duration
	MaxWebhookEndpoints int
	// Takeovers, when set, counts the claims that took a task over from a
	// worker whose lease ran out (takeover.go).
	Takeovers *LeaseTakeovers
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

// Authenticate returns the API key for a secret, or an EUnauthorized error.
func (s *Service) Authenticate(ctx context.Context, secret string) (*APIKey, error) {
	if secret == "" {
		return nil, Errorf(EUnauthorized, "an API key is required: send Authorization: Bearer <key> or X-API-Key: <key>")
	}
	var k *APIKey
	var err error
	if s.Keys != nil {
		k, err = s.Keys.Find(ctx, HashKey(secret))
	} else {
		k, err = s.Store.FindAPIKeyByHash(ctx, HashKey(secret))
	}
	if ErrorCode(err) == ENotFound {
		return nil, Errorf(EUnauthorized, "the API key is invalid or revoked")
	}
	if err == nil {
		s.touchKey(ctx, k)
	}
	return k, err
}

// Outcome is a task as a call leaves it, with the account's balance.
type Outcome struct {
	Task    *Task
	Balance int
	// Replayed is set when an Idempotency-Key named an existing task.
	Replayed bool
}

// CheckIdempotencyKey reports whether key is acceptable: 1–255 printable
// ASCII characters.
func CheckIdempotencyKey(key string) error {
	if len(key) == 0 || len(key) > 255 {
		return &Error{Code: EInvalid, Message: "Idempotency-Key must be 1 to 255 characters",
			Fields: []FieldError{{Field: "Idempotency-Key", Code: FieldValue, Message: "must be 1 to 255 characters"}}}
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return &Error{Code: EInvalid, Message: "Idempotency-Key must be printable ASCII",
				Fields: []FieldError{{Field: "Idempotency-Key", Code: FieldValue, Message: "must be printable ASCII"}}}
		}
	}
	return nil
}

// Generate validates a request, fetches and checks its inputs, and creates
// its task with the charge, in one transaction. A refused request stores
// nothing and charges nothing. With an idempotency key already used by the
// account it returns that task as it is now (or EKeyReused when the body
// differs). It does not wait; see Wait.
func (s *Service) Generate(ctx context.Context, key *APIKey, body []byte, idemKey string) (*Outcome, error) {
	return s.GenerateFrom(ctx, key, bytes.NewReader(body), idemKey)
}

// GenerateFrom is Generate with the body read from r as it is decoded
// (Catalog.DecodeRequest): the body is never held whole.
func (s *Service) GenerateFrom(ctx context.Context, key *APIKey, body io.Reader, idemKey string) (*Outcome, error) {
	return s.GenerateAs(ctx, key, body, idemKey, "")
}

// GenerateAs is GenerateFrom with the request's fingerprint (what an
// Idempotency-Key's replay must match) given by the caller when not "":
// for a body naming files the caller stored for this call alone (the
// OpenAI edits endpoint's parts), whose URLs differ on every retry while
// their contents do not.
func (s *Service) GenerateAs(ctx context.Context, key *APIKey, body io.Reader, idemKey, fingerprint string) (*Outcome, error) {
	if idemKey != "" {
		if err := CheckIdempotencyKey(idemKey); err != nil {
			return nil, err
		}
	}
	req, err := s.Catalog.DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	if fingerprint != "" {
		req.Fingerprint = fingerprint
	}
	return s.GenerateRequest(ctx, key, req, idemKey)
}

// GenerateRequest is Generate of a request already validated
// (Catalog.DecodeRequest or RequestOf).
func (s *Service) GenerateRequest(ctx context.Context, key *APIKey, req *Request, idemKey string) (*Outcome, error) {
	if idemKey != "" {
		if err := CheckIdempotencyKey(idemKey); err != nil {
			return nil, err
		}
	}
	var err error
	if idemKey != "" {
		if o, err := s.replay(ctx, key.AccountID, idemKey, req.Fingerprint); o != nil || err != nil {
			return o, err
		}
	}
	var route Route
	cost := 0
	if key.Test { // testkeys.go: the sandbox, nothing charged
		route, err = s.testRoute(req)
	} else {
		route, err = s.chooseRoute(req)
		cost = req.Model.Quote(req.Options)
	}
	if err != nil {
		return nil, err
	}
	if err := s.paceFree(key, cost); err != nil {
		return nil, err
	}
	if len(req.InputURLs) > 0 && cost > 0 {
		// Refused before its inputs are fetched when the balance cannot
		// pay. Without inputs the read would be wasted: the task's
		// creation debits only a balance that covers the cost, and
		// answers the same refusal.
		acct, err := s.Store.FindAccount(ctx, key.AccountID)
		if err != nil {
			return nil, err
		}
		if acct.Balance < cost {
			return nil, InsufficientCredits(acct.Balance, cost)
		}
	}

	now := s.now()
	t := &Task{
		ID: NewTaskID(now), AccountID: key.AccountID, ModelID: req.Model.ID, Type: req.Model.Type,
		Status: StatusQueued, Prompt: req.Prompt, Options: req.Options, Inputs: map[string]string{},
		Cost: cost, IdempotencyKey: idemKey, Fingerprint: req.Fingerprint, KeyID: key.ID, InputURLs: inputURLs(req),
		Engine: route.Engine, Route: route, RunAt: now, CreatedAt: now, UpdatedAt: now,
	}
	if req.WebhookURL != "" {
		if err := s.checkWebhookTarget(ctx, req.WebhookURL); err != nil {
			return nil, err
		}
		t.WebhookURL = req.WebhookURL
	}
	if term := s.reviewTerm(req.Prompt); term != "" {
		t.Status, t.ReviewReason = StatusNeedsReview, ReviewTerms
	}
	if err := s.storeInputs(ctx, t, req); err != nil {
		return nil, err
	}
	adm, _ := s.Engines[t.Route.Engine].(Admitter)
	if adm != nil && t.Status == StatusQueued {
		job := s.baseJob(t)
		if err := adm.Admit(job); err != nil {
			s.deleteInputs(ctx, t)
			return nil, err
		}
	}
	res, err := s.Store.CreateTask(ctx, t)
	if err != nil && ErrorCode(err) == EInternal {
		// The commit's fate is unknown to an error of the database (the
		// connection lost as it answered): a task that exists was
		// created, charged, and is answered, its inputs kept.
		if found, ferr := s.Store.FindTask(ctx, t.ID); ferr == nil && found.AccountID == t.AccountID {
			s.log().WarnContext(ctx, "task created despite an error", "jobId", t.ID, "err", err)
			res, err = CreateResult{Task: found, Balance: -1}, nil
			if acct, aerr := s.Store.FindAccount(ctx, t.AccountID); aerr == nil {
				res.Balance = acct.Balance
			}
		}
	}
	if err != nil || res.Existing {
		s.deleteInputs(ctx, t)
		if adm != nil && (res.Task == nil || res.Existing) {
			adm.Forget(t.ID)
		}
	}
	if err != nil {
		return nil, err
	}
	if res.Existing { // the key was taken by a request that committed first
		if err := replayable(res.Task, req.Fingerprint); err != nil {
			return nil, err
		}
		return &Outcome{Task: res.Task, Balance: res.Balance, Replayed: true}, nil
	}
	LogInfo(ctx, s.log(), "task created", slog.String("jobId", t.ID), slog.String("model", t.ModelID), slog.Int("cost", t.Cost),
		slog.String("status", string(t.Status)))
	s.Events.Kick()
	return &Outcome{Task: res.Task, Balance: res.Balance}, nil
}

func (s *Service) replay(ctx context.Context, accountID, key, fingerprint string) (*Outcome, error) {
	t, err := s.Store.FindTaskByIdempotencyKey(ctx, accountID, key)
	if ErrorCode(err) == ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := replayable(t, fingerprint); err != nil {
		return nil, err
	}
	return s.outcome(ctx, t, true)
}

// replayable is the one rule for a request whose Idempotency-Key already
// names a task, found before the creation (replay) or by the creation
// itself when a concurrent request with the key committed first: the
// request that made the task replays it; any other body is refused, and
// names the task its key made.
func replayable(t *Task, fingerprint string) error {
	if t.Fingerprint != fingerprint {
		return keyReused(t)
	}
	return nil
}

func keyReused(t *Task) error {
	return &Error{Code: EKeyReused,
		Message: "this Idempotency-Key was already used with other settings; send a fresh key for a new generation",
		Extra:   map[string]any{"jobId": t.ID}}
}

// InsufficientCredits is the error for a cost the balance does not cover.
func InsufficientCredits(balance, cost int) error {
	return &Error{Code: EInsufficient,
		Message: fmt.Sprintf("this generation costs %d credits; the balance is %d", cost, balance),
		Extra:   map[string]any{"requiredCredits": cost, "remainingCredits": balance}}
}

// storeInputs fetches and checks every input file, then keeps them as blobs
// for the workers. Any bad input refuses the whole request.
func (s *Service) storeInputs(ctx context.Context, t *Task, req *Request) error {
	if len(req.InputURLs) == 0 {
		return nil
	}
	names := make([]string, 0, len(req.InputURLs))
	for name := range req.InputURLs {
		names = append(names, name)
	}
	sort.Strings(names) // errors in a stable order
	var bad []FieldError
	inputs := map[string]Input{}
	for _, name := range names {
		f, _ := req.Model.Field(name)
		in, err := s.fetchInput(ctx, t.AccountID, req.InputURLs[name], InputKind(f.Kind))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == EOverloaded {
				return err
			}
			bad = append(bad, FieldError{Field: name, Code: e.Code, Message: e.Message})
			continue
		}
		inputs[name] = in
	}
	if len(bad) > 0 {
		return &Error{Code: EInvalid, Message: "input " + bad[0].Field + ": " + bad[0].Message, Fields: bad}
	}
	// The route's engine sees the fetched inputs (their sizes) before any
	// charge: a mask of another size, an image too large to upscale.
	if v, ok := s.Engines[t.Route.Engine].(Validator); ok {
		job := s.baseJob(t)
		job.Inputs = inputs
		if err := v.Validate(job); err != nil {
			return err
		}
	}
	for name, in := range inputs {
		key := "inputs/" + t.ID + "/" + name
		if err := s.putInput(ctx, key, in); err != nil {
			s.deleteInputs(ctx, t)
			return fmt.Errorf("store input %s: %w", name, err)
		}
		t.Inputs[name] = key
	}
	return nil
}

// putInput stores a checked input under key: its bytes, or, for a file
// read by handle (one of this server's own files), a stream copy.
func (s *Service) putInput(ctx context.Context, key string, in Input) error {
	if in.Data != nil || in.Open == nil {
		return s.Blobs.Put(ctx, key, in.Data, in.ContentType)
	}
	r, err := in.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	n, err := s.Blobs.PutStream(ctx, key, io.LimitReader(r, in.Size), in.ContentType)
	if err == nil && n != in.Size {
		err = fmt.Errorf("copied %d bytes of %d", n, in.Size)
	}
	return err
}

func (s *Service) deleteInputs(ctx context.Context, t *Task) {
	for _, key := range t.Inputs {
		if err := s.Blobs.Delete(ctx, key); err != nil {
			s.log().WarnContext(ctx, "delete input", "key", key, "err", err)
		}
	}
}

// RoutesFor returns the routes that can serve m in this configuration, in
// the order they are tried: the operator's routes for the model or the
// catalog's, keeping those whose engine is configured; with no provider
// configured at all, the sandbox when none is left.
func (s *Service) RoutesFor(m *Model) []Route {
	rs := m.Routes
	if o, ok := s.Routes[m.ID]; ok {
		rs = o
	}
	var out []Route
	for _, r := range rs {
		if _, ok := s.Engines[r.Engine]; !ok {
			continue
		}
		if _, retired := s.Registry.Retired(r.Engine, r.Upstream); retired {
			continue // its provider no longer lists it (registry.go)
		}
		out = append(out, r)
	}
	if _, ok := s.Engines["sandbox"]; ok && len(out) == 0 && !s.ProvidersConfigured {
		out = append(out, Route{Engine: "sandbox", Upstream: m.ID})
	}
	return out
}

// EngineName returns the name of the engine that serves new tasks of m
// with default settings, "" when none can.
func (s *Service) EngineName(m *Model) string {
	if rs := s.RoutesFor(m); len(rs) > 0 {
		return rs[0].Engine
	}
	return ""
}

// chooseRoute picks the first route whose engine can do the request, before
// anything is charged: an option no route can do is refused with the first
// route's reason.
func (s *Service) chooseRoute(req *Request) (Route, error) {
	routes := s.RoutesFor(req.Model)
	if len(routes) == 0 {
		return Route{}, &Error{Code: EInvalid,
			Message: "model " + req.Model.ID + " is not available here: no configured provider serves it",
			Fields:  []FieldError{{Field: "modelId", Code: FieldUnsupported, Message: "no configured provider serves this model"}}}
	}
	return s.firstValid(routes, s.requestJob(req))
}

// requestJob is the job of a request as routes validate it before its
// inputs are fetched: the inputs by name only.
func (s *Service) requestJob(req *Request) Job {
	names := map[string]Input{}
	for name := range req.InputURLs {
		names[name] = Input{}
	}
	return Job{ModelID: req.Model.ID, Type: req.Model.Type, Prompt: req.Prompt, AspectRatio: req.AspectRatio(),
		NumOutputs: req.NumOutputs(), OutputFormat: req.OutputFormat(), Options: req.Options, Inputs: names}
}

func (s *Service) firstValid(routes []Route, job Job) (Route, error) {
	var first error
	for _, r := range routes {
		job.Route = r
		v, ok := s.Engines[r.Engine].(Validator)
		if !ok {
			return r, nil
		}
		err := v.Validate(job)
		if err == nil {
			return r, nil
		}
		if first == nil {
			first = err
		}
	}
	return Route{}, first
}

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
		return s.Store.SaveStep(ctx, t, true)
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
	return s.Store.SaveStep(ctx, t, true)
}

// holdLease renews the task's lease while a step runs, so that a slow
// upstream call (a synchronous image API can take minutes) is never taken
// for a dead worker's and run a second time. It returns the function that
// stops the renewal.
func (s *Service) holdLease(ctx context.Context, t *Task) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	token := t.LeaseToken
	go func() {
		defer close(finished)
		tick := time.NewTicker(s.lease() / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if err := s.Store.ExtendLease(context.WithoutCancel(ctx), t.ID, token, s.now().Add(s.lease())); err != nil {
					if ErrorCode(err) != EConflict {
						s.log().WarnContext(ctx, "renew lease", "jobId", t.ID, "err", err)
						continue
					}
					return // the step has ended or lost its claim; its writes are fenced
				}
			}
		}
	}()
	return func() { close(done); <-finished }
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
		return s.Store.SaveStep(ctx, t, true)
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
			return s.Store.SaveStep(ctx, t, true)
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
	return s.Store.SaveStep(ctx, t, true)
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
		return s.Store.SaveStep(ctx, t, true)
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
	if err := s.Store.SaveStep(ctx, t, true); err != nil {
		return err
	}
	s.Events.Kick()
	return nil
}

// nextRoute finds the route after the task's current one that can do it.
func (s *Service) nextRoute(ctx context.Context, t *Task) (Route, bool) {
	m, ok := s.Catalog.Model(t.ModelID)
	if !ok || t.Test() { // a test task never leaves the sandbox
		return Route{}, false
	}
	routes := s.RoutesFor(m)
	for i, r := range routes {
		if r.Engine == t.Route.Engine && r.Upstream == t.Route.Upstream {
			names := map[string]Input{}
			for name := range t.Inputs {
				names[name] = Input{}
			}
			job := s.baseJob(t)
			job.Inputs = names
			next, err := s.firstValid(routes[i+1:], job)
			return next, err == nil && next.Engine != ""
		}
	}
	return Route{}, false
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
	return s.Store.SaveStep(ctx, t, true)
}

// pollInterval is the backoff between polls of upstream work: a tenth of
// the task's age, so young tasks are polled often and old ones seldom,
// between 50 ms and MaxPollInterval.
func (s *Service) pollInterval(t *Task) time.Duration {
	return min(MaxPollInterval, max(50*time.Millisecond, s.now().Sub(t.CreatedAt)/10))
}

func backoff(attempts int) time.Duration { return time.Second << min(attempts, 6) }

func (s *Service) maxAttempts() int {
	if s.MaxAttempts == 0 {
		return DefaultMaxAttempts
	}
	return s.MaxAttempts
}

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
	return s.Store.SaveStep(ctx, t, true)
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

// job builds the engine's view of a task, reading its inputs back: whole,
// or, for an InputStreamer engine, Large ones as streams (input_stream.go).
func (s *Service) job(ctx context.Context, t *Task) (Job, error) {
	j := s.baseJob(t)
	st, ok := s.Engines[t.Engine].(InputStreamer)
	streams := ok && st.StreamsInputs()
	for name, key := range t.Inputs {
		if streams {
			in, ok, err := s.streamedInput(ctx, t, name, key)
			if err != nil {
				return j, err
			}
			if ok {
				j.Inputs[name] = in
				continue
			}
		}
		data, err := s.Blobs.Get(ctx, key)
		if err != nil {
			return j, fmt.Errorf("read input %s: %w", name, err)
		}
		j.Inputs[name] = Input{Data: data, ContentType: sniff(data), URL: s.inputURL(ctx, t, name, key, len(data)),
			Large: s.largeInput(len(data))}
	}
	return j, nil
}

// baseJob is the engine's view of a task without its input files.
func (s *Service) baseJob(t *Task) Job {
	j := Job{TaskID: t.ID, ModelID: t.ModelID, Type: t.Type, Prompt: t.Prompt, Route: t.Route,
		Options: t.Options, Inputs: map[string]Input{}, NumOutputs: 1, CreatedAt: t.CreatedAt}
	if j.Route.Engine == "" {
		j.Route = Route{Engine: t.Engine, Upstream: t.ModelID}
	}
	j.AspectRatio, _ = t.Options["aspectRatio"].(string)
	j.OutputFormat, _ = t.Options["outputFormat"].(string)
	if n, ok := toFloat(t.Options["numOutputs"]); ok && n > 0 {
		j.NumOutputs = int(n)
	}
	return j
}

// sniff names the type of a stored input file (checked by the fetcher
// before it was stored) by its first bytes.
func sniff(data []byte) string {
	switch {
	case len(data) > 8 && string(data[4:8]) == "ftyp":
		return "video/mp4"
	case len(data) > 4 && string(data[:4]) == "\x1a\x45\xdf\xa3":
		return "video/webm"
	case len(data) > 8 && string(data[1:4]) == "PNG":
		return "image/png"
	case len(data) > 3 && data[0] == 0xff && data[1] == 0xd8:
		return "image/jpeg"
	case len(data) > 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	case len(data) > 6 && string(data[0:3]) == "GIF":
		return "image/gif"
	}
	return "application/octet-stream"
}

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

// Purge deletes task records and their idempotency keys once Retention has
// passed since they completed. Creations are kept. One process of the
// cluster runs it at a time (Store.Exclusive).
func (s *Service) Purge(ctx context.Context) (int, error) {
	r := s.Retention
	if r == 0 {
		r = DefaultRetention
	}
	n := 0
	_, err := s.Store.Exclusive(ctx, "purge", func(ctx context.Context) error {
		var err error
		if n, err = s.Store.PurgeTasks(ctx, s.now().Add(-r)); err != nil {
			return err
		}
		if err := s.sweepInputs(ctx); err != nil {
			return err
		}
		if err := s.sweepPartialOutputs(ctx); err != nil { // outputs.go
			return err
		}
		if err := s.Store.PurgeSessions(ctx, s.now()); err != nil { // signin.go
			return err
		}
		_, err = s.purgeUploads(ctx)
		return err
	})
	return n, err
}

// sweepInputs deletes input files that no active or reviewed task needs:
// those of a request that crashed between storing its inputs and creating
// its task. Inputs of tasks that finish are deleted as they finish.
func (s *Service) sweepInputs(ctx context.Context) error {
	lister, ok := s.Blobs.(BlobLister)
	if !ok {
		return nil
	}
	// An hour's grace covers requests still between the two steps.
	keys, err := lister.List(ctx, "inputs/", s.now().Add(-time.Hour))
	if err != nil {
		return err
	}
	for _, key := range keys {
		taskID, _, _ := strings.Cut(strings.TrimPrefix(key, "inputs/"), "/")
		t, err := s.Store.FindTask(ctx, taskID)
		if err == nil && !t.Status.Done() {
			continue
		}
		if err != nil && ErrorCode(err) != ENotFound {
			return err
		}
		if err := s.Blobs.Delete(ctx, key); err != nil {
			return err
		}
		s.log().InfoContext(ctx, "deleted orphaned input", "key", key)
	}
	return nil
}
