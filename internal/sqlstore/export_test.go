package sqlstore

import (
	"context"
	"strings"
	"time"
)

// ClaimPlan returns the database's plan of the due-task claim, one line
// per plan node: EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL.
func (s *DB) ClaimPlan(ctx context.Context, now time.Time) (string, error) {
	q, args := "EXPLAIN QUERY PLAN "+s.claimDue(), []any{"tok", ms(now) + 1000, ms(now), 8}
	if s.postgres {
		q = "EXPLAIN " + s.claimDue()
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		// The last column is the plan text on both databases.
		line, _ := vals[len(vals)-1].(string)
		if b, ok := vals[len(vals)-1].([]byte); ok {
			line = string(b)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), rows.Err()
}
