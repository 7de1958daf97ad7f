package gengate

import (
	"context"
	"io"
	"time"
)

// This file lists every optional ability of the interfaces the service
// needs (Store, Blobs, Fetcher, Engine, Payments): an interface an adapter
// may also implement, which the service finds by type assertion and does
// without when it is missing. Each says what the service does without it.
// An adapter that has one says so with a compile-time guard
// (var _ gengate.Finder = (*Engine)(nil)), so that a changed signature
// fails the build instead of silently turning the ability off; a wrapper
// around an adapter hides every ability it does not forward itself.
//
// Store: StepClaimer, LeasedCreator, ProgressStore, UploadStore, CostStore, SigningKeyStore.
// Blobs: Presigner, BlobLister, PartialSweeper.
// Fetcher: InputChecker.
// Engine: Validator, Admitter, IdempotentSubmitter, Finder, Canceler,
// ConfirmingCanceler, InputStreamer, RegistryChecker, LatencyHinter.
// Payments: PaymentEventVerifier.

// StepClaimer is an optional Store ability the workers' claims use when
// the store has it: ClaimSteps is ClaimTasks that, in the same
// transaction, also moves each claimed queued task to submitting, the
// checkpoint a submit needs before its engine is called (a crash after it
// leaves the task in submitting: docs/architecture.md). The tasks come
// back with the status they had before the claim, and Checkpointed set on
// those it moved, so the submit step writes no checkpoint of its own: one
// commit less on each task's way. The same transaction writes the start
// event of each prediction it moves (webhook.go, "Prediction events").
// Without it the workers claim with ClaimTasks and the submit step writes
// its checkpoint itself, and no prediction sends start.
type StepClaimer interface {
	ClaimSteps(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*Task, error)
}

// LeasedCreator is an optional Store ability: when CreatesLeased reports
// true, CreateTask of a task with a LeaseToken writes the task already
// claimed, in its one row: the status given (submitting, the checkpoint
// before a submit), LeaseToken, LeaseUntil and Attempts, as ClaimSteps
// would have written them. The service then hands a new task straight to
// a free step slot of its own process (handoff.go) instead of leaving it
// queued for a claim: one write and one read less per task. Without it
// (or when it reports false) every task is created queued.
type LeasedCreator interface {
	CreatesLeased() bool
}

// ProgressStore is an optional Store ability: it keeps the latest Report
// of each task (internal/sqlstore: table task_progress), and with it a
// prediction's logs event (webhook.go, "Prediction events"). Without it
// no report is kept, a task's progress reads as none and no prediction
// sends logs.
type ProgressStore interface {
	SaveProgress(ctx context.Context, taskID string, r *Report) error
	// FindProgress returns the task's latest report, nil when there is
	// none.
	FindProgress(ctx context.Context, taskID string) (*Report, error)
}

// UploadStore is the Store ability uploads need. internal/sqlstore has it;
// a Store without it refuses uploads.
type UploadStore interface {
	CreateUpload(ctx context.Context, u *Upload) error
	// FindUpload returns the upload with the URL token, or ENotFound when
	// there is none or it expired before now.
	FindUpload(ctx context.Context, token string, now time.Time) (*Upload, error)
	// ExpiredUploads returns up to limit uploads that expired before the time.
	ExpiredUploads(ctx context.Context, before time.Time, limit int) ([]*Upload, error)
	DeleteUpload(ctx context.Context, id string) error
}

// CostStore is the Store ability the cost sums need. Without it the sums
// are empty (Service.UpstreamCosts).
type CostStore interface {
	// UpstreamCosts sums the recorded succeeded tasks completed at or
	// after since, by model and provider, sorted by model then provider.
	UpstreamCosts(ctx context.Context, since time.Time) ([]ModelCost, error)
}

// SigningKeyStore is the Store ability signing keys need
// (internal/sqlstore: table signing_keys). Without it no webhook is
// signed with a key pair: the attempts of a fal queue request's webhook
// fail, and the fal JWKS is an internal error.
type SigningKeyStore interface {
	// SigningKeys returns the stored keys, newest first, storing the key
	// fresh makes first when there is none (the first caller's wins a
	// race, or both are kept).
	SigningKeys(ctx context.Context, fresh func() (*SigningKey, error)) ([]*SigningKey, error)
}

// Presigner is an optional Blobs ability: a URL anyone can GET a stored
// file with until it expires (internal/blob.S3). Without it a large input
// goes upstream as a gengate-signed URL (Service.InputURLs.Base) or inline.
type Presigner interface {
	PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error)
}

// BlobLister is an optional Blobs ability: list keys under a prefix that
// were last written before a time. Without it the purge leaves the inputs
// of requests that crashed before creating their task (sweepInputs).
type BlobLister interface {
	List(ctx context.Context, prefix string, before time.Time) ([]string, error)
}

// PartialSweeper is an optional Blobs ability: remove what writes cut
// short by a crash left behind (temporary files, incomplete multipart
// uploads) that began before a time. Without it the purge leaves them.
type PartialSweeper interface {
	SweepPartial(ctx context.Context, before time.Time) (int, error)
}

// InputChecker is the Fetcher ability uploads and stored files need: check
// bytes at hand, or a stored file, as Fetch checks a downloaded file,
// within the same limits. Without it uploads are refused and an input URL
// naming one of this server's files is fetched over HTTP like any other.
type InputChecker interface {
	// Check checks data as an input of the kind.
	Check(data []byte, kind InputKind) (Input, error)
	// CheckFile checks a stored file of size bytes (read with open, as
	// often as it needs) as an input of the kind without holding it; the
	// Input has no Data.
	CheckFile(ctx context.Context, open func(context.Context) (io.ReadCloser, error), size int64, kind InputKind) (Input, error)
	// MaxBytes is the largest input of the kind, in bytes.
	MaxBytes(kind InputKind) int64
}

// Validator is an optional Engine ability: it says before any charge
// whether the engine can run a job on its route (Job.Route), with an *Error
// of code UNSUPPORTED_MODEL_OPTION naming the field it cannot do. Inputs
// hold the fetched files, or only their names when validation runs before
// fetching. Without it every job is taken to be one the engine can run,
// until its Submit says otherwise.
type Validator interface {
	Validate(job Job) error
}

// Admitter is an optional Engine ability: an engine whose own capacity is
// bounded (CPU work in this process) refuses a new task, after its inputs
// are checked and before any charge, with an *Error of code OVERLOADED
// when it is full. Forget gives back the place of a task that was then not
// created; the engine ends an admission itself when the job finishes.
// Without it the engine's tasks are never refused for its capacity.
type Admitter interface {
	Admit(job Job) error
	Forget(taskID string)
}

// IdempotentSubmitter is an optional Engine ability: Submit may be called
// again for a task whose earlier submit has an unknown outcome, because the
// upstream takes gengate's task id and a repeated Submit attaches to the
// work that already exists under it instead of starting more (ComfyUI's
// client-chosen prompt_id). Such tasks are retried, not sent to review.
// Without it (or when it says false) a non-repeatable engine's unknown
// submit is looked for (Finder) or held for review.
type IdempotentSubmitter interface {
	IdempotentSubmit() bool
}

// Finder is an optional Engine ability: after a submit whose outcome is
// unknown (its answer was lost, or the provider answered an error that does
// not say whether it took the work: a 5xx its own client would not send
// again), it looks for the work that submit may have started, where the
// provider lets a client list or look up its recent work (Replicate's list
// of predictions, ComfyUI's queue and history). The service follows the
// work found instead of holding the task for review; it never submits the
// task again. since is a time no later than the submit began.
//
// Find returns the upstream id of the work, "" when the provider shows no
// work of the job, or an error when it could not tell: a definite one
// (code GENERATION_FAILED: say, two works match) sends the task to review
// at once; others are retried, then the task goes to review. Without it a
// submit with an unknown outcome holds the task for review.
type Finder interface {
	Find(ctx context.Context, job Job, since time.Time) (upstreamID string, err error)
}

// Canceler is an optional Engine ability: it asks the upstream to stop work
// that gengate has given up on (past its deadline), and a client's cancel
// when the engine is no ConfirmingCanceler. Best effort. Without it the
// upstream work runs on and gengate delivers nothing of it.
type Canceler interface {
	Cancel(ctx context.Context, job Job, upstreamID string) error
}

// ConfirmingCanceler is an optional Engine ability: it stops the upstream
// work of a task a client cancels and says whether the provider confirms
// that nothing was charged. An error means the upstream could not be asked
// (nothing is known to have changed). Each engine's package documents what
// it takes as confirmation. Without it a client's cancel of running work
// is answered without a refund (Canceler, if any, is still asked).
type ConfirmingCanceler interface {
	CancelWork(ctx context.Context, job Job, upstreamID string) (Cancellation, error)
}

// InputStreamer is an optional Engine ability: StreamsInputs reports that
// the engine reads its Jobs' inputs with Input.Reader (or ReadAll), so a
// Large one may come without Data. Without it every input is read whole
// into the Job's Data.
type InputStreamer interface {
	StreamsInputs() bool
}

// RegistryChecker is an optional Engine ability: it asks the provider's
// own model listing about upstream ids and returns a status for each it
// could tell (an id it leaves out is unchecked). An error means the
// listing could not be read: nothing is concluded. Without it the
// engine's routes are reported unchecked and stay in routing.
type RegistryChecker interface {
	CheckRegistry(ctx context.Context, upstreams []string) (map[string]RouteStatus, error)
}

// LatencyHinter is an optional Engine ability: an engine whose latency
// differs from the catalog's typical figure says so (the sandbox's
// --sandbox-delay). Without it RetryAfter uses the catalog's figure.
type LatencyHinter interface {
	TypicalLatency(modelID string) time.Duration
}

// PaymentEventVerifier is an optional ability of Payments: it checks a
// delivered event's signature and reads it. Without it payment webhooks
// are answered ENotFound.
type PaymentEventVerifier interface {
	// VerifyEvent checks payload against its signature header and returns
	// what it means; an ESignature error when the signature does not hold.
	VerifyEvent(payload []byte, signature string) (PaymentEvent, error)
}
