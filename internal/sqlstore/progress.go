package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gengate/gengate"
)

// SaveProgress keeps the task's latest progress report (table
// task_progress), replacing the one before; see gengate.ProgressStore. In
// the same transaction it writes the logs event of a prediction whose
// filter has logs (progressLogsEvent).
func (s *DB) SaveProgress(ctx context.Context, taskID string, r *gengate.Report) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	const save = `INSERT INTO task_progress (task_id, report, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (task_id) DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at`
	args := []any{taskID, string(b), ms(r.At), strings.Join(r.Logs, "\n"), ms(r.At.Add(-gengate.PredictionLogsInterval))}
	return s.write(ctx, func(ctx context.Context, q dbtx) error {
		if s.postgres {
			// One statement, one round trip, as before the event.
			_, err := q.ExecContext(ctx, `WITH saved AS (`+save+` RETURNING task_id) `+progressLogsEvent(s.eventID()), args...)
			return err
		}
		if _, err := q.ExecContext(ctx, save, args[:3]...); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, progressLogsEvent(s.eventID()), args...)
		return err
	})
}

// progressLogsEvent is the statement that writes a prediction's logs event
// for a progress report ($1 the task, $3 the report's time, $4 its log
// lines newline-joined, $5 the time PredictionLogsInterval before; $2,
// the report, is the save's): when the task is a prediction whose filter
// has logs, the report has lines, they differ from those of its last logs
// event (none: empty), and that event is older than the interval. A
// change within the interval is sent with the next report after it
// (workers save one at every check of the upstream), or by completed. For
// any other task it is one look-up of task_webhooks' primary key.
func progressLogsEvent(id string) string {
	return `INSERT INTO webhook_events (id, account_id, task_id, url, type, created_at, next_at, logs)
		SELECT ` + id + `, t.account_id, w.task_id, w.url, 'prediction.logs', $3, $3, $4
		FROM task_webhooks w JOIN tasks t ON t.id = w.task_id
		WHERE w.task_id = $1 AND ',' || w.events || ',' LIKE '%,logs,%'
		AND CAST($4 AS TEXT) <> '' AND CAST($4 AS TEXT) <> COALESCE((SELECT e.logs FROM webhook_events e WHERE e.task_id = $1 AND e.type = 'prediction.logs'
			ORDER BY e.created_at DESC LIMIT 1), '')
		AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.task_id = $1 AND e.type = 'prediction.logs' AND e.created_at > $5)`
}

// FindProgress returns the task's latest progress report, nil when there
// is none.
func (s *DB) FindProgress(ctx context.Context, taskID string) (*gengate.Report, error) {
	var raw string
	err := s.reader().QueryRowContext(ctx, `SELECT report FROM task_progress WHERE task_id = $1`, taskID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &gengate.Report{}
	if err := json.Unmarshal([]byte(raw), r); err != nil {
		return nil, err
	}
	return r, nil
}
