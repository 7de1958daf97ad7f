package gengate

import (
	"context"
	"fmt"
	"time"
)

// This file holds the rules of an account holder's own keys: create,
// rename, limit, revoke; the last-used time; the daily spend limit.

// KeyTouchInterval is how often at most a key's last-used time is written:
// a busy key costs one write a minute, not one per request.
const KeyTouchInterval = time.Minute

// MaxSpendLimit bounds a key's daily spend limit.
const MaxSpendLimit = 1 << 40

// UTCDay numbers the UTC day of t (days since the Unix epoch): the period
// a key's spend limit counts.
func UTCDay(t time.Time) int64 { return t.UTC().Unix() / 86400 }

// SpentOn returns what the key has spent on the UTC day of now.
func (k *APIKey) SpentOn(now time.Time) int {
	if k.SpentDay != UTCDay(now) {
		return 0
	}
	return k.SpentToday
}

// SpendLimitExceeded is the error for a generation a key's daily limit does
// not cover.
func SpendLimitExceeded(k *APIKey, cost int, now time.Time) error {
	return &Error{Code: ESpendLimit,
		Message: "this generation would take the key over its daily spend limit",
		Extra: map[string]any{"spendLimit": k.SpendLimit, "spentToday": k.SpentOn(now), "requiredCredits": cost,
			"keyId": k.ID}}
}

func checkSpendLimit(limit int) error {
	if limit < 1 || limit > MaxSpendLimit {
		return &Error{Code: EInvalid, Message: "spendLimit must be a whole number of credits ≥ 1, or null for none",
			Fields: []FieldError{{Field: "spendLimit", Code: FieldValue, Message: "must be ≥ 1, or null for none"}}}
	}
	return nil
}

// DefaultMaxKeys is how many unrevoked keys an account may hold
// (--max-keys).
const DefaultMaxKeys = 100

// Key error codes.
const (
	// EKeyWider refuses a key, or a change to one, that would be wider
	// than the key that asks for it: a key limited to N credits a day
	// cannot lift or raise a limit, its own or another key's, above N.
	EKeyWider = "KEY_WIDER_THAN_CALLER"
	// EKeyLimit refuses a key over the account's cap of unrevoked keys.
	EKeyLimit = "KEY_LIMIT_REACHED"
)

// KeyLimitReached is the error for a key over the account's cap.
func KeyLimitReached(max int) error {
	return &Error{Code: EKeyLimit, Message: fmt.Sprintf("this account has %d active keys, the most it may have; revoke one first", max),
		Extra: map[string]any{"maxKeys": max}}
}

// callerLimit is the widest spend limit the caller may give a key: a key
// with a daily limit gives at most that limit (0: the caller is not
// limited: a session, the CLI, or a key without a limit).
func callerLimit(caller *APIKey) int {
	if caller == nil || caller.ID == "" {
		return 0
	}
	return caller.SpendLimit
}

func keyWider(max int) error {
	return &Error{Code: EKeyWider,
		Message: fmt.Sprintf("the key making this request is limited to %d credits a day; it cannot give a key a wider limit", max),
		Fields:  []FieldError{{Field: "spendLimit", Code: FieldValue, Message: fmt.Sprintf("must be at most %d", max)}},
		Extra:   map[string]any{"maxSpendLimit": max}}
}

// MintKey makes a new key for the caller's account through the API: never
// an operator key, never wider than the caller (a key with a spend limit
// makes keys limited to at most its own limit; without spendLimit the new
// key gets the caller's), and not beyond the account's cap of unrevoked
// keys (MaxKeys). spendLimit nil asks for no limit; test makes a test key
// (testkeys.go), and a test key makes only test keys.
func (s *Service) MintKey(ctx context.Context, caller *APIKey, name string, spendLimit *int, test bool) (string, *APIKey, error) {
	if caller.ID != "" && caller.Test && !test {
		// A test key spends nothing; a live key it made would spend the
		// account's credits.
		return "", nil, &Error{Code: EKeyWider, Message: "a test key makes only test keys",
			Fields: []FieldError{{Field: "test", Code: FieldValue, Message: "must be true when a test key asks"}}}
	}
	limit := 0
	if spendLimit != nil {
		if err := checkSpendLimit(*spendLimit); err != nil {
			return "", nil, err
		}
		limit = *spendLimit
	}
	if max := callerLimit(caller); max > 0 {
		if spendLimit == nil {
			limit = max
		} else if limit > max {
			return "", nil, keyWider(max)
		}
	}
	if err := checkName(name, "name"); err != nil {
		return "", nil, err
	}
	secret, k := newAPIKey(caller.AccountID, name, s.now(), test)
	k.SpendLimit = limit
	maxKeys := s.MaxKeys
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	if err := s.Store.CreateAccountKey(ctx, k, maxKeys); err != nil {
		return "", nil, err
	}
	s.log().InfoContext(ctx, "key created", "account", k.AccountID, "keyId", k.ID, "prefix", k.Prefix, "test", test, "by", caller.ID)
	return secret, k, nil
}

// CreateKey makes a new key for an account, with a spend limit (0: none),
// and returns the secret, handed out once: the operator's way (no cap, no
// caller to narrow it). API callers go through MintKey.
func (s *Service) CreateKey(ctx context.Context, accountID, name string, spendLimit int) (string, *APIKey, error) {
	return s.createKey(ctx, accountID, name, spendLimit, false)
}

func (s *Service) createKey(ctx context.Context, accountID, name string, spendLimit int, test bool) (string, *APIKey, error) {
	if err := checkName(name, "name"); err != nil {
		return "", nil, err
	}
	if spendLimit != 0 {
		if err := checkSpendLimit(spendLimit); err != nil {
			return "", nil, err
		}
	}
	secret, k := newAPIKey(accountID, name, s.now(), test)
	k.SpendLimit = spendLimit
	if err := s.Store.CreateAPIKey(ctx, k); err != nil {
		return "", nil, err
	}
	s.log().InfoContext(ctx, "key created", "account", accountID, "keyId", k.ID, "prefix", k.Prefix, "test", test)
	return secret, k, nil
}

// KeyChange is a change to a key: nil fields stay as they are; a
// SpendLimit of 0 removes the limit.
type KeyChange struct {
	Name       *string
	SpendLimit *int
}

// UpdateKey renames or limits one of the caller's account's keys. A
// caller that is a key with a spend limit cannot lift a limit or set one
// above its own, on itself or on any other key (EKeyWider).
func (s *Service) UpdateKey(ctx context.Context, caller *APIKey, id string, c KeyChange) (*APIKey, error) {
	accountID := caller.AccountID
	if max := callerLimit(caller); max > 0 && c.SpendLimit != nil && (*c.SpendLimit == 0 || *c.SpendLimit > max) {
		return nil, keyWider(max)
	}
	k, err := s.accountKey(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	if c.Name != nil {
		if err := checkName(*c.Name, "name"); err != nil {
			return nil, err
		}
		k.Name = *c.Name
	}
	if c.SpendLimit != nil {
		if *c.SpendLimit != 0 {
			if err := checkSpendLimit(*c.SpendLimit); err != nil {
				return nil, err
			}
		}
		k.SpendLimit = *c.SpendLimit
	}
	if err := s.Store.UpdateAPIKey(ctx, k); err != nil {
		return nil, err
	}
	s.keysChanged()
	return s.accountKey(ctx, accountID, id)
}

// RevokeKey revokes one of the account's keys: from then on this process
// refuses it, and every other process within its --key-refresh (the
// change counter the store bumps with the revocation; keycache.go).
func (s *Service) RevokeKey(ctx context.Context, accountID, id string) error {
	if err := s.Store.RevokeAccountKey(ctx, accountID, id, s.now()); err != nil {
		return err
	}
	s.keysChanged()
	s.log().InfoContext(ctx, "key revoked", "account", accountID, "keyId", id)
	return nil
}

// accountKey returns the account's key with the id; another account's key
// is ENotFound, like an unknown one.
func (s *Service) accountKey(ctx context.Context, accountID, id string) (*APIKey, error) {
	k, err := s.Store.FindAPIKey(ctx, id)
	if err == nil && k.AccountID != accountID {
		err = Errorf(ENotFound, "no key %s", id)
	}
	return k, err
}

// keysChanged drops this process's copies of keys after it changed one.
func (s *Service) keysChanged() {
	if s.Keys != nil {
		s.Keys.Changed()
	}
}

// touchKey records a key's use, at most once per KeyTouchInterval (and,
// with a KeyCache, by one request of those that find it due). A failure to
// record it never fails the request.
func (s *Service) touchKey(ctx context.Context, k *APIKey) {
	now := s.now()
	if now.Sub(k.LastUsedAt) < KeyTouchInterval {
		return
	}
	if s.Keys != nil && !s.Keys.claimTouch(k, now) {
		return // another request records it
	}
	if err := s.Store.TouchAPIKey(ctx, k.ID, now); err != nil {
		s.log().WarnContext(ctx, "record key use", "keyId", k.ID, "err", err)
		return
	}
	k.LastUsedAt = now
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
