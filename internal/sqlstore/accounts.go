package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gengate/gengate"
)

// CreateAccount creates an account and grants it credits in one transaction.
func (s *DB) CreateAccount(ctx context.Context, a *gengate.Account, credits int) error {
	if credits < 0 {
		return gengate.Errorf(gengate.EInvalid, "credits must be ≥ 0")
	}
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, balance, created_at) VALUES ($1, $2, $3, $4)`,
			a.ID, a.Name, credits, ms(a.CreatedAt)); err != nil {
			return err
		}
		a.Balance = credits
		return insertLedger(ctx, tx, a.ID, "", gengate.LedgerGrant, credits, "initial credits", a.CreatedAt)
	})
}

func insertLedger(ctx context.Context, tx *sql.Tx, accountID, taskID, kind string, amount int, note string, now time.Time) error {
	var task any
	if taskID != "" {
		task = taskID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		accountID, task, kind, amount, note, ms(now))
	return err
}

// CountAccounts returns the number of accounts.
func (s *DB) CountAccounts(ctx context.Context) (int, error) {
	var n int
	err := s.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts`).Scan(&n)
	return n, err
}

// FindAccount returns the account with the id.
func (s *DB) FindAccount(ctx context.Context, id string) (*gengate.Account, error) {
	a := &gengate.Account{}
	var created int64
	err := s.reader().QueryRowContext(ctx, `SELECT id, name, balance, created_at FROM accounts WHERE id = $1`, id).
		Scan(&a.ID, &a.Name, &a.Balance, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("account", id)
	}
	a.CreatedAt = fromMS(created)
	return a, err
}

// RenameAccount sets the account's name.
func (s *DB) RenameAccount(ctx context.Context, accountID, name string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE accounts SET name = $1 WHERE id = $2`, name, accountID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("account", accountID)
	}
	return nil
}

// CreateAPIKey stores a key (its hash only).
func (s *DB) CreateAPIKey(ctx context.Context, k *gengate.APIKey) error {
	return insertKey(ctx, s.db, k)
}

func insertKey(ctx context.Context, q execer, k *gengate.APIKey) error {
	test, operator := 0, 0
	if k.Test {
		test = 1
	}
	if k.Operator {
		operator = 1
	}
	_, err := q.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at, spend_limit, test, operator)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		k.ID, k.AccountID, k.Name, k.Prefix, k.Hash, ms(k.CreatedAt), k.SpendLimit, test, operator)
	return err
}

// FindAPIKeyByHash returns the unrevoked key with the hash.
func (s *DB) FindAPIKeyByHash(ctx context.Context, hash string) (*gengate.APIKey, error) {
	k, err := scanKey(s.reader().QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = $1 AND revoked_at = 0`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("key", "")
	}
	return k, err
}

// RevokeAPIKey revokes the key with the id or display prefix.
func (s *DB) RevokeAPIKey(ctx context.Context, idOrPrefix string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE (id = $2 OR prefix = $2) AND revoked_at = 0`, ms(now), idOrPrefix)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("active key", idOrPrefix)
	}
	return nil
}

// Grant adds credits (or takes them away, never below zero) with a ledger
// entry, and returns the new balance.
func (s *DB) Grant(ctx context.Context, accountID string, credits int, note string, now time.Time) (int, error) {
	var balance int
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2 AND balance + $1 >= 0 RETURNING balance`,
			credits, accountID).Scan(&balance)
		if errors.Is(err, sql.ErrNoRows) {
			if _, ferr := s.findAccountTx(ctx, tx, accountID); ferr != nil {
				return ferr
			}
			return gengate.Errorf(gengate.EInsufficient, "the balance cannot go below zero")
		}
		if err != nil {
			return err
		}
		kind := gengate.LedgerGrant
		if credits < 0 {
			kind = gengate.LedgerAdjustment
		}
		return insertLedger(ctx, tx, accountID, "", kind, credits, note, now)
	})
	return balance, err
}

func (s *DB) findAccountTx(ctx context.Context, tx *sql.Tx, id string) (int, error) {
	var balance int
	err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, id).Scan(&balance)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound("account", id)
	}
	return balance, err
}

// Ledger returns an account's entries, oldest first.
func (s *DB) Ledger(ctx context.Context, accountID string) ([]gengate.LedgerEntry, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT id, account_id, COALESCE(task_id, ''), kind, amount, note, created_at FROM ledger WHERE account_id = $1 ORDER BY id`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []gengate.LedgerEntry
	for rows.Next() {
		var e gengate.LedgerEntry
		var created int64
		if err := rows.Scan(&e.ID, &e.AccountID, &e.TaskID, &e.Kind, &e.Amount, &e.Note, &created); err != nil {
			return nil, err
		}
		e.CreatedAt = fromMS(created)
		out = append(out, e)
	}
	return out, rows.Err()
}
