package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/gengate/gengate"
)

// SaveProgress keeps the task's latest progress report (table
// task_progress), replacing the one before; see gengate.ProgressStore.
func (s *DB) SaveProgress(ctx context.Context, taskID string, r *gengate.Report) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, q dbtx) error {
		_, err := q.ExecContext(ctx, `INSERT INTO task_progress (task_id, report, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (task_id) DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at`,
			taskID, string(b), ms(r.At))
		return err
	})
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
