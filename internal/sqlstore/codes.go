package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gengate/gengate"
)

// This file stores redemption codes (gengate/codes.go): by hash, used once
// ever by one conditional UPDATE in the transaction that grants the code's
// credits.

// CreateRedemptionCodes stores fresh codes in one transaction.
func (s *DB) CreateRedemptionCodes(ctx context.Context, codes []gengate.RedemptionCode) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, c := range codes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO redemption_codes (hash, credits, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
				c.Hash, c.Credits, ms(c.CreatedAt), ms(c.ExpiresAt)); err != nil {
				return err
			}
		}
		return nil
	})
}

// RedeemCode marks the code used by the account and grants its credits,
// in one transaction. The UPDATE's condition (unused, unexpired) is
// checked again on the row it waited for (PostgreSQL) or under the one
// writer (SQLite), so of concurrent redemptions of a code exactly one
// changes it; the others find it used.
func (s *DB) RedeemCode(ctx context.Context, hash, accountID string, now time.Time) (balance, credits int, err error) {
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE redemption_codes SET redeemed_by = $1, redeemed_at = $2
			WHERE hash = $3 AND redeemed_at = 0 AND (expires_at = 0 OR expires_at > $2) RETURNING credits`,
			accountID, ms(now), hash).Scan(&credits)
		if errors.Is(err, sql.ErrNoRows) {
			return codeRefusal(ctx, tx, hash)
		}
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2 RETURNING balance`,
			credits, accountID).Scan(&balance)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("account", accountID)
		}
		if err != nil {
			return err
		}
		return insertLedger(ctx, tx, accountID, "", gengate.LedgerRedemption, credits, "code "+hash[:8], now)
	})
	return balance, credits, err
}

// codeRefusal says why a code could not be redeemed.
func codeRefusal(ctx context.Context, tx *sql.Tx, hash string) error {
	var redeemed int64
	err := tx.QueryRowContext(ctx, `SELECT redeemed_at FROM redemption_codes WHERE hash = $1`, hash).Scan(&redeemed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return gengate.Errorf(gengate.ECodeUnknown, "this code is not a redemption code of this service")
	case err != nil:
		return err
	case redeemed != 0:
		return gengate.Errorf(gengate.ECodeUsed, "this code has already been redeemed")
	default:
		return gengate.Errorf(gengate.ECodeExpired, "this code has expired")
	}
}
