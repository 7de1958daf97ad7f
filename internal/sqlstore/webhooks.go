package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gengate/gengate"
)

// addWebhookEvent writes the outbox row of a task that has just reached a
// final (or review) state and was created with a webhookUrl, inside tx:
// the event exists if and only if the state change committed.
func addWebhookEvent(ctx context.Context, tx *sql.Tx, t *gengate.Task) error {
	typ := gengate.EventType(t.Status)
	if typ == "" {
		return nil
	}
	at := ms(t.UpdatedAt)
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, task_id, url, type, created_at, next_at)
		SELECT $1, $2, task_id, url, $3, $4, $4 FROM task_webhooks WHERE task_id = $5`,
		"msg_"+gengate.NewID(), t.AccountID, typ, at, t.ID)
	return err
}

// WebhookSecret returns the account's signing secret, storing fresh as it
// when the account has none yet (the first caller's secret wins a race).
func (s *DB) WebhookSecret(ctx context.Context, accountID, fresh string, now time.Time) (string, error) {
	var secret string
	err := s.reader().QueryRowContext(ctx, `SELECT secret FROM webhook_secrets WHERE account_id = $1`, accountID).Scan(&secret)
	if err == nil {
		return secret, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (account_id) DO NOTHING`, accountID, fresh, ms(now)); err != nil {
		return "", err
	}
	err = s.db.QueryRowContext(ctx, `SELECT secret FROM webhook_secrets WHERE account_id = $1`, accountID).Scan(&secret)
	return secret, err
}

const webhookEventColumns = `id, account_id, task_id, url, type, created_at, status, attempts, next_at, delivered_at, last_status, last_error`

func scanWebhookEvent(row scanner) (*gengate.WebhookEvent, error) {
	e := &gengate.WebhookEvent{}
	var created, next, delivered int64
	err := row.Scan(&e.ID, &e.AccountID, &e.TaskID, &e.URL, &e.Type, &created, &e.Status, &e.Attempts, &next,
		&delivered, &e.LastStatus, &e.LastError)
	if err != nil {
		return nil, err
	}
	e.CreatedAt, e.NextAt, e.DeliveredAt = fromMS(created), fromMS(next), fromMS(delivered)
	return e, nil
}

// ClaimWebhookEvent leases the earliest due pending event for lease and
// counts the attempt it is for (Attempts), or returns nil when none is due.
// Two processes never hold the same event: the lease is taken by one
// conditional UPDATE, whose conditions PostgreSQL rechecks on a row another
// transaction changed meanwhile.
func (s *DB) ClaimWebhookEvent(ctx context.Context, now time.Time, lease time.Duration) (*gengate.WebhookEvent, error) {
	var id string
	err := s.reader().QueryRowContext(ctx, `SELECT id FROM webhook_events WHERE status = 'pending' AND next_at <= $1 AND lease_until <= $1
		ORDER BY next_at LIMIT 1`, ms(now)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil // nothing due: no write taken
	}
	if err != nil {
		return nil, err
	}
	var e *gengate.WebhookEvent
	err = s.write(ctx, func(ctx context.Context, q dbtx) error {
		var err error
		e, err = scanWebhookEvent(q.QueryRowContext(ctx, `UPDATE webhook_events SET lease_until = $1, attempts = attempts + 1
			WHERE id = $2 AND status = 'pending' AND next_at <= $3 AND lease_until <= $3 RETURNING `+webhookEventColumns,
			ms(now.Add(lease)), id, ms(now)))
		if errors.Is(err, sql.ErrNoRows) {
			e, err = nil, nil // another process took it first
		}
		return err
	})
	return e, err
}

// RecordWebhookAttempt records attempt a of the claimed event e and moves
// the event on: delivered, pending again at next, or failed (the schedule
// spent). It does nothing when the claim was superseded (its lease ran
// out and another process claimed the event again).
func (s *DB) RecordWebhookAttempt(ctx context.Context, e *gengate.WebhookEvent, a gengate.WebhookAttempt, status string, next time.Time) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		delivered := int64(0)
		if status == "delivered" {
			delivered = ms(a.At)
		}
		res, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, next_at = $2, lease_until = 0, last_status = $3,
			last_error = $4, delivered_at = $5 WHERE id = $6 AND attempts = $7 AND status = 'pending'`,
			status, ms(next), a.Status, a.Error, delivered, e.ID, e.Attempts)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_attempts (id, event_id, n, at, status, error) VALUES ($1, $2, $3, $4, $5, $6)`,
			gengate.NewID(), e.ID, a.N, ms(a.At), a.Status, a.Error)
		return err
	})
}

// WebhookEvents returns the events of a task of the account, oldest first,
// each with its attempts.
func (s *DB) WebhookEvents(ctx context.Context, accountID, taskID string) ([]*gengate.WebhookEvent, map[string][]gengate.WebhookAttempt, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT `+webhookEventColumns+` FROM webhook_events WHERE task_id = $1 AND account_id = $2
		ORDER BY created_at, id`, taskID, accountID)
	if err != nil {
		return nil, nil, err
	}
	var events []*gengate.WebhookEvent
	for rows.Next() {
		e, err := scanWebhookEvent(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		events = append(events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	attempts := map[string][]gengate.WebhookAttempt{}
	for _, e := range events {
		rows, err := s.reader().QueryContext(ctx, `SELECT n, at, status, error FROM webhook_attempts WHERE event_id = $1 ORDER BY n`, e.ID)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var a gengate.WebhookAttempt
			var at int64
			if err := rows.Scan(&a.N, &at, &a.Status, &a.Error); err != nil {
				rows.Close()
				return nil, nil, err
			}
			a.At = fromMS(at)
			attempts[e.ID] = append(attempts[e.ID], a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	return events, attempts, nil
}
