package gengate

import (
	"strings"
	"time"
	"unicode"
)

// Member is a person who signs in to an account's area. An account has one
// or more; email is unique over the whole installation, compared
// case-insensitively (it is stored lower-cased).
type Member struct {
	ID        string
	AccountID string
	Email     string
	Role      string
	// PasswordHash is the argon2id PHC string, empty until a password is
	// set through a set-up link.
	PasswordHash string
	CreatedAt    time.Time
}

// Member roles. An operator's own account works like any other; an
// operator may also run the installation (the /api/v1/admin endpoints).
const (
	RoleOwner    = "owner"
	RoleOperator = "operator"
)

// Account-area error codes.
const (
	EInvalidCredentials = "INVALID_CREDENTIALS"
	EInvalidLink        = "INVALID_LINK"
	ESignupClosed       = "SIGNUP_CLOSED"
	EEmailTaken         = "EMAIL_TAKEN"
	ECSRF               = "CSRF_TOKEN_INVALID"
	EForbidden          = "FORBIDDEN"
	ESpendLimit         = "SPEND_LIMIT_EXCEEDED"
)

// MaxEmailLength is the longest email address accepted (RFC 5321).
const MaxEmailLength = 254

// NormalizeEmail returns the stored form of an email address (trimmed,
// lower-cased), or an INVALID_REQUEST error on field "email".
func NormalizeEmail(s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	local, domain, ok := strings.Cut(e, "@")
	bad := !ok || local == "" || domain == "" || strings.Contains(domain, "@") || len(e) > MaxEmailLength ||
		strings.IndexFunc(e, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
	if bad {
		return "", &Error{Code: EInvalid, Message: "email is not a valid address",
			Fields: []FieldError{{Field: "email", Code: FieldValue, Message: "must be an email address"}}}
	}
	return e, nil
}

// NewMember returns a member record for an account.
func NewMember(accountID, email, role string, now time.Time) *Member {
	return &Member{ID: NewID(), AccountID: accountID, Email: email, Role: role, CreatedAt: now}
}
