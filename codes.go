package gengate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"
)

// This file holds the rules of redemption codes: an operator makes codes
// worth some credits (gengate codes create); an account holder redeems one
// (POST /api/v1/account/redeem) and gets its credits. A code is used once
// ever: the store marks it and grants its credits in one transaction, so of
// concurrent redemptions exactly one wins. Only a code's SHA-256 is stored:
// a code carries 80 random bits, so no slow hash is needed to make a stolen
// table useless.

// Error codes of a refused redemption.
const (
	ECodeUnknown = "CODE_UNKNOWN"
	ECodeUsed    = "CODE_USED"
	ECodeExpired = "CODE_EXPIRED"
)

// Ledger kinds of credits that were sold: a redeemed code, a card top-up,
// and a top-up taken back when its payment was refunded.
const (
	LedgerRedemption     = "redemption"
	LedgerPurchase       = "purchase"
	LedgerPurchaseRefund = "purchase_refund"
)

// Bounds of codes: the credits one code grants, how many one command
// makes.
const (
	MaxCodeCredits = 1 << 40
	MaxCodeCount   = 10000
)

// DefaultRedeemRate and DefaultRedeemBurst pace an account's redemption
// attempts (--redeem-rate-limit, --redeem-rate-burst): one a second, ten
// at once, so guessing codes is hopeless (80 bits) and slow besides.
const (
	DefaultRedeemRate  = 1.0
	DefaultRedeemBurst = 10
)

// RedemptionCode is a stored code: its hash, its worth, and its use.
type RedemptionCode struct {
	Hash       string
	Credits    int
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	RedeemedBy string    // the account, once used
	RedeemedAt time.Time
}

// codeAlphabet is Crockford's base32: no I, L, O or U, so a code read
// aloud or typed from paper has no look-alike letters.
const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewRedemptionCode returns a fresh code: "GG-" and four groups of four
// characters (16 × 5 = 80 random bits).
func NewRedemptionCode() string {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("gengate: crypto/rand failed: " + err.Error())
	}
	var b strings.Builder
	b.WriteString("GG")
	for i, c := range raw {
		if i%4 == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(codeAlphabet[c&31])
	}
	return b.String()
}

// HashCode returns the stored form of a code as typed: upper-cased, without
// spaces or dashes, with look-alike letters read as Crockford's digits.
func HashCode(code string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		switch r {
		case ' ', '-', '\t':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		b.WriteRune(r)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// CreateCodes makes count codes worth credits each, valid until expires
// (zero: forever), and returns them: shown once, stored hashed.
func (s *Service) CreateCodes(ctx context.Context, credits, count int, expires time.Time) ([]string, error) {
	if credits < 1 || credits > MaxCodeCredits {
		return nil, badCodeField("credits", fmt.Sprintf("must be a whole number from 1 to %d", MaxCodeCredits))
	}
	if count < 1 || count > MaxCodeCount {
		return nil, badCodeField("count", fmt.Sprintf("must be a whole number from 1 to %d", MaxCodeCount))
	}
	now := s.now()
	if !expires.IsZero() && !expires.After(now) {
		return nil, badCodeField("expires", "must be in the future")
	}
	codes := make([]string, count)
	rows := make([]RedemptionCode, count)
	for i := range codes {
		codes[i] = NewRedemptionCode()
		rows[i] = RedemptionCode{Hash: HashCode(codes[i]), Credits: credits, CreatedAt: now, ExpiresAt: expires}
	}
	if err := s.Store.CreateRedemptionCodes(ctx, rows); err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "redemption codes created", "count", count, "credits", credits)
	return codes, nil
}

func badCodeField(field, msg string) error {
	return &Error{Code: EInvalid, Message: field + " " + msg,
		Fields: []FieldError{{Field: field, Code: FieldValue, Message: msg}}}
}

// Redeem uses a code for the account and returns the new balance. Unknown,
// used and expired codes are refused each with its own code; attempts are
// paced per account (RedeemLimit), counted before the code is looked at.
func (s *Service) Redeem(ctx context.Context, accountID, code string) (int, error) {
	if s.RedeemLimit != nil {
		if d := s.RedeemLimit.Wait(accountID, s.now()); d > 0 {
			secs := int(math.Ceil(d.Seconds()))
			return 0, &Error{Code: ERateLimited,
				Message: fmt.Sprintf("too many redemption attempts for this account; retry in %d s", secs),
				Extra:   map[string]any{"retryAfter": secs}}
		}
	}
	code = strings.TrimSpace(code)
	if code == "" || len(code) > 64 {
		return 0, &Error{Code: EInvalid, Message: "code must be a redemption code",
			Fields: []FieldError{{Field: "code", Code: FieldRequired, Message: "a redemption code is required"}}}
	}
	balance, credits, err := s.Store.RedeemCode(ctx, HashCode(code), accountID, s.now())
	if err != nil {
		return 0, err
	}
	s.log().InfoContext(ctx, "code redeemed", "account", accountID, "credits", credits)
	return balance, nil
}
