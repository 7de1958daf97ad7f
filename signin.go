package gengate

import (
	"context"
	"strings"
)

// This file holds the account area's sign-in rules: passwords, one-time
// links, open sign-up and sessions. The HTTP layer adds the cookie, the
// CSRF check and the limits on attempts.

// invalidCredentials is the one answer to a wrong email or a wrong
// password: a caller cannot tell which emails have members.
func invalidCredentials() error {
	return Errorf(EInvalidCredentials, "email or password is wrong")
}

// SignIn checks a member's email and password and starts a session for
// the browser that sent userAgent. An unknown email costs the same
// password-hashing work as a wrong password and gets the same error.
func (s *Service) SignIn(ctx context.Context, email, password, userAgent string) (string, *Session, *Member, error) {
	e, err := NormalizeEmail(email)
	var m *Member
	if err == nil {
		m, err = s.Store.FindMemberByEmail(ctx, e)
	}
	if err != nil {
		if c := ErrorCode(err); c != ENotFound && c != EInvalid {
			return "", nil, nil, err
		}
		BurnPasswordCheck(password)
		return "", nil, nil, invalidCredentials()
	}
	if !CheckPassword(m.PasswordHash, password) {
		return "", nil, nil, invalidCredentials()
	}
	token, sess, err := s.startSession(ctx, m, userAgent)
	return token, sess, m, err
}

// UseLink consumes a one-time link and starts a session for the browser
// that sent userAgent; with a password (setPassword) it also sets the
// member's password and ends the member's other sessions (before the new
// one starts). A password that breaks the rules is refused before the
// link is used.
func (s *Service) UseLink(ctx context.Context, token, password string, setPassword bool, userAgent string) (string, *Session, *Member, error) {
	pwHash := ""
	if setPassword {
		if err := CheckPasswordRules(password); err != nil {
			return "", nil, nil, err
		}
		pwHash = HashPassword(password)
	}
	if token == "" || len(token) > 128 {
		return "", nil, nil, Errorf(EInvalidLink, "the link is unknown, used or expired; ask for a new one")
	}
	m, err := s.Store.UseLoginLink(ctx, HashKey(token), s.now(), pwHash)
	if ErrorCode(err) == ENotFound {
		return "", nil, nil, Errorf(EInvalidLink, "the link is unknown, used or expired; ask for a new one")
	}
	if err != nil {
		return "", nil, nil, err
	}
	tok, sess, err := s.startSession(ctx, m, userAgent)
	return tok, sess, m, err
}

// SignUp creates an account with credits and its owner, and starts a
// session for the browser that sent userAgent. The caller decides whether
// open sign-up is allowed.
func (s *Service) SignUp(ctx context.Context, email, password, name string, credits int, userAgent string) (string, *Session, *Member, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return "", nil, nil, err
	}
	if err := CheckPasswordRules(password); err != nil {
		return "", nil, nil, err
	}
	if err := checkName(name, "name"); err != nil {
		return "", nil, nil, err
	}
	if name == "" {
		name = e
	}
	now := s.now()
	a := &Account{ID: NewID(), Name: name, CreatedAt: now}
	m := NewMember(a.ID, e, RoleOwner, now)
	m.PasswordHash = HashPassword(password)
	if err := s.Store.CreateAccountWithMember(ctx, a, credits, m); err != nil {
		return "", nil, nil, err
	}
	s.log().InfoContext(ctx, "account signed up", "account", a.ID, "member", m.ID)
	token, sess, err := s.startSession(ctx, m, userAgent)
	return token, sess, m, err
}

func (s *Service) startSession(ctx context.Context, m *Member, userAgent string) (string, *Session, error) {
	token, sess := NewSession(m, userAgent, s.now())
	if err := s.Store.CreateSession(ctx, sess); err != nil {
		return "", nil, err
	}
	return token, sess, nil
}

// SessionFor returns the live session with the cookie's token and its
// member, sliding its expiry forward; EUnauthorized when there is none.
func (s *Service) SessionFor(ctx context.Context, token string) (*Session, *Member, error) {
	if !strings.HasPrefix(token, SessionTokenPrefix) || len(token) > 128 {
		return nil, nil, Errorf(EUnauthorized, "not signed in, or the session has ended")
	}
	now := s.now()
	sess, m, err := s.Store.FindSession(ctx, HashKey(token), now)
	if ErrorCode(err) == ENotFound {
		return nil, nil, Errorf(EUnauthorized, "not signed in, or the session has ended")
	}
	if err != nil {
		return nil, nil, err
	}
	if until, ok := sess.Renewed(now); ok {
		if err := s.Store.ExtendSession(ctx, sess.ID, now, until); err != nil {
			s.log().WarnContext(ctx, "extend session", "member", m.ID, "err", err)
		} else {
			sess.ExpiresAt, sess.LastSeenAt = until, now
		}
	}
	return sess, m, nil
}

// SignOut ends the session with the token.
func (s *Service) SignOut(ctx context.Context, token string) error {
	return s.Store.DeleteSession(ctx, HashKey(token))
}

// ChangePassword sets a signed-in member's new password, given the
// current one, and ends every other session of the member (the one
// asking stays). Only a member's own session may: an API key is handed to
// programs, not people.
func (s *Service) ChangePassword(ctx context.Context, m *Member, sess *Session, current, next string) error {
	if m == nil || sess == nil {
		return Errorf(EForbidden, "a member changes their own password, signed in with a session")
	}
	if !CheckPassword(m.PasswordHash, current) {
		return &Error{Code: EInvalidCredentials, Message: "the current password is wrong",
			Fields: []FieldError{{Field: "currentPassword", Code: FieldValue, Message: "is not the current password"}}}
	}
	if err := CheckPasswordRules(next); err != nil {
		return err
	}
	if err := s.Store.SetPassword(ctx, m.ID, HashPassword(next), sess.ID); err != nil {
		return err
	}
	s.log().InfoContext(ctx, "password changed", "member", m.ID, "account", m.AccountID)
	return nil
}

// SignOutEverywhere ends every session of the member, the caller's own
// too, and returns how many there were.
func (s *Service) SignOutEverywhere(ctx context.Context, m *Member) (int, error) {
	n, err := s.Store.DeleteMemberSessions(ctx, m.ID)
	if err == nil {
		s.log().InfoContext(ctx, "signed out everywhere", "member", m.ID, "account", m.AccountID, "sessions", n)
	}
	return n, err
}

// MemberSessions returns up to limit of the member's live sessions, newest
// first, after the cursor. A member sees their own sessions only, signed
// in with one: a session belongs to a person, and an API key is handed to
// programs (FORBIDDEN for a key).
func (s *Service) MemberSessions(ctx context.Context, m *Member, after TaskCursor, limit int) ([]Session, error) {
	if m == nil {
		return nil, sessionsForbidden()
	}
	return s.Store.ListMemberSessions(ctx, m.ID, s.now(), after, limit)
}

// EndSession ends one of the member's own sessions, found by its id (the
// caller's own included: that is signing out). Another member's session,
// of this account or another, is NOT_FOUND, as an unknown one: a member
// cannot tell whether an id names anyone's session.
func (s *Service) EndSession(ctx context.Context, m *Member, id string) error {
	if m == nil {
		return sessionsForbidden()
	}
	if err := s.Store.DeleteMemberSession(ctx, m.ID, id, s.now()); err != nil {
		return err
	}
	s.log().InfoContext(ctx, "session ended", "member", m.ID, "account", m.AccountID, "session", id)
	return nil
}

func sessionsForbidden() error {
	return Errorf(EForbidden, "sessions belong to members: sign in to see or end yours (an API key has none)")
}

// CreateAccountWithLink creates an account with credits and its first
// member (an owner, or an operator), and returns a one-time set-up link
// token for that member: the operator's way to open an account.
func (s *Service) CreateAccountWithLink(ctx context.Context, email, name string, credits int, operator bool) (*Account, *Member, string, error) {
	e, err := NormalizeEmail(email)
	if err != nil {
		return nil, nil, "", err
	}
	if credits < 0 {
		return nil, nil, "", &Error{Code: EInvalid, Message: "credits must be ≥ 0",
			Fields: []FieldError{{Field: "credits", Code: FieldValue, Message: "must be ≥ 0"}}}
	}
	if err := checkName(name, "name"); err != nil {
		return nil, nil, "", err
	}
	if name == "" {
		name = e
	}
	role := RoleOwner
	if operator {
		role = RoleOperator
	}
	now := s.now()
	a := &Account{ID: NewID(), Name: name, CreatedAt: now}
	m := NewMember(a.ID, e, role, now)
	if err := s.Store.CreateAccountWithMember(ctx, a, credits, m); err != nil {
		return nil, nil, "", err
	}
	a.Balance = credits
	token, err := s.IssueLink(ctx, m.ID, LinkSetup)
	return a, m, token, err
}

// IssueLink stores a fresh one-time link for a member and returns its
// token, to be handed out once; the member's older unused links stop
// working.
func (s *Service) IssueLink(ctx context.Context, memberID, purpose string) (string, error) {
	token, l := NewLoginLink(memberID, purpose, s.now())
	if err := s.Store.CreateLoginLink(ctx, l); err != nil {
		return "", err
	}
	return token, nil
}

// MaxNameLength is the longest account or key name accepted, in bytes.
const MaxNameLength = 200

func checkName(name, field string) error {
	if len(name) > MaxNameLength {
		return &Error{Code: EInvalid, Message: field + " is too long",
			Fields: []FieldError{{Field: field, Code: FieldTooLong, Message: "must be at most 200 bytes"}}}
	}
	return nil
}

// IsOperator reports whether a caller may use the operator endpoints: a
// member signed in with the operator role, or an API key the CLI made as
// an operator key. A key is never an operator's because its account has
// an operator member: keys are handed to programs, and a program holding
// a key limited to a few credits must not grant credits or take over
// other accounts.
func IsOperator(m *Member, k *APIKey) bool {
	if m != nil {
		return m.Role == RoleOperator
	}
	return k != nil && k.ID != "" && k.Operator
}
