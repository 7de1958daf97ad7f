package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gengate/gengate"
)

// This file stores card top-ups (gengate/topup.go): a paid checkout
// session is recorded and granted in one transaction, keyed by the session
// id, so redeliveries of its event grant nothing more.

// GrantPurchase records the session and grants its credits, unless it is
// recorded already.
func (s *DB) GrantPurchase(ctx context.Context, p gengate.Purchase, now time.Time) (granted bool, balance int, err error) {
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		granted = false
		res, err := tx.ExecContext(ctx, `INSERT INTO purchases (session_id, account_id, credits, payment_intent, amount_total, currency, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id) DO NOTHING`,
			p.SessionID, p.AccountID, p.Credits, p.PaymentIntent, p.AmountTotal, p.Currency, ms(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			balance, err = s.findAccountTx(ctx, tx, p.AccountID)
			return err
		}
		err = tx.QueryRowContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2 RETURNING balance`,
			p.Credits, p.AccountID).Scan(&balance)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("account", p.AccountID)
		}
		if err != nil {
			return err
		}
		granted = true
		return insertLedger(ctx, tx, p.AccountID, "", gengate.LedgerPurchase, p.Credits, "stripe "+p.SessionID, now)
	})
	return granted, balance, err
}

// RefundPurchase takes back what the refunds call for beyond what was
// counted before, as far as the balance allows. The purchase's row is
// locked first (PostgreSQL; SQLite has one writer), so two deliveries of
// refund events never count the same credits twice.
func (s *DB) RefundPurchase(ctx context.Context, r gengate.PurchaseRefund, now time.Time) (gengate.RefundOutcome, error) {
	var out gengate.RefundOutcome
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = gengate.RefundOutcome{}
		lock := ""
		if s.postgres {
			lock = " FOR UPDATE"
		}
		var credits, counted, taken int
		err := tx.QueryRowContext(ctx, `SELECT session_id, account_id, credits, refunded_credits, taken_back FROM purchases
			WHERE payment_intent = $1`+lock, r.PaymentIntent).Scan(&out.SessionID, &out.AccountID, &credits, &counted, &taken)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		out.Found = true
		due := gengate.RefundCredits(credits, r.Amount, r.AmountRefunded) - counted
		if due <= 0 {
			out.Unrecovered = counted - taken
			return nil
		}
		balance, err := s.findAccountTx(ctx, tx, out.AccountID)
		if err != nil {
			return err
		}
		out.TakenBack = min(due, balance)
		if out.TakenBack > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance - $1 WHERE id = $2`, out.TakenBack, out.AccountID); err != nil {
				return err
			}
			if err := insertLedger(ctx, tx, out.AccountID, "", gengate.LedgerPurchaseRefund, -out.TakenBack, "stripe "+out.SessionID+" refunded", now); err != nil {
				return err
			}
		}
		counted += due
		taken += out.TakenBack
		out.Unrecovered = counted - taken
		_, err = tx.ExecContext(ctx, `UPDATE purchases SET refunded_credits = $1, taken_back = $2 WHERE session_id = $3`, counted, taken, out.SessionID)
		return err
	})
	return out, err
}

// Purchases lists purchases, newest first.
func (s *DB) Purchases(ctx context.Context, unrecovered bool, limit int) ([]gengate.PurchaseRecord, error) {
	where := ""
	if unrecovered {
		where = " WHERE refunded_credits > taken_back"
	}
	rows, err := s.reader().QueryContext(ctx, `SELECT session_id, account_id, credits, payment_intent, amount_total, currency,
		created_at, refunded_credits, taken_back FROM purchases`+where+` ORDER BY created_at DESC, session_id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gengate.PurchaseRecord{}
	for rows.Next() {
		var p gengate.PurchaseRecord
		var created int64
		if err := rows.Scan(&p.SessionID, &p.AccountID, &p.Credits, &p.PaymentIntent, &p.AmountTotal, &p.Currency,
			&created, &p.RefundedCredits, &p.TakenBack); err != nil {
			return nil, err
		}
		p.CreatedAt = fromMS(created)
		out = append(out, p)
	}
	return out, rows.Err()
}
