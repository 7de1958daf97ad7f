package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/gengate/gengate"
)

// This file stores the account area's members, sessions and one-time
// links.

const memberColumns = `id, account_id, email, role, password_hash, created_at`

func scanMember(row scanner) (*gengate.Member, error) {
	m := &gengate.Member{}
	var created int64
	if err := row.Scan(&m.ID, &m.AccountID, &m.Email, &m.Role, &m.PasswordHash, &created); err != nil {
		return nil, err
	}
	m.CreatedAt = fromMS(created)
	return m, nil
}

func emailTaken() error {
	return &gengate.Error{Code: gengate.EEmailTaken, Message: "this email is already in use",
		Fields: []gengate.FieldError{{Field: "email", Code: gengate.FieldValue, Message: "already in use"}}}
}

// CreateAccountWithMember creates an account with credits and its first
// member in one transaction.
func (s *DB) CreateAccountWithMember(ctx context.Context, a *gengate.Account, credits int, m *gengate.Member) error {
	if credits < 0 {
		return gengate.Errorf(gengate.EInvalid, "credits must be ≥ 0")
	}
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, balance, created_at) VALUES ($1, $2, $3, $4)`,
			a.ID, a.Name, credits, ms(a.CreatedAt)); err != nil {
			return err
		}
		if err := insertLedger(ctx, tx, a.ID, "", gengate.LedgerGrant, credits, "initial credits", a.CreatedAt); err != nil {
			return err
		}
		return insertMember(ctx, tx, m)
	})
	if isUnique(err) {
		return emailTaken()
	}
	if err == nil {
		a.Balance = credits
	}
	return err
}

func insertMember(ctx context.Context, q execer, m *gengate.Member) error {
	// The email is in the normal form (NormalizeEmail): email_form 1.
	_, err := q.ExecContext(ctx, `INSERT INTO members (`+memberColumns+`, email_form) VALUES ($1, $2, $3, $4, $5, $6, 1)`,
		m.ID, m.AccountID, m.Email, m.Role, m.PasswordHash, ms(m.CreatedAt))
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CreateMember adds a member to an account.
func (s *DB) CreateMember(ctx context.Context, m *gengate.Member) error {
	err := insertMember(ctx, s.db, m)
	if isUnique(err) {
		return emailTaken()
	}
	return err
}

// FindMember returns the member with the id.
func (s *DB) FindMember(ctx context.Context, id string) (*gengate.Member, error) {
	m, err := scanMember(s.reader().QueryRowContext(ctx, `SELECT `+memberColumns+` FROM members WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("member", id)
	}
	return m, err
}

// FindMemberByEmail returns the member with the (normalized) email.
func (s *DB) FindMemberByEmail(ctx context.Context, email string) (*gengate.Member, error) {
	m, err := scanMember(s.reader().QueryRowContext(ctx, `SELECT `+memberColumns+` FROM members WHERE email = $1`, email))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("member", "")
	}
	return m, err
}

// ListMembers returns an account's members, oldest first.
func (s *DB) ListMembers(ctx context.Context, accountID string) ([]gengate.Member, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT `+memberColumns+` FROM members WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

// HasOperator reports whether the account has an operator member.
func (s *DB) HasOperator(ctx context.Context, accountID string) (bool, error) {
	var n int
	err := s.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM members WHERE account_id = $1 AND role = 'operator'`, accountID).Scan(&n)
	return n > 0, err
}

// CreateSession stores a session (its token's hash only).
func (s *DB) CreateSession(ctx context.Context, se *gengate.Session) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, token_hash, member_id, csrf_token, created_at, expires_at, last_seen_at, user_agent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, se.ID, se.TokenHash, se.MemberID, se.CSRFToken, ms(se.CreatedAt), ms(se.ExpiresAt),
		ms(se.LastSeenAt), se.UserAgent)
	return err
}

// sessionColumns are a session's columns (table alias s), as
// sessionRow reads them.
const sessionColumns = `s.id, s.token_hash, s.member_id, s.csrf_token, s.created_at, s.expires_at, s.last_seen_at, s.user_agent`

// sessionRow receives a row's sessionColumns; done fills the session's
// times once the row is scanned.
type sessionRow struct {
	se                     *gengate.Session
	created, expires, seen int64
}

func (r *sessionRow) dest() []any {
	return []any{&r.se.ID, &r.se.TokenHash, &r.se.MemberID, &r.se.CSRFToken, &r.created, &r.expires, &r.seen, &r.se.UserAgent}
}

func (r *sessionRow) done() {
	r.se.CreatedAt, r.se.ExpiresAt, r.se.LastSeenAt = fromMS(r.created), fromMS(r.expires), fromMS(r.seen)
}

// FindSession returns the unexpired session with the token hash, and its
// member.
func (s *DB) FindSession(ctx context.Context, tokenHash string, now time.Time) (*gengate.Session, *gengate.Member, error) {
	row := sessionRow{se: &gengate.Session{}}
	m := &gengate.Member{}
	var mCreated int64
	err := s.reader().QueryRowContext(ctx, `SELECT `+sessionColumns+`,
		m.id, m.account_id, m.email, m.role, m.password_hash, m.created_at
		FROM sessions s JOIN members m ON m.id = s.member_id WHERE s.token_hash = $1 AND s.expires_at > $2`, tokenHash, ms(now)).
		Scan(append(row.dest(), &m.ID, &m.AccountID, &m.Email, &m.Role, &m.PasswordHash, &mCreated)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, notFound("session", "")
	}
	if err != nil {
		return nil, nil, err
	}
	row.done()
	m.CreatedAt = fromMS(mCreated)
	row.se.AccountID = m.AccountID
	return row.se, m, nil
}

// ExtendSession records a use of the session and moves its expiry.
func (s *DB) ExtendSession(ctx context.Context, id string, seen, until time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET expires_at = $1, last_seen_at = $2 WHERE id = $3`, ms(until), ms(seen), id)
	return err
}

// ListMemberSessions returns a page of the member's unexpired sessions,
// newest first.
func (s *DB) ListMemberSessions(ctx context.Context, memberID string, now time.Time, after gengate.TaskCursor, limit int) ([]gengate.Session, error) {
	q := `SELECT ` + sessionColumns + `, m.account_id FROM sessions s JOIN members m ON m.id = s.member_id
		WHERE s.member_id = $1 AND s.expires_at > $2`
	args := []any{memberID, ms(now)}
	if after.ID != "" {
		q += ` AND (s.created_at < $3 OR (s.created_at = $3 AND s.id < $4))`
		args = append(args, ms(after.CreatedAt), after.ID)
	}
	q += ` ORDER BY s.created_at DESC, s.id DESC LIMIT ` + strconv.Itoa(limit)
	rows, err := s.reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.Session{}
	for rows.Next() {
		row := sessionRow{se: &gengate.Session{}}
		if err := rows.Scan(append(row.dest(), &row.se.AccountID)...); err != nil {
			return nil, err
		}
		row.done()
		out = append(out, *row.se)
	}
	return out, rows.Err()
}

// DeleteMemberSession ends the member's unexpired session with the id.
func (s *DB) DeleteMemberSession(ctx context.Context, memberID, id string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id = $1 AND member_id = $2 AND expires_at > $3`, id, memberID, ms(now))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("session", id)
	}
	return nil
}

// DeleteSession ends the session with the token hash, and every session
// long expired (sign-outs keep the table small).
func (s *DB) DeleteSession(ctx context.Context, tokenHash string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = $1 OR expires_at < $2`,
		tokenHash, ms(time.Now().Add(-24*time.Hour)))
	return err
}

// PurgeSessions deletes expired sessions, and login links a day past
// their expiry.
func (s *DB) PurgeSessions(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, ms(now)); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM login_links WHERE expires_at < $1`, ms(now.Add(-24*time.Hour)))
	return err
}

// CreateLoginLink stores a one-time link (its token's hash only) and, in
// the same transaction, voids the member's links not used yet: only the
// newest link handed out can be used.
func (s *DB) CreateLoginLink(ctx context.Context, l *gengate.LoginLink) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM login_links WHERE member_id = $1 AND used_at = 0`, l.MemberID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO login_links (token_hash, member_id, purpose, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5)`, l.TokenHash, l.MemberID, l.Purpose, ms(l.CreatedAt), ms(l.ExpiresAt))
		return err
	})
}

// SetPassword sets the member's password and ends the member's other
// sessions in the same transaction: whoever held the old password, or a
// stolen cookie, is out the moment the new one is set.
func (s *DB) SetPassword(ctx context.Context, memberID, passwordHash, keepSession string) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE members SET password_hash = $1 WHERE id = $2`, passwordHash, memberID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("member", memberID)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE member_id = $1 AND id <> $2`, memberID, keepSession)
		return err
	})
}

// DeleteMemberSessions ends every session of the member.
func (s *DB) DeleteMemberSessions(ctx context.Context, memberID string) (int, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, q dbtx) error {
		res, err := q.ExecContext(ctx, `DELETE FROM sessions WHERE member_id = $1`, memberID)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return int(n), err
}

// UseLoginLink consumes a link at most once (a conditional UPDATE: of two
// concurrent uses exactly one changes the row) and, with passwordHash,
// sets the member's password in the same transaction.
func (s *DB) UseLoginLink(ctx context.Context, tokenHash string, now time.Time, passwordHash string) (*gengate.Member, error) {
	var m *gengate.Member
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var memberID string
		err := tx.QueryRowContext(ctx, `UPDATE login_links SET used_at = $1 WHERE token_hash = $2 AND used_at = 0 AND expires_at > $1
			RETURNING member_id`, ms(now), tokenHash).Scan(&memberID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("link", "")
		}
		if err != nil {
			return err
		}
		if passwordHash != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE members SET password_hash = $1 WHERE id = $2`, passwordHash, memberID); err != nil {
				return err
			}
			// A new password ends every session begun before it: whoever
			// knew the old one, or holds a stolen cookie, is out.
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE member_id = $1`, memberID); err != nil {
				return err
			}
		}
		m, err = scanMember(tx.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM members WHERE id = $1`, memberID))
		return err
	})
	return m, err
}
