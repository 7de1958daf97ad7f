package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// Worker heartbeats: every worker process (roles all and worker) upserts
// its row every few seconds; /readyz of any process reads when a worker was
// last seen. A process that stops cleanly deletes its row; a killed one's
// row ages out (rows a day old are deleted by the next beat of any worker).

// HeartbeatRetention is how long a dead worker's row is kept.
const HeartbeatRetention = 24 * time.Hour

// Heartbeat records that the worker process owner is alive at now.
func (s *DB) Heartbeat(ctx context.Context, owner, role, version string, started, now time.Time) error {
	return s.write(ctx, func(ctx context.Context, q dbtx) error {
		_, err := q.ExecContext(ctx, `INSERT INTO worker_heartbeats (owner, role, version, started_at, seen_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (owner) DO UPDATE SET seen_at = excluded.seen_at`,
			owner, role, version, ms(started), ms(now))
		if err == nil {
			_, err = q.ExecContext(ctx, `DELETE FROM worker_heartbeats WHERE seen_at < $1`, ms(now.Add(-HeartbeatRetention)))
		}
		return err
	})
}

// ForgetWorker deletes the row of a worker process that stops cleanly.
func (s *DB) ForgetWorker(ctx context.Context, owner string) error {
	return s.write(ctx, func(ctx context.Context, q dbtx) error {
		_, err := q.ExecContext(ctx, `DELETE FROM worker_heartbeats WHERE owner = $1`, owner)
		return err
	})
}

// WorkersSeen returns how many worker processes beat at or after since,
// and when any worker last beat (zero when none ever did).
func (s *DB) WorkersSeen(ctx context.Context, since time.Time) (n int, last time.Time, err error) {
	var lastMS sql.NullInt64
	err = s.reader().QueryRowContext(ctx, `SELECT COUNT(CASE WHEN seen_at >= $1 THEN 1 END), MAX(seen_at) FROM worker_heartbeats`,
		ms(since)).Scan(&n, &lastMS)
	if err != nil || !lastMS.Valid {
		return n, time.Time{}, err
	}
	return n, time.UnixMilli(lastMS.Int64).UTC(), nil
}

// OldestQueued returns when the oldest task still queued (not yet taken
// by a worker) was created; ok is false when none is queued.
func (s *DB) OldestQueued(ctx context.Context) (created time.Time, ok bool, err error) {
	var v sql.NullInt64
	if err := s.reader().QueryRowContext(ctx, `SELECT MIN(created_at) FROM tasks WHERE status = 'queued'`).Scan(&v); err != nil {
		return time.Time{}, false, err
	}
	if !v.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(v.Int64).UTC(), true, nil
}

// QueueDepth counts the active tasks (the queue) by status: queued,
// submitting, running. It reads the tasks_due index, which holds only
// them, so it costs the queue's length, not the table's.
func (s *DB) QueueDepth(ctx context.Context) (map[string]int, error) {
	q := `SELECT status, COUNT(*) FROM tasks WHERE ` + isActive + ` GROUP BY status`
	if !s.postgres {
		q = `SELECT status, COUNT(*) FROM tasks INDEXED BY tasks_due WHERE ` + isActive + ` GROUP BY status`
	}
	rows, err := s.reader().QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{"queued": 0, "submitting": 0, "running": 0}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}
