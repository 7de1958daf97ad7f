package gengate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Account holds a credit balance and owns API keys, tasks and creations.
type Account struct {
	ID        string
	Name      string
	Balance   int
	CreatedAt time.Time
}

// RenameAccount gives the member's account a new name, checked by
// CheckAccountName, and returns the account. The account's owner or an
// operator may, signed in: a member of another role may not, and neither
// may an API key, which is handed to programs (FORBIDDEN both).
func (s *Service) RenameAccount(ctx context.Context, m *Member, name string) (*Account, error) {
	if !m.ManagesAccount() {
		if m == nil {
			return nil, Errorf(EForbidden, "an account is renamed by its owner, signed in (an API key cannot)")
		}
		return nil, Errorf(EForbidden, "only the account's owner can rename it")
	}
	name, err := CheckAccountName(name)
	if err != nil {
		return nil, err
	}
	if err := s.Store.RenameAccount(ctx, m.AccountID, name); err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "account renamed", "account", m.AccountID, "member", m.ID)
	return s.Store.FindAccount(ctx, m.AccountID)
}

// CheckAccountName returns the form an account's new name is stored in,
// or an INVALID_REQUEST error on field "name": trimmed of surrounding
// white space, not empty, at most MaxNameLength bytes, valid UTF-8 without
// control characters (a name shows in one line of the console and of the
// CLI's tables) or bidirectional overrides and isolates (which would make
// the name read otherwise than it is written).
func CheckAccountName(name string) (string, error) {
	n := strings.TrimSpace(name)
	bad := func(code, msg string) error {
		return &Error{Code: EInvalid, Message: "name " + msg, Fields: []FieldError{{Field: "name", Code: code, Message: msg}}}
	}
	switch {
	case n == "":
		return "", bad(FieldRequired, "must not be empty")
	case len(n) > MaxNameLength:
		return "", bad(FieldTooLong, fmt.Sprintf("must be at most %d bytes", MaxNameLength))
	case !utf8.ValidString(n) || strings.IndexFunc(n, func(r rune) bool {
		return unicode.IsControl(r) || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
	}) >= 0:
		return "", bad(FieldValue, "must be one line of text, without control characters")
	}
	return n, nil
}

// APIKey authenticates requests for an account. Only its SHA-256 is stored.
type APIKey struct {
	ID        string
	AccountID string
	Name      string
	Prefix    string // shown to operators, e.g. "gg_live_AbC1"
	Hash      string // hex SHA-256 of the whole key
	CreatedAt time.Time
	RevokedAt time.Time
	// LastUsedAt is when the key last authenticated a request, written at
	// most once a minute (KeyTouchInterval).
	LastUsedAt time.Time
	// SpendLimit caps the credits the key's generations may charge per UTC
	// day; 0 means no limit. SpentDay is the UTC day (days since the Unix
	// epoch) SpentToday counts; see SpentOn.
	SpendLimit int
	SpentDay   int64
	SpentToday int
	// Test marks a test key (TestKeyPrefix): its generations run on the
	// sandbox and charge nothing (testkeys.go).
	Test bool
	// Operator gives the key the operator's powers (/api/v1/admin). Only
	// the CLI makes such keys (gengate keys create --operator); a key made
	// through the API never is one, whoever makes it.
	Operator bool
}

// KeyPrefix starts every API key; TestKeyPrefix, of the same length,
// starts every test key.
const (
	KeyPrefix     = "gg_live_"
	TestKeyPrefix = "gg_test_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewKeySecret returns a fresh API key: KeyPrefix and 32 random base62
// characters.
func NewKeySecret() string { return newKeySecret(KeyPrefix) }

func newKeySecret(prefix string) string {
	return appendSecret([]byte(prefix), rand.Read)
}

// appendSecret appends 32 base62 characters drawn from read (crypto/rand's
// Read) to b: each from one random byte's low six bits, bytes whose bits
// make 62 or 63 skipped. That is the draw crypto/rand.Int(rand.Reader, 62)
// made, one byte at a time, with a big.Int each; reading the bytes 48 at a
// time made a file token (one per output) 10 µs cheaper.
func appendSecret(b []byte, read func([]byte) (int, error)) string {
	want := len(b) + 32
	var buf [48]byte
	for len(b) < want {
		if _, err := read(buf[:]); err != nil {
			panic("gengate: crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			if c &= 63; c < 62 && len(b) < want {
				b = append(b, base62[c])
			}
		}
	}
	return string(b)
}

// NewAPIKey makes a fresh key for an account: the secret to hand to its
// holder once, and the record to store, which keeps only the secret's hash
// and a short display prefix.
func NewAPIKey(accountID, name string, now time.Time) (string, *APIKey) {
	return newAPIKey(accountID, name, now, false)
}

// NewTestAPIKey is NewAPIKey for a test key (TestKeyPrefix).
func NewTestAPIKey(accountID, name string, now time.Time) (string, *APIKey) {
	return newAPIKey(accountID, name, now, true)
}

func newAPIKey(accountID, name string, now time.Time, test bool) (string, *APIKey) {
	prefix := KeyPrefix
	if test {
		prefix = TestKeyPrefix
	}
	secret := newKeySecret(prefix)
	return secret, &APIKey{ID: NewID(), AccountID: accountID, Name: name,
		Prefix: DisplayPrefix(secret), Hash: HashKey(secret), CreatedAt: now, Test: test}
}

// DisplayPrefix is the part of a key shown to operators and accepted by
// "gengate keys revoke": KeyPrefix and the next 6 characters.
func DisplayPrefix(secret string) string { return secret[:min(len(secret), len(KeyPrefix)+6)] }

// HashKey returns the stored form of an API key.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LedgerEntry is one line of an account's append-only credit ledger. The
// balance always equals the sum of its entries.
type LedgerEntry struct {
	ID        int64
	AccountID string
	TaskID    string // empty for grants and adjustments
	Kind      string
	Amount    int // positive adds credits, negative spends them
	Note      string
	CreatedAt time.Time
	// BalanceAfter is the balance once this entry applied: the sum of the
	// account's entries up to and including it.
	BalanceAfter int
}

// Ledger entry kinds. A task has at most one charge and one refund: the
// store enforces it with a unique constraint.
const (
	LedgerGrant      = "grant"
	LedgerCharge     = "charge"
	LedgerRefund     = "refund"
	LedgerAdjustment = "adjustment"
)

// NewID returns a random UUID (version 4) string.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("gengate: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuidString(b)
}

// uuidString is the text form of a UUID: 8-4-4-4-12 lower-case hex digits.
func uuidString(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// NewToken returns a random URL-safe token of 32 base62 characters
// (about 190 bits), used in output file URLs.
func NewToken() string { return NewKeySecret()[len(KeyPrefix):] }
