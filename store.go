package gengate

import (
	"context"
	"io"
	"time"
)

// Store persists accounts, keys, the ledger, tasks and creations. Each
// method is one transaction. internal/sqlstore implements it on SQLite and
// PostgreSQL; the business rules stay here, the store holds the few atomic
// statements they need.
type Store interface {
	AccountStore // accounts_store.go: members, sessions, links, keys, lists
	// CreateAccount creates an account and grants it credits (a ledger
	// grant entry) in one transaction.
	CreateAccount(ctx context.Context, a *Account, credits int) error
	CountAccounts(ctx context.Context) (int, error)
	FindAccount(ctx context.Context, id string) (*Account, error)
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// FindAPIKeyByHash returns the unrevoked key with the hash, or an
	// ENotFound error.
	FindAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// AwaitConn returns once the store could serve a request's statements
	// now, and an EOverloaded error when it has had no connection free for
	// longer than its bound (PostgreSQL's pool). The API asks it before
	// every request that reads the database, before the request reads or
	// writes anything.
	AwaitConn(ctx context.Context) error
	// KeysGeneration returns a number that changes (in every process's
	// view) whenever any key is revoked, renamed, limited or deleted, in
	// the transaction of the change; KeyCache polls it.
	KeysGeneration(ctx context.Context) (int64, error)
	// RevokeAPIKey revokes the key whose id or display prefix is given.
	RevokeAPIKey(ctx context.Context, idOrPrefix string, now time.Time) error
	// Grant adds credits (negative to take away, never below zero) with a
	// ledger entry and returns the new balance.
	Grant(ctx context.Context, accountID string, credits int, note string, now time.Time) (int, error)
	// Ledger returns an account's ledger entries, oldest first.
	Ledger(ctx context.Context, accountID string) ([]LedgerEntry, error)
	// CreateRedemptionCodes stores fresh codes (codes.go).
	CreateRedemptionCodes(ctx context.Context, codes []RedemptionCode) error
	// RedeemCode marks the code with the hash used by the account and
	// grants its credits (a ledger entry of kind redemption) in one
	// transaction, only if it is unused and unexpired at now; it returns
	// the balance and the credits granted. ECodeUnknown, ECodeUsed or
	// ECodeExpired otherwise, nothing changed.
	RedeemCode(ctx context.Context, hash, accountID string, now time.Time) (balance, credits int, err error)
	// GrantPurchase records a paid checkout and grants its credits (a
	// ledger entry of kind purchase naming the session) in one
	// transaction, unless the session is recorded already: then it changes
	// nothing and reports false (topup.go).
	GrantPurchase(ctx context.Context, p Purchase, now time.Time) (granted bool, balance int, err error)
	// RefundPurchase applies a refund to the purchase paid by its payment
	// intent, in one transaction: the credits the refunds call for
	// (RefundCredits) beyond those already counted are taken back as far as
	// the balance allows (kind purchase_refund); Found false when no
	// purchase has the payment.
	RefundPurchase(ctx context.Context, r PurchaseRefund, now time.Time) (RefundOutcome, error)
	// Purchases lists purchases, newest first; with unrecovered only those
	// whose refunds could not all be taken back.
	Purchases(ctx context.Context, unrecovered bool, limit int) ([]PurchaseRecord, error)

	// CreateTask stores a new task in one transaction: if the task has an
	// idempotency key already used by the account it changes nothing and
	// returns the existing task with Existing set; otherwise it debits
	// t.Cost only if the balance covers it (an EInsufficient error with the
	// balance otherwise), records the charge and inserts the task, which is
	// also its queue item.
	CreateTask(ctx context.Context, t *Task) (CreateResult, error)
	FindTask(ctx context.Context, id string) (*Task, error)
	FindTaskByIdempotencyKey(ctx context.Context, accountID, key string) (*Task, error)
	// ClaimTask leases one active task whose next step is due and whose
	// lease has run out (the task with id when id is not empty, due or
	// not), counts the attempt, sets a fresh LeaseToken (starting with
	// owner) and returns it; nil when there is none.
	ClaimTask(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (*Task, error)
	// ClaimTasks leases up to limit due tasks whose leases have run out, in
	// one statement, as ClaimTask does one; earliest due first.
	ClaimTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*Task, error)
	// NextDue returns when the earliest active task whose lease has run
	// out is due (false when there is none). It only reads: idle workers
	// ask it rather than try a claim.
	NextDue(ctx context.Context, now time.Time) (time.Time, bool, error)
	// ExtendLease moves the end of the lease the claim with token holds on
	// the active task to until; EConflict when the claim no longer holds.
	ExtendLease(ctx context.Context, id, token string, until time.Time) error
	// SaveStep writes a task's progress (status, upstream id, run time,
	// attempts, review reason, error) if t.LeaseToken still holds its lease; release
	// ends the lease. With an empty LeaseToken it is an operator's reopening
	// of a needs_review task, and applies only if the task is still in
	// review. It fails with EConflict otherwise.
	SaveStep(ctx context.Context, t *Task, release bool) error
	// FinishTask moves a task out of the active states, under the same
	// lease rule as SaveStep: to succeeded with its creations, to failed
	// with a refund of refund credits, or to needs_review. The refund ledger
	// entry, the webhook events of the state (webhook.go) and the state
	// change commit together.
	FinishTask(ctx context.Context, t *Task, refund int) error
	// ListTasks returns tasks in a status, oldest first.
	ListTasks(ctx context.Context, status Status, limit int) ([]*Task, error)
	// FindCreation returns the creation with the URL token.
	FindCreation(ctx context.Context, token string) (*Creation, error)
	// Exclusive runs f unless another process of the cluster runs a job of
	// the same name now, and reports whether it ran: periodic jobs run
	// once per cluster, not once per process.
	Exclusive(ctx context.Context, name string, f func(context.Context) error) (bool, error)
	// PurgeTasks deletes task records (and with them their idempotency keys)
	// completed before the time; creations stay. It returns how many went.
	PurgeTasks(ctx context.Context, completedBefore time.Time) (int, error)
	// WebhookSecret returns the account's webhook signing keys, storing
	// fresh as its secret when the account has none yet. Secrets are
	// given and returned sealed (SecretBox).
	WebhookSecret(ctx context.Context, accountID, fresh string, now time.Time) (WebhookKeys, error)
	// RotateWebhookSecret makes fresh the current secret of the account
	// (endpointID "") or of its endpoint, keeping the current one as the
	// previous until the time; ENotFound when there is none.
	RotateWebhookSecret(ctx context.Context, accountID, endpointID, fresh string, until time.Time) error
	// CreateWebhookEndpoint stores a new endpoint, EConflict when the
	// account already has max.
	CreateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint, max int) error
	// WebhookEndpoints lists the account's endpoints, oldest first;
	// WebhookEndpoint returns one (ENotFound for another account's).
	WebhookEndpoints(ctx context.Context, accountID string) ([]*WebhookEndpoint, error)
	WebhookEndpoint(ctx context.Context, accountID, id string) (*WebhookEndpoint, error)
	// DeleteWebhookEndpoint deletes the account's endpoint with its
	// events and their attempts (ENotFound for another account's).
	DeleteWebhookEndpoint(ctx context.Context, accountID, id string) error
	// WebhookAttempts lists the attempts of the account's endpoint's
	// events, newest first, after the cursor (nil: from the newest), at
	// most limit.
	WebhookAttempts(ctx context.Context, accountID, endpointID string, after *TaskCursor, limit int) ([]WebhookAttemptRecord, error)
	// ReplayWebhookEvent makes the account's event pending and due at
	// now, with a fresh retry schedule (ENotFound for another account's).
	ReplayWebhookEvent(ctx context.Context, accountID, eventID string, now time.Time) (*WebhookEvent, error)
	// WebhookEvents returns the webhook events of the account's task,
	// oldest first, and their attempts by event id.
	WebhookEvents(ctx context.Context, accountID, taskID string) ([]*WebhookEvent, map[string][]WebhookAttempt, error)
}

// CreateResult is what CreateTask did.
type CreateResult struct {
	Task     *Task
	Existing bool
	Balance  int
}

// Blobs stores files by key: fetched inputs and finished outputs.
// internal/blob implements it on a local directory (atomic writes) and on
// S3.
type Blobs interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
	// PutStream copies r to its end under key, atomically: readers see the
	// old file or the whole new one, never part of it, and a copy that
	// fails (r's error included) leaves nothing new. It returns the bytes
	// written. Outputs streamed from upstreams are stored with it.
	PutStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	// Get reads a whole file (inputs, which are small); a missing one is
	// an ENotFound error.
	Get(ctx context.Context, key string) ([]byte, error)
	// Open opens a file for streaming (outputs served at /files): reads
	// and seeks cost no more than the bytes asked for, so a range or a
	// HEAD does not read the file. A missing one is an ENotFound error.
	// The caller closes it.
	Open(ctx context.Context, key string) (BlobFile, error)
	Delete(ctx context.Context, key string) error
}

// BlobFile is a stored file open for reading.
type BlobFile interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}
