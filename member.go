package gengate

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
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

// Member roles. An owner runs their account (its name among other
// things); an operator's own account works like an owner's, and an
// operator may also run the installation (the /api/v1/admin endpoints).
// The database holds no other role yet; a member who only uses an account
// would have another, and could not rename it (ManagesAccount).
const (
	RoleOwner    = "owner"
	RoleOperator = "operator"
)

// ManagesAccount reports whether the member may change the account itself
// (its name): its owner, or an operator. Any other role may not.
func (m *Member) ManagesAccount() bool {
	return m != nil && (m.Role == RoleOwner || m.Role == RoleOperator)
}

// Account-area error codes.
const (
	EInvalidCredentials = "INVALID_CREDENTIALS"
	EInvalidLink        = "INVALID_LINK"
	ESignupClosed       = "SIGNUP_CLOSED"
	EEmailTaken         = "EMAIL_TAKEN"
	ECSRF               = "CSRF_TOKEN_INVALID"
	EForbidden          = "FORBIDDEN"
	ESpendLimit         = "SPEND_LIMIT_EXCEEDED"
	// ECrossOrigin refuses a sign-in request that a browser marks as sent
	// by another site's page (login CSRF).
	ECrossOrigin = "CROSS_ORIGIN_REQUEST"
)

// MaxEmailLength is the longest email address accepted (RFC 5321).
const MaxEmailLength = 254

// NormalizeEmail returns the one form an email address is stored and
// compared in, or an INVALID_REQUEST error on field "email":
//
//   - trimmed of surrounding white space, then NFKC (fullwidth ｕ, ＠ and
//     other compatibility forms become the plain characters) and
//     case-folded (Unicode full case folding, then NFKC again), so that
//     spellings a reader cannot tell apart are one member;
//   - refused when it holds a format character (Unicode Cf: zero-width
//     space and joiners, the byte-order mark, bidirectional controls, soft
//     hyphen), a control character or white space, or a domain that ends
//     with a dot ("x.test." is x.test to DNS), starts with one or has
//     an empty label: those would make look-alike members.
func NormalizeEmail(s string) (string, error) {
	e := strings.TrimSpace(s)
	if len(e) > 4*MaxEmailLength || !utf8.ValidString(e) {
		return "", invalidEmail()
	}
	// A Caser keeps state: one per call.
	e = norm.NFKC.String(cases.Fold().String(norm.NFKC.String(e)))
	local, domain, ok := strings.Cut(e, "@")
	bad := !ok || local == "" || domain == "" || strings.Contains(domain, "@") || len(e) > MaxEmailLength ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") ||
		strings.IndexFunc(e, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
		}) >= 0
	if bad {
		return "", invalidEmail()
	}
	return e, nil
}

func invalidEmail() error {
	return &Error{Code: EInvalid, Message: "email is not a valid address",
		Fields: []FieldError{{Field: "email", Code: FieldValue, Message: "must be an email address"}}}
}

// NewMember returns a member record for an account.
func NewMember(accountID, email, role string, now time.Time) *Member {
	return &Member{ID: NewID(), AccountID: accountID, Email: email, Role: role, CreatedAt: now}
}
