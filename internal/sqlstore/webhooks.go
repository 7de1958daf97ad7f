package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// addWebhookEvent writes the outbox rows of a task that has just reached
// a final (or review) state, inside tx, so the events exist if and only if
// the state change committed: for the webhookUrl it was created with, its
// final-state event, a prediction's output and completed events as its
// filter has them (gengate.PredictionFinalEvents), or a fal queue
// request's fal event (gengate.FalFinalEvent); then one for each of its
// account's endpoints that wants the event type, in that order. It is
// one statement that makes each row's id itself (webhookEventsInsert): the
// finish of every task runs it, on SQLite on the one writer, and most
// tasks have no webhook and their accounts no endpoint, which it learns
// without a read of its own.
func (s *DB) addWebhookEvent(ctx context.Context, tx *sql.Tx, t *gengate.Task) error {
	typ := gengate.EventType(t.Status)
	if typ == "" {
		return nil
	}
	pred := append(gengate.PredictionFinalEvents(t.Status), "", "")
	res, err := tx.ExecContext(ctx, s.webhookEventsInsert(), t.AccountID, typ, ms(t.UpdatedAt), t.ID, pred[0], pred[1],
		gengate.FalFinalEvent(t.Status))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // no webhook, no endpoint: nothing to bound
	}
	return s.boundEndpointEvents(ctx, tx, t.AccountID)
}

// boundEndpointEvents deletes, from each endpoint of the account, the
// events beyond the newest maxEndpointEvents (with their attempts, by the
// foreign key), so that a receiver that never answers holds a bounded
// backlog. Each endpoint's cut is one walk of maxEndpointEvents entries of
// the webhook_events_endpoint index, and it runs only for a finish that
// wrote events.
func (s *DB) boundEndpointEvents(ctx context.Context, tx *sql.Tx, accountID string) error {
	if s.maxEndpointEvents <= 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM webhook_endpoints WHERE account_id = $1`, accountID)
	if err != nil {
		return err
	}
	var eps []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		eps = append(eps, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	beyond := `OFFSET $2` // PostgreSQL: every row after the first $2
	if !s.postgres {
		beyond = `LIMIT -1 OFFSET $2`
	}
	for _, ep := range eps {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE endpoint_id = $1 AND id IN (SELECT id FROM webhook_events
			WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC `+beyond+`)`, ep, s.maxEndpointEvents); err != nil {
			return err
		}
	}
	return nil
}

// WithMaxWebhookEventsPerEndpoint sets how many events an endpoint keeps
// (gengate.DefaultMaxWebhookEventsPerEndpoint when not set; n <= 0 keeps
// all): a finish that writes an endpoint's event deletes its oldest beyond
// n, with their attempts.
func WithMaxWebhookEventsPerEndpoint(n int) Option {
	return func(o *options) { o.maxEndpointEvents = n }
}

// webhookEventsInsert is addWebhookEvent's statement: $1 the account, $2
// the event type, $3 the time, $4 the task, $5 and $6 the prediction
// events of the state, $7 a fal request's event ("" for none). A
// prediction's events are typed gengate.PredictionEventType; the rows of
// one state share their time, and the delivery sends output before
// completed (claimWebhookQuery).
func (s *DB) webhookEventsInsert() string {
	return `INSERT INTO webhook_events (id, account_id, task_id, url, type, created_at, next_at, endpoint_id)
		SELECT ` + s.eventID() + `, $1, $4, url, type, $3, $3, endpoint_id FROM (
			SELECT 0 AS k, url, '' AS endpoint_id, 0 AS made, CAST($2 AS TEXT) AS type FROM task_webhooks
				WHERE task_id = $4 AND events = '' AND format = ''
			UNION ALL
			SELECT 0, url, '', 0, CAST($7 AS TEXT) FROM task_webhooks
				WHERE task_id = $4 AND format = '` + falFormat + `' AND CAST($7 AS TEXT) <> ''
			UNION ALL
			SELECT 0, w.url, '', p.n, 'prediction.' || p.ev FROM task_webhooks w
				JOIN (SELECT 1 AS n, CAST($5 AS TEXT) AS ev UNION ALL SELECT 2, CAST($6 AS TEXT)) p
				ON p.ev <> '' AND ',' || w.events || ',' LIKE '%,' || p.ev || ',%'
				WHERE w.task_id = $4 AND w.events <> ''
			UNION ALL
			SELECT 1, url, id, created_at, CAST($2 AS TEXT) FROM webhook_endpoints WHERE account_id = $1
				AND ',' || event_types || ',' LIKE '%,' || CAST($2 AS TEXT) || ',%'
		) AS targets ORDER BY k, made, endpoint_id`
}

// falFormat is task_webhooks.format of a fal queue request's webhook
// (gengate.FalWebhookEvents).
const falFormat = "fal"

// webhookColumns are task_webhooks' events and format of t's webhook: a
// fal queue request's is format falFormat without events (a process of
// the previous release, reading events only, sends it its final-state
// event); any other's format is empty and its events the prediction
// filter's, comma-joined.
func webhookColumns(t *gengate.Task) (events, format string) {
	if slices.Equal(t.WebhookEvents, gengate.FalWebhookEvents) {
		return "", falFormat
	}
	return strings.Join(t.WebhookEvents, ","), ""
}

// eventID is the SQL expression of a new event's id: "msg_" and a random
// (version 4) UUID in its text form, like "msg_"+gengate.NewID():
// gen_random_uuid on PostgreSQL, SQLite's randomblob (its generator is
// seeded from the operating system's) on SQLite.
func (s *DB) eventID() string {
	if s.postgres {
		return `'msg_' || gen_random_uuid()::text`
	}
	return `'msg_' || lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) ||
			'-' || substr('89ab', 1 + (random() & 3), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))`
}

// addStartEvents writes, in the claim's transaction on SQLite, the start
// event of each task with the ids (a JSON array: the claimed tasks the
// claim moved out of queued) that is a prediction whose filter has start
// and has no start event yet (a task queued again after a refused submit
// has one). PostgreSQL's claim function does the same
// (gengate_claim_steps_start). Each id is one look-up of task_webhooks'
// primary key, which most tasks are not in.
func (s *DB) addStartEvents(ctx context.Context, tx *sql.Tx, ids string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, task_id, url, type, created_at, next_at)
		SELECT `+s.eventID()+`, t.account_id, w.task_id, w.url, 'prediction.start', $2, $2
		FROM task_webhooks w JOIN tasks t ON t.id = w.task_id
		WHERE w.task_id IN (SELECT value FROM json_each($1)) AND ',' || w.events || ',' LIKE '%,start,%'
		AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.task_id = w.task_id AND e.type = 'prediction.start')`,
		ids, ms(now))
	return err
}

// WebhookSecret returns the account's signing keys, storing fresh as its
// secret when the account has none yet (the first caller's secret wins a
// race).
func (s *DB) WebhookSecret(ctx context.Context, accountID, fresh string, now time.Time) (gengate.WebhookKeys, error) {
	const q = `SELECT secret, previous, previous_until FROM webhook_secrets WHERE account_id = $1`
	k, err := scanWebhookKeys(s.reader().QueryRowContext(ctx, q, accountID))
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return k, err
	}
	err = s.write(ctx, func(ctx context.Context, db dbtx) error {
		_, err := db.ExecContext(ctx, `INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (account_id) DO NOTHING`, accountID, fresh, ms(now))
		return err
	})
	if err != nil {
		return k, err
	}
	return scanWebhookKeys(s.reader().QueryRowContext(ctx, q, accountID))
}

func scanWebhookKeys(row scanner) (gengate.WebhookKeys, error) {
	var k gengate.WebhookKeys
	var until int64
	err := row.Scan(&k.Secret, &k.Previous, &until)
	k.PreviousUntil = fromMS(until)
	return k, err
}

// RotateWebhookSecret makes fresh the current secret of the account
// (endpointID "") or of its endpoint, the current one the previous until
// the time.
func (s *DB) RotateWebhookSecret(ctx context.Context, accountID, endpointID, fresh string, until time.Time) error {
	q, args := `UPDATE webhook_secrets SET previous = secret, previous_until = $1, secret = $2 WHERE account_id = $3`,
		[]any{ms(until), fresh, accountID}
	if endpointID != "" {
		q = `UPDATE webhook_endpoints SET previous = secret, previous_until = $1, secret = $2 WHERE account_id = $3 AND id = $4`
		args = append(args, endpointID)
	}
	return s.write(ctx, func(ctx context.Context, db dbtx) error {
		return endpointChanged(db.ExecContext(ctx, q, args...))
	})
}

// endpointChanged is the error of a statement that must change the
// account's endpoint (or secret): its own, or NOT_FOUND when it changed
// no row.
func endpointChanged(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return err
		}
		return gengate.Errorf(gengate.ENotFound, "webhook endpoint not found")
	}
	return nil
}

const webhookEndpointColumns = `id, account_id, url, event_types, created_at, secret, previous, previous_until`

func scanWebhookEndpoint(row scanner) (*gengate.WebhookEndpoint, error) {
	e := &gengate.WebhookEndpoint{}
	var types string
	var created, until int64
	if err := row.Scan(&e.ID, &e.AccountID, &e.URL, &types, &created, &e.Keys.Secret, &e.Keys.Previous, &until); err != nil {
		return nil, err
	}
	e.EventTypes = strings.Split(types, ",")
	e.CreatedAt, e.Keys.PreviousUntil = fromMS(created), fromMS(until)
	return e, nil
}

// CreateWebhookEndpoint stores e unless its account has max endpoints
// already (EConflict). The count and the insert share a transaction in
// which, on PostgreSQL, the account's row is locked first, so concurrent
// creations cannot pass max together (SQLite has one writer).
func (s *DB) CreateWebhookEndpoint(ctx context.Context, e *gengate.WebhookEndpoint, max int) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if s.postgres { // serialize the account's creations
			if _, err := tx.ExecContext(ctx, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, e.AccountID); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = $1`, e.AccountID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return gengate.Errorf(gengate.EConflict, "the account has %d webhook endpoints, the most allowed (--max-webhook-endpoints); delete one first", n)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+webhookEndpointColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			e.ID, e.AccountID, e.URL, strings.Join(e.EventTypes, ","), ms(e.CreatedAt), e.Keys.Secret, e.Keys.Previous, ms(e.Keys.PreviousUntil))
		return err
	})
}

// WebhookEndpoints lists the account's endpoints, oldest first.
func (s *DB) WebhookEndpoints(ctx context.Context, accountID string) ([]*gengate.WebhookEndpoint, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE account_id = $1
		ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*gengate.WebhookEndpoint
	for rows.Next() {
		e, err := scanWebhookEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// WebhookEndpoint returns the account's endpoint.
func (s *DB) WebhookEndpoint(ctx context.Context, accountID, id string) (*gengate.WebhookEndpoint, error) {
	e, err := scanWebhookEndpoint(s.reader().QueryRowContext(ctx, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND account_id = $2`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gengate.Errorf(gengate.ENotFound, "webhook endpoint not found")
	}
	return e, err
}

// DeleteWebhookEndpoint deletes the account's endpoint, its events and
// their attempts. An attempt in flight then records nothing
// (RecordWebhookAttempt finds no event).
func (s *DB) DeleteWebhookEndpoint(ctx context.Context, accountID, id string) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := endpointChanged(tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, id, accountID)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_attempts WHERE event_id IN
			(SELECT id FROM webhook_events WHERE endpoint_id = $1)`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE endpoint_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM webhook_backoff WHERE account_id = $1 AND target = $2`, accountID, id)
		return err
	})
}

// WebhookAttempts lists the attempts of the account's endpoint's events,
// newest first (by time, then id), after the cursor, at most limit.
func (s *DB) WebhookAttempts(ctx context.Context, accountID, endpointID string, after *gengate.TaskCursor, limit int) ([]gengate.WebhookAttemptRecord, error) {
	if _, err := s.WebhookEndpoint(ctx, accountID, endpointID); err != nil {
		return nil, err
	}
	q := `SELECT a.id, a.n, a.at, a.status, a.error, ` + prefixed("e.", webhookEventColumns) + `
		FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
		WHERE e.endpoint_id = $1 AND e.account_id = $2`
	args := []any{endpointID, accountID, limit}
	if after != nil {
		q += ` AND (a.at < $4 OR (a.at = $4 AND a.id < $5))`
		args = append(args, ms(after.CreatedAt), after.ID)
	}
	rows, err := s.reader().QueryContext(ctx, q+` ORDER BY a.at DESC, a.id DESC LIMIT $3`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []gengate.WebhookAttemptRecord
	for rows.Next() {
		var r gengate.WebhookAttemptRecord
		var at int64
		e, err := scanWebhookEvent(prefixScanner{rows, []any{&r.ID, &r.N, &at, &r.Status, &r.Error}})
		if err != nil {
			return nil, err
		}
		r.At, r.Event = fromMS(at), *e
		out = append(out, r)
	}
	return out, rows.Err()
}

// prefixScanner scans a row's first columns into head, the rest into what
// Scan is given.
type prefixScanner struct {
	row  scanner
	head []any
}

func (p prefixScanner) Scan(dest ...any) error { return p.row.Scan(append(p.head, dest...)...) }

func prefixed(p, columns string) string {
	cols := strings.Split(columns, ", ")
	for i := range cols {
		cols[i] = p + cols[i]
	}
	return strings.Join(cols, ", ")
}

// ReplayWebhookEvent makes the account's event pending and due at now,
// with a fresh retry schedule; its id (the webhook-id) stays.
func (s *DB) ReplayWebhookEvent(ctx context.Context, accountID, eventID string, now time.Time) (*gengate.WebhookEvent, error) {
	var e *gengate.WebhookEvent
	err := s.write(ctx, func(ctx context.Context, db dbtx) error {
		var err error
		e, err = scanWebhookEvent(db.QueryRowContext(ctx, `UPDATE webhook_events SET status = 'pending', next_at = $1,
			schedule_from = attempts WHERE id = $2 AND account_id = $3 RETURNING `+webhookEventColumns, ms(now), eventID, accountID))
		if errors.Is(err, sql.ErrNoRows) {
			return gengate.Errorf(gengate.ENotFound, "webhook event not found")
		}
		return err
	})
	return e, err
}

const webhookEventColumns = `id, account_id, task_id, url, type, created_at, status, attempts, next_at, delivered_at, last_status, last_error, endpoint_id, schedule_from, logs`

func scanWebhookEvent(row scanner) (*gengate.WebhookEvent, error) {
	e := &gengate.WebhookEvent{}
	var created, next, delivered int64
	err := row.Scan(&e.ID, &e.AccountID, &e.TaskID, &e.URL, &e.Type, &created, &e.Status, &e.Attempts, &next,
		&delivered, &e.LastStatus, &e.LastError, &e.EndpointID, &e.ScheduleFrom, &e.Logs)
	if err != nil {
		return nil, err
	}
	e.CreatedAt, e.NextAt, e.DeliveredAt = fromMS(created), fromMS(next), fromMS(delivered)
	return e, nil
}

// ClaimWebhookEvent leases the earliest due pending event for lease and
// counts the attempt it is for (Attempts), or returns nil when none is due.
// It passes over the events
//   - of an account with perAccount events in flight already (leased,
//     over every process; perAccount <= 0: no cap), so that one account's
//     slow receivers hold at most perAccount of the delivery workers;
//   - of a target in backoff (webhook_backoff: it failed, and its pause
//     has not passed), or that failed and has an attempt in flight: after
//     a pause one attempt probes the target alone;
//   - of a task's own webhookUrl while an earlier event of the task to
//     that URL is pending (in flight, or waiting for its next attempt):
//     a task's events reach its webhookUrl in the order they were
//     written (by time; the events of one transaction, a prediction's
//     output and completed, in predictionOrderOf's order).
//
// Two processes never hold the same event: the lease is taken by one
// conditional UPDATE, whose conditions PostgreSQL rechecks on a row another
// transaction changed meanwhile. The account cap is checked by the read
// before it, so two processes claiming at the same moment may pass it by
// one each; a delivery loop claims one event at a time.
func (s *DB) ClaimWebhookEvent(ctx context.Context, now time.Time, lease time.Duration, perAccount int) (*gengate.WebhookEvent, error) {
	if perAccount <= 0 {
		perAccount = math.MaxInt32
	}
	var id string
	err := s.reader().QueryRowContext(ctx, claimWebhookQuery, ms(now), perAccount).Scan(&id)
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

// claimWebhookQuery is ClaimWebhookEvent's read: $1 now, $2 the most
// events of one account in flight. The events in flight are those of
// webhook_events_leased (lease_until > 0 is written out so that both
// planners use that partial index); an event's target is its endpoint, or
// for a task's own webhookUrl (endpoint_id ”) its URL.
var claimWebhookQuery = `SELECT e.id FROM webhook_events e
	WHERE e.status = 'pending' AND e.next_at <= $1 AND e.lease_until <= $1
	AND e.account_id NOT IN (SELECT f.account_id FROM webhook_events f
		WHERE f.status = 'pending' AND f.lease_until > 0 AND f.lease_until > $1
		GROUP BY f.account_id HAVING COUNT(*) >= $2)
	AND NOT EXISTS (SELECT 1 FROM webhook_backoff b
		WHERE b.account_id = e.account_id AND b.target = CASE WHEN e.endpoint_id = '' THEN e.url ELSE e.endpoint_id END
		AND (b.until_at > $1 OR EXISTS (SELECT 1 FROM webhook_events f
			WHERE f.status = 'pending' AND f.lease_until > 0 AND f.lease_until > $1
			AND f.account_id = e.account_id AND f.endpoint_id = e.endpoint_id AND f.url = e.url)))
	AND (e.endpoint_id <> '' OR NOT EXISTS (SELECT 1 FROM webhook_events p
		WHERE p.task_id = e.task_id AND p.endpoint_id = '' AND p.url = e.url AND p.status = 'pending'
		AND (p.created_at < e.created_at OR (p.created_at = e.created_at AND ` + predictionOrderOf("p") + ` < ` + predictionOrderOf("e") + `))))
	ORDER BY e.next_at LIMIT 1`

// predictionOrderOf is the SQL rank of the type of the event of alias
// a among the events of one task written at one time: a prediction's
// start, logs and output come before any other (its completed, or a
// final-state event).
func predictionOrderOf(a string) string {
	return `CASE ` + a + `.type WHEN 'prediction.start' THEN 0 WHEN 'prediction.logs' THEN 1 WHEN 'prediction.output' THEN 2 ELSE 3 END`
}

// RecordWebhookAttempt records attempt a of the claimed event e and moves
// the event on as o says: delivered, pending again at o.Next, or failed
// (the schedule spent); it keeps the event's newest o.KeepAttempts
// attempts. A success ends its target's backoff; a failure counts one
// more in a row and pauses the target for o.Backoff of that count: its
// other pending events not in flight become due no sooner than the pause
// ends. It does nothing when the claim was superseded (its lease ran out
// and another process claimed the event again).
func (s *DB) RecordWebhookAttempt(ctx context.Context, e *gengate.WebhookEvent, a gengate.WebhookAttempt, o gengate.WebhookOutcome) error {
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		delivered := int64(0)
		if o.Status == "delivered" {
			delivered = ms(a.At)
		}
		res, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, next_at = $2, lease_until = 0, last_status = $3,
			last_error = $4, delivered_at = $5 WHERE id = $6 AND attempts = $7 AND status = 'pending'`,
			o.Status, ms(o.Next), a.Status, a.Error, delivered, e.ID, e.Attempts)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO webhook_attempts (id, event_id, n, at, status, error) VALUES ($1, $2, $3, $4, $5, $6)`,
			gengate.NewID(), e.ID, a.N, ms(a.At), a.Status, a.Error); err != nil {
			return err
		}
		if o.KeepAttempts > 0 && a.N > o.KeepAttempts {
			if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_attempts WHERE event_id = $1 AND n <= $2`, e.ID, a.N-o.KeepAttempts); err != nil {
				return err
			}
		}
		return s.recordTarget(ctx, tx, e, a, o)
	})
}

// recordTarget moves the backoff of e's target on after attempt a.
func (s *DB) recordTarget(ctx context.Context, tx *sql.Tx, e *gengate.WebhookEvent, a gengate.WebhookAttempt, o gengate.WebhookOutcome) error {
	target := e.Target()
	if a.Error == "" {
		_, err := tx.ExecContext(ctx, `DELETE FROM webhook_backoff WHERE account_id = $1 AND target = $2`, e.AccountID, target)
		return err
	}
	if o.Backoff == nil {
		return nil
	}
	var failures int
	if err := tx.QueryRowContext(ctx, `INSERT INTO webhook_backoff (account_id, target, failures, until_at) VALUES ($1, $2, 1, 0)
		ON CONFLICT (account_id, target) DO UPDATE SET failures = webhook_backoff.failures + 1 RETURNING failures`,
		e.AccountID, target).Scan(&failures); err != nil {
		return err
	}
	until := ms(a.At.Add(o.Backoff(failures)))
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_backoff SET until_at = $1 WHERE account_id = $2 AND target = $3`,
		until, e.AccountID, target); err != nil {
		return err
	}
	if e.EndpointID == "" {
		return nil // a task's own webhookUrl: its events are few, the claim passes over them
	}
	// The endpoint's other events wait for the pause too, so that a claim
	// does not walk past them while it lasts (at most the endpoint's
	// bound of them).
	_, err := tx.ExecContext(ctx, `UPDATE webhook_events SET next_at = $1 WHERE status = 'pending' AND next_at < $1
		AND lease_until <= $2 AND endpoint_id = $3 AND account_id = $4 AND id <> $5`,
		until, ms(a.At), e.EndpointID, e.AccountID, e.ID)
	return err
}

// WebhookEvents returns the events of a task of the account, oldest first
// (those written together in the order they are delivered), each with
// its attempts.
func (s *DB) WebhookEvents(ctx context.Context, accountID, taskID string) ([]*gengate.WebhookEvent, map[string][]gengate.WebhookAttempt, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT `+webhookEventColumns+` FROM webhook_events e WHERE task_id = $1 AND account_id = $2
		ORDER BY created_at, `+predictionOrderOf("e")+`, id`, taskID, accountID)
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
