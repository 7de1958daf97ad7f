package gengate

import (
	"context"
	"time"
)

// AccountStore is the part of Store behind the account area: members,
// sessions, login links, key management, and the paged lists of an
// account's ledger, usage and tasks. Every list is newest first and paged
// by a position that never moves (an id, or a creation time and id), so a
// page never repeats or skips an entry when others are added meanwhile.
type AccountStore interface {
	// CreateAccountWithMember creates an account, grants it credits and
	// adds its first member in one transaction; EEmailTaken when the email
	// is in use.
	CreateAccountWithMember(ctx context.Context, a *Account, credits int, m *Member) error
	// CreateMember adds a member to an existing account; EEmailTaken when
	// the email is in use.
	CreateMember(ctx context.Context, m *Member) error
	FindMember(ctx context.Context, id string) (*Member, error)
	// FindMemberByEmail takes a normalized email (NormalizeEmail).
	FindMemberByEmail(ctx context.Context, email string) (*Member, error)
	ListMembers(ctx context.Context, accountID string) ([]Member, error)
	// HasOperator reports whether the account has a member with the
	// operator role.
	HasOperator(ctx context.Context, accountID string) (bool, error)
	// RenameAccount sets the account's name; ENotFound for an unknown
	// account.
	RenameAccount(ctx context.Context, accountID, name string) error

	CreateSession(ctx context.Context, s *Session) error
	// FindSession returns the unexpired session with the token hash and
	// its member, or ENotFound.
	FindSession(ctx context.Context, tokenHash string, now time.Time) (*Session, *Member, error)
	// ExtendSession records a use of the session at seen and moves its
	// expiry to until.
	ExtendSession(ctx context.Context, id string, seen, until time.Time) error
	DeleteSession(ctx context.Context, tokenHash string) error
	// ListMemberSessions returns up to limit of the member's sessions
	// unexpired at now, newest first, after the cursor (a creation time
	// and id).
	ListMemberSessions(ctx context.Context, memberID string, now time.Time, after TaskCursor, limit int) ([]Session, error)
	// DeleteMemberSession ends the member's session with the id;
	// ENotFound for another member's session, an unknown or an expired
	// one.
	DeleteMemberSession(ctx context.Context, memberID, id string, now time.Time) error
	// SetPassword sets the member's password and ends every session of
	// the member but keepSession, in one transaction.
	SetPassword(ctx context.Context, memberID, passwordHash, keepSession string) error
	// DeleteMemberSessions ends every session of the member and returns
	// how many there were.
	DeleteMemberSessions(ctx context.Context, memberID string) (int, error)
	// PurgeSessions deletes sessions that have expired and login links
	// that expired (used or not) a day or more before now.
	PurgeSessions(ctx context.Context, now time.Time) error

	// CreateLoginLink stores a link and voids the member's unused ones,
	// in one transaction: only the newest link handed out works.
	CreateLoginLink(ctx context.Context, l *LoginLink) error
	// UseLoginLink marks the unused, unexpired link with the token hash
	// used and returns its member, atomically: of two concurrent uses one
	// wins. With passwordHash not empty it also sets the member's password
	// and ends every session of the member, in the same transaction.
	// ENotFound when no such link can be used.
	UseLoginLink(ctx context.Context, tokenHash string, now time.Time, passwordHash string) (*Member, error)

	// ListAPIKeys returns up to limit of the account's keys, revoked ones
	// too, newest first, after the cursor.
	ListAPIKeys(ctx context.Context, accountID string, after TaskCursor, limit int) ([]APIKey, error)
	// CreateAccountKey stores a key if its account has fewer than max
	// unrevoked keys (KEY_LIMIT_REACHED otherwise), atomically.
	CreateAccountKey(ctx context.Context, k *APIKey, max int) error
	// FindAPIKey returns the key with the id, revoked or not.
	FindAPIKey(ctx context.Context, id string) (*APIKey, error)
	// UpdateAPIKey writes a key's name and spend limit, if the key belongs
	// to k.AccountID (ENotFound otherwise).
	UpdateAPIKey(ctx context.Context, k *APIKey) error
	// RevokeAccountKey revokes the account's key with the id; ENotFound for
	// another account's key, an unknown one or one already revoked.
	RevokeAccountKey(ctx context.Context, accountID, id string, now time.Time) error
	// TouchAPIKey records that the key was used at now.
	TouchAPIKey(ctx context.Context, id string, now time.Time) error

	// LedgerPage returns up to limit of the account's entries with ids
	// below before (0: from the newest), newest first, each with its
	// BalanceAfter.
	LedgerPage(ctx context.Context, accountID string, before int64, limit int) ([]LedgerEntry, error)
	// Usage sums the account's charges, net of their refunds, per model
	// since a time, the most credits first.
	Usage(ctx context.Context, accountID string, since time.Time) ([]ModelUsage, error)
	// DailyUsage is Usage per UTC day, model and key, oldest day first.
	DailyUsage(ctx context.Context, accountID string, since time.Time) ([]DayUsage, error)
	// ListAccountTasks returns the account's tasks matching the filter,
	// newest first, with their outputs.
	ListAccountTasks(ctx context.Context, accountID string, f TaskFilter) ([]*Task, error)
	// ListAccounts returns accounts whose id, name or member email
	// contains q (all when empty), newest first, after the cursor.
	ListAccounts(ctx context.Context, q string, after AccountCursor, limit int) ([]Account, error)
	// ListReview returns tasks in needs_review, oldest first, after the
	// cursor (a creation time and id).
	ListReview(ctx context.Context, after TaskCursor, limit int) ([]*Task, error)
}

// DayUsage is what an account spent on one model with one key (KeyID ""
// for a session, or a task purged since) on one UTC day.
type DayUsage struct {
	Day     time.Time
	ModelID string
	KeyID   string
	Tasks   int
	Credits int
}

// ModelUsage is what an account spent on one model.
type ModelUsage struct {
	ModelID string
	Tasks   int
	Credits int
}

// TaskCursor is a position in a list of tasks: the creation time and id of
// the last task shown. The zero cursor is the start of the list.
type TaskCursor struct {
	CreatedAt time.Time
	ID        string
}

// AccountCursor is a position in a list of accounts, like TaskCursor.
type AccountCursor = TaskCursor

// TaskFilter selects and pages an account's tasks.
type TaskFilter struct {
	// Status is a public status: processing, succeeded, failed,
	// needs_review or canceled; empty for all.
	Status  string
	ModelID string
	Type    string
	// Test, when set, keeps only the tasks of test keys (true) or only
	// the others (false).
	Test  *bool
	After TaskCursor
	Limit int
}
