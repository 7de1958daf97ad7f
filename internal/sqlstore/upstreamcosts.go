package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gengate/gengate"
)

var _ gengate.CostStore = (*DB)(nil)

// costKeep is how long upstream cost rows outlive the task retention cut
// (PurgeTasks): the 30-day sums stay whole under a shorter retention.
const costKeep = gengate.CostWindow + 24*time.Hour

// upstreamCostColumns are the columns of an upstream cost's row, in the
// order of upstreamCostArgs.
const upstreamCostColumns = `task_id, model_id, engine, upstream, credits, micro_usd, basis, completed_at`

// upstreamCostArgs is t's upstream cost's row, or nil when it has none to
// record (only a succeeded task's is).
func upstreamCostArgs(t *gengate.Task) []any {
	if t.Status != gengate.StatusSucceeded || t.UpstreamCost == nil {
		return nil
	}
	c := t.UpstreamCost
	micro := sql.NullInt64{Int64: c.MicroUSD, Valid: c.Known}
	return []any{t.ID, t.ModelID, t.Engine, t.Route.Upstream, t.Cost, micro, c.Basis, ms(t.CompletedAt)}
}

// insertUpstreamCost records a succeeded task's upstream cost (its row of
// upstreamCostArgs) in the transaction that finishes it; a second finish
// of the same task (a step run again) changes nothing.
func insertUpstreamCost(ctx context.Context, tx execer, row []any) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO upstream_costs (`+upstreamCostColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (task_id) DO NOTHING`, row...)
	return err
}

// UpstreamCosts sums the recorded tasks completed at or after since, by
// model and provider (gengate.CostStore).
func (s *DB) UpstreamCosts(ctx context.Context, since time.Time) ([]gengate.ModelCost, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT model_id, engine, COUNT(*), SUM(credits), COUNT(micro_usd),
		COALESCE(SUM(CASE WHEN micro_usd IS NULL THEN 0 ELSE credits END), 0), COALESCE(SUM(micro_usd), 0)
		FROM upstream_costs WHERE completed_at >= $1 GROUP BY model_id, engine ORDER BY model_id, engine`, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []gengate.ModelCost
	for rows.Next() {
		var c gengate.ModelCost
		if err := rows.Scan(&c.ModelID, &c.Engine, &c.Tasks, &c.Credits, &c.Priced, &c.PricedCredits, &c.UpstreamMicroUSD); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
