package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/gengate/gengate"
)

// This file stores the management of API keys by their account: list,
// update, revoke, last use, and the daily spend limit that CreateTask
// enforces.

const keyColumns = `id, account_id, name, prefix, hash, created_at, revoked_at, last_used_at, spend_limit, spent_day, spent, test, operator`

func scanKey(row scanner) (*gengate.APIKey, error) {
	k := &gengate.APIKey{}
	var created, revoked, used, test, operator int64
	if err := row.Scan(&k.ID, &k.AccountID, &k.Name, &k.Prefix, &k.Hash, &created, &revoked, &used,
		&k.SpendLimit, &k.SpentDay, &k.SpentToday, &test, &operator); err != nil {
		return nil, err
	}
	k.Test = test == 1
	k.Operator = operator == 1
	k.CreatedAt, k.RevokedAt, k.LastUsedAt = fromMS(created), fromMS(revoked), fromMS(used)
	return k, nil
}

// ListAPIKeys returns a page of the account's keys, revoked ones too,
// newest first, after the cursor (the creation time and id of the last key
// of the page before).
func (s *DB) ListAPIKeys(ctx context.Context, accountID string, after gengate.TaskCursor, limit int) ([]gengate.APIKey, error) {
	q := `SELECT ` + keyColumns + ` FROM api_keys WHERE account_id = $1`
	args := []any{accountID}
	if after.ID != "" {
		q += ` AND (created_at < $2 OR (created_at = $2 AND id < $3))`
		args = append(args, ms(after.CreatedAt), after.ID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ` + strconv.Itoa(limit)
	rows, err := s.reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}

// CreateAccountKey stores a key of an account that has fewer than max
// unrevoked keys, or answers KEY_LIMIT_REACHED. The count and the insert
// are one transaction, with the account's row locked on PostgreSQL (SQLite
// has one writer), so concurrent creations cannot pass the cap together.
func (s *DB) CreateAccountKey(ctx context.Context, k *gengate.APIKey, max int) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		lock := `SELECT id FROM accounts WHERE id = $1`
		if s.postgres {
			lock += ` FOR UPDATE`
		}
		var id string
		if err := tx.QueryRowContext(ctx, lock, k.AccountID).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return notFound("account", k.AccountID)
		} else if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys WHERE account_id = $1 AND revoked_at = 0`, k.AccountID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return gengate.KeyLimitReached(max)
		}
		return insertKey(ctx, tx, k)
	})
}

// FindAPIKey returns the key with the id, revoked or not.
func (s *DB) FindAPIKey(ctx context.Context, id string) (*gengate.APIKey, error) {
	k, err := scanKey(s.reader().QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("key", id)
	}
	return k, err
}

// UpdateAPIKey writes the name and spend limit of the account's key.
func (s *DB) UpdateAPIKey(ctx context.Context, k *gengate.APIKey) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET name = $1, spend_limit = $2 WHERE id = $3 AND account_id = $4`,
		k.Name, k.SpendLimit, k.ID, k.AccountID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("key", k.ID)
	}
	return nil
}

// RevokeAccountKey revokes the account's unrevoked key with the id.
func (s *DB) RevokeAccountKey(ctx context.Context, accountID, id string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND account_id = $3 AND revoked_at = 0`,
		ms(now), id, accountID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("active key", id)
	}
	return nil
}

// KeysGeneration returns the count of changes to keys (key_changes,
// bumped by triggers on api_keys in the transaction of each change): when
// it moved, a key authenticated from memory may have been revoked or
// changed since. One row, read on the read pool.
func (s *DB) KeysGeneration(ctx context.Context) (int64, error) {
	var g int64
	err := s.reader().QueryRowContext(ctx, `SELECT generation FROM key_changes WHERE id = 1`).Scan(&g)
	return g, err
}

// TouchAPIKey records the key's use at now, unless a use within the last
// gengate.KeyTouchInterval is recorded already (another process's).
func (s *DB) TouchAPIKey(ctx context.Context, id string, now time.Time) error {
	return s.write(ctx, func(ctx context.Context, q dbtx) error {
		_, err := q.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND last_used_at < $3`,
			ms(now), id, ms(now.Add(-gengate.KeyTouchInterval)))
		return err
	})
}

// spendKey counts a new task's cost against its key's daily spend, in the
// task's transaction, only if the key is unrevoked and the spend stays
// within the key's limit: the condition and the increment are one
// statement, so concurrent generations can never take a key over its
// limit (PostgreSQL rechecks the condition on the row it waited for;
// SQLite has one writer).
func (s *DB) spendKey(ctx context.Context, tx *sql.Tx, t *gengate.Task) error {
	day := gengate.UTCDay(t.CreatedAt)
	res, err := tx.ExecContext(ctx, `UPDATE api_keys
		SET spent = CASE WHEN spent_day = $1 THEN spent + $2 ELSE $2 END, spent_day = $1
		WHERE id = $3 AND revoked_at = 0
		AND (spend_limit = 0 OR (CASE WHEN spent_day = $1 THEN spent ELSE 0 END) + $2 <= spend_limit)`,
		day, t.Cost, t.KeyID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	k, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, t.KeyID))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !k.RevokedAt.IsZero()) {
		return gengate.Errorf(gengate.EUnauthorized, "the API key is invalid or revoked")
	}
	if err != nil {
		return err
	}
	return gengate.SpendLimitExceeded(k, t.Cost, t.CreatedAt)
}

// unspendKey takes a refund off the daily spend of the task's key, if the
// refund falls on the day the task was charged.
func (s *DB) unspendKey(ctx context.Context, tx *sql.Tx, t *gengate.Task, refund int) error {
	if t.KeyID == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE api_keys SET spent = CASE WHEN spent > $1 THEN spent - $1 ELSE 0 END
		WHERE id = $2 AND spent_day = $3`, refund, t.KeyID, gengate.UTCDay(t.CreatedAt))
	return err
}
