package gengate

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Session is a signed-in member's browser session. The browser holds the
// token in an HttpOnly cookie; only its SHA-256 is stored. CSRFToken is
// sent back by the page in X-CSRF-Token on every state-changing request.
type Session struct {
	ID        string
	TokenHash string
	MemberID  string
	AccountID string
	CSRFToken string
	CreatedAt time.Time
	// ExpiresAt slides forward with use, up to CreatedAt + SessionMaxAge.
	ExpiresAt time.Time
	// LastSeenAt is when the session was last used, to within an hour
	// (Renewed): its member's list of sessions shows it.
	LastSeenAt time.Time
	// UserAgent is the browser's User-Agent header at sign-in, bounded
	// (BoundUserAgent): how its member tells one session from another.
	UserAgent string
}

// MaxUserAgentLength is the most of a User-Agent a session keeps, in
// bytes. Browsers send about 120 to 180; the header is the client's to
// fill, so whatever is longer is cut, not stored whole.
const MaxUserAgentLength = 256

// BoundUserAgent returns the form of a User-Agent header a session keeps:
// trimmed, control characters and invalid UTF-8 dropped, cut to
// MaxUserAgentLength bytes on a character boundary.
func BoundUserAgent(ua string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(ua) {
		if r == utf8.RuneError || unicode.IsControl(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > MaxUserAgentLength {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// Session lifetimes: a session ends SessionIdle after its last use, and
// SessionMaxAge after it began whatever its use.
const (
	SessionIdle   = 14 * 24 * time.Hour
	SessionMaxAge = 30 * 24 * time.Hour
)

// SessionTokenPrefix starts every session token (in the cookie only).
const SessionTokenPrefix = "ggs_"

// NewSession starts a session for a member signing in with a browser
// that sent userAgent: the token for the cookie, and the record to store.
// The record's ID is random, unrelated to the token: it names the session
// in its member's list of sessions without revealing anything of the
// cookie.
func NewSession(m *Member, userAgent string, now time.Time) (string, *Session) {
	token := SessionTokenPrefix + NewToken()
	return token, &Session{ID: NewID(), TokenHash: HashKey(token), MemberID: m.ID, AccountID: m.AccountID,
		CSRFToken: NewToken(), CreatedAt: now, ExpiresAt: now.Add(SessionIdle), LastSeenAt: now,
		UserAgent: BoundUserAgent(userAgent)}
}

// Renewed returns when the session should expire after a use at now, and
// whether that use is worth writing: when it moves the expiry by more than
// an hour, or the last use written is more than an hour old (a session at
// its maximum age no longer moves its expiry, yet its last use still
// shows). A busy session costs one write an hour, not one per request.
func (s *Session) Renewed(now time.Time) (time.Time, bool) {
	until := now.Add(SessionIdle)
	if max := s.CreatedAt.Add(SessionMaxAge); until.After(max) {
		until = max
	}
	return until, until.Sub(s.ExpiresAt) > time.Hour || now.Sub(s.LastSeenAt) > time.Hour
}

// LoginLink is a one-time link that signs a member in (and, for a set-up
// link, lets them choose a password). Only the token's SHA-256 is stored;
// the link is used at most once, before ExpiresAt.
type LoginLink struct {
	TokenHash string
	MemberID  string
	Purpose   string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
}

// Login link purposes and lifetime.
const (
	LinkSetup  = "setup"
	LinkSignIn = "signin"
	LinkTTL    = 24 * time.Hour
)

// NewLoginLink makes a link for a member: the token to hand out once, and
// the record to store.
func NewLoginLink(memberID, purpose string, now time.Time) (string, *LoginLink) {
	token := NewToken()
	return token, &LoginLink{TokenHash: HashKey(token), MemberID: memberID, Purpose: purpose, CreatedAt: now,
		ExpiresAt: now.Add(LinkTTL)}
}

// LinkURL is the address of a login link under a base URL. The token is in
// the fragment, which browsers never send: it stays out of server logs.
func LinkURL(base, token string) string { return strings.TrimRight(base, "/") + "/#/link/" + token }
