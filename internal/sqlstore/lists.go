package sqlstore

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// This file holds the account area's paged lists. Each pages by a position
// that never moves (the ledger's id; a creation time and id), newest first,
// so entries added while a client pages never make it skip or repeat one.

func encodeInputURLs(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m) // strings only: cannot fail
	return string(b)
}

// LedgerPage returns up to limit of the account's entries with ids below
// before (0: from the newest), newest first, with balances after. One
// statement reads the page and the sum under it, so the balances agree
// with the page even while entries are added.
func (s *DB) LedgerPage(ctx context.Context, accountID string, before int64, limit int) ([]gengate.LedgerEntry, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := s.reader().QueryContext(ctx, `WITH page AS (
			SELECT id, account_id, task_id, kind, amount, note, created_at FROM ledger
			WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3)
		SELECT id, account_id, COALESCE(task_id, ''), kind, amount, note, created_at,
			(SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = $1 AND id <= (SELECT MAX(id) FROM page))
		FROM page ORDER BY id DESC`, accountID, before, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.LedgerEntry{}
	var top int
	for rows.Next() {
		var e gengate.LedgerEntry
		var created int64
		if err := rows.Scan(&e.ID, &e.AccountID, &e.TaskID, &e.Kind, &e.Amount, &e.Note, &created, &top); err != nil {
			return nil, err
		}
		e.CreatedAt = fromMS(created)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out { // the newest entry's balance after is the sum; each older one's is the next minus it
		out[i].BalanceAfter = top
		top -= out[i].Amount
	}
	return out, nil
}

// Usage sums the account's charges since a time, net of their refunds, per
// model (the charge's note names it), the most credits first.
func (s *DB) Usage(ctx context.Context, accountID string, since time.Time) ([]gengate.ModelUsage, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT c.note, COUNT(*), -SUM(c.amount + COALESCE(r.amount, 0)) AS spent
		FROM ledger c LEFT JOIN ledger r ON r.task_id = c.task_id AND r.kind = 'refund'
		WHERE c.account_id = $1 AND c.kind = 'charge' AND c.created_at >= $2
		GROUP BY c.note ORDER BY spent DESC, c.note`, accountID, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.ModelUsage{}
	for rows.Next() {
		var u gengate.ModelUsage
		if err := rows.Scan(&u.ModelID, &u.Tasks, &u.Credits); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// DailyUsage sums the account's charges since a time, net of their
// refunds, per UTC day, model and key (the task's, while its record is
// kept), oldest day first.
func (s *DB) DailyUsage(ctx context.Context, accountID string, since time.Time) ([]gengate.DayUsage, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT c.created_at / 86400000 AS day, c.note, COALESCE(t.key_id, ''),
			COUNT(*), -SUM(c.amount + COALESCE(r.amount, 0))
		FROM ledger c LEFT JOIN ledger r ON r.task_id = c.task_id AND r.kind = 'refund'
		LEFT JOIN tasks t ON t.id = c.task_id
		WHERE c.account_id = $1 AND c.kind = 'charge' AND c.created_at >= $2
		GROUP BY c.created_at / 86400000, c.note, COALESCE(t.key_id, '') ORDER BY 1, 2, 3`, accountID, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.DayUsage{}
	for rows.Next() {
		var u gengate.DayUsage
		var day int64
		if err := rows.Scan(&day, &u.ModelID, &u.KeyID, &u.Tasks, &u.Credits); err != nil {
			return nil, err
		}
		u.Day = time.Unix(day*86400, 0).UTC()
		out = append(out, u)
	}
	return out, rows.Err()
}

// after is the keyset condition "older than the cursor" on created_at and
// id, with its two parameters numbered from n.
func olderThan(c gengate.TaskCursor, n int) (string, []any) {
	if c.ID == "" {
		return "", nil
	}
	p1, p2 := "$"+strconv.Itoa(n), "$"+strconv.Itoa(n+1)
	return ` AND (created_at < ` + p1 + ` OR (created_at = ` + p1 + ` AND id < ` + p2 + `))`, []any{ms(c.CreatedAt), c.ID}
}

// ListAccountTasks returns the account's tasks matching f, newest first.
func (s *DB) ListAccountTasks(ctx context.Context, accountID string, f gengate.TaskFilter) ([]*gengate.Task, error) {
	where := `account_id = $1`
	args := []any{accountID}
	add := func(cond string, v any) {
		args = append(args, v)
		where += " AND " + strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args)))
	}
	switch f.Status {
	case "":
	case "processing":
		where += " AND " + isActive
	default:
		add("status = ?", f.Status)
	}
	if f.ModelID != "" {
		add("model_id = ?", f.ModelID)
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if f.Test != nil { // a test key's tasks (testkeys.go)
		not := ""
		if !*f.Test {
			not = "NOT "
		}
		where += " AND key_id " + not + "IN (SELECT id FROM api_keys WHERE account_id = $1 AND test = 1)"
	}
	cond, cargs := olderThan(f.After, len(args)+1)
	where += cond
	args = append(args, cargs...)
	args = append(args, f.Limit)
	return s.queryTasks(ctx, `SELECT `+taskColumns+` FROM tasks WHERE `+where+
		` ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
}

// ListReview returns tasks in needs_review, oldest first, after the cursor.
// The status NOT IN term lets SQLite use tasks_status (statusTerm).
func (s *DB) ListReview(ctx context.Context, after gengate.TaskCursor, limit int) ([]*gengate.Task, error) {
	where, args := "", []any{}
	if after.ID != "" {
		where = ` AND (created_at > $1 OR (created_at = $1 AND id > $2))`
		args = append(args, ms(after.CreatedAt), after.ID)
	}
	args = append(args, limit)
	return s.queryTasks(ctx, listReviewQuery(where, len(args)), args...)
}

// listReviewQuery is ListReview's query, with where (the cursor's
// condition) and its limit in parameter n.
func listReviewQuery(where string, n int) string {
	return `SELECT ` + taskColumns + ` FROM tasks WHERE status = 'needs_review' AND ` + notActive + where +
		` ORDER BY created_at, id LIMIT $` + strconv.Itoa(n)
}

func (s *DB) queryTasks(ctx context.Context, query string, args ...any) ([]*gengate.Task, error) {
	rows, err := s.reader().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	out, err := scanTasks(rows)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []*gengate.Task{}
	}
	for _, t := range out { // after the rows are closed
		if err := s.loadOutputs(ctx, s.reader(), t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ListAccounts returns accounts whose id, name or a member's email
// contains q (case-insensitively), newest first, after the cursor.
func (s *DB) ListAccounts(ctx context.Context, q string, after gengate.AccountCursor, limit int) ([]gengate.Account, error) {
	where, args := "1 = 1", []any{}
	if q != "" {
		args = append(args, "%"+likeEscape(strings.ToLower(q))+"%")
		where += ` AND (LOWER(id) LIKE $1 ESCAPE '\' OR LOWER(name) LIKE $1 ESCAPE '\'
			OR id IN (SELECT account_id FROM members WHERE email LIKE $1 ESCAPE '\'))`
	}
	cond, cargs := olderThan(after, len(args)+1)
	where += cond
	args = append(args, cargs...)
	args = append(args, limit)
	rows, err := s.reader().QueryContext(ctx, `SELECT id, name, balance, created_at FROM accounts WHERE `+where+
		` ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.Account{}
	for rows.Next() {
		var a gengate.Account
		var created int64
		if err := rows.Scan(&a.ID, &a.Name, &a.Balance, &created); err != nil {
			return nil, err
		}
		a.CreatedAt = fromMS(created)
		out = append(out, a)
	}
	return out, rows.Err()
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
