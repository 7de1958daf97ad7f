package gengate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
)

// Creating tasks: a generate call is validated, its inputs fetched and
// stored, and its task created with its debit and Idempotency-Key in one
// store transaction; a key seen before replays its task.

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
	route, cost, err := s.routeAndCost(key, req)
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
		if req.WebhookEvents != nil {
			// A prediction's webhook: its events, and none at all for a
			// filter that names none; or a fal queue request's.
			if t.WebhookEvents = WebhookFilter(req.WebhookEvents); len(t.WebhookEvents) == 0 {
				t.WebhookURL, t.WebhookEvents = "", nil
			}
		}
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
	// With a free step slot the task is created claimed and handed to
	// it (handoff.go).
	stored, handoff := t, s.claimAtCreation(t)
	if handoff {
		stored = s.claimed(t)
	}
	res, err := s.Store.CreateTask(ctx, stored)
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
	handedOver := false
	if handoff {
		made := err == nil && !res.Existing && res.Task != nil && res.Task.ID == t.ID
		s.handOver(stored, made)
		handedOver = made
		if made && res.Task == stored {
			res.Task = t // answered as created: queued, nothing sent upstream yet
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
	if !handedOver { // the workers need not look for a task already in a slot
		s.Events.Kick()
	}
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
