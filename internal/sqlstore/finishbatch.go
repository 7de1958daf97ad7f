package sqlstore

// Task finishes written together, on SQLite's writer and at PostgreSQL's
// batcher (the PostgreSQL part is at the end of the file).
//
// Every task that succeeds ends with FinishTask: its final record under
// the claim's lease, a creations row for each output, its upstream cost,
// and the webhook outbox's events. Made one by one on the writer, each
// finish cost a SAVEPOINT, the UPDATE, an INSERT per output, the cost's
// INSERT, the outbox's INSERT … SELECT and a RELEASE; with many workers
// the finishes arrive together, as the step records do (stepbatch.go),
// and they were the largest part of the writer's work per task.
//
// So on SQLite the plain finishes of a batch (those that refund nothing
// and give the lease up under its token; at least two, one per task) are
// written together, in one savepoint:
//
//  1. one UPDATE of many rows, each under its own lease guard (the step
//     records' statement: a finish is a step record that ends the task);
//     the rows it updated are the finishes that hold, and the others are
//     answered EConflict, as their own UPDATE would have been;
//  2. the creations of the finishes that hold, in multi-row INSERTs;
//  3. their upstream costs, in multi-row INSERTs;
//  4. each one's outbox statements, which depend on its task's webhooks
//     and its account's endpoints, one finish after the other.
//
// A statement that fails rolls the group back to its savepoint, and each
// finish is then written alone, as before, so one bad finish fails only
// itself. A finish with a refund (a failed or cancelled task: the
// account's balance, the ledger and the key's spend) is always written
// alone. The answers come after the batch's COMMIT, like every other
// write's.

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// groupFinish is a plain finish sent to the writer: the task's final
// record and its rows' parameters, made by the caller's goroutine.
type groupFinish struct {
	u         *taskUpdate
	creations [][]any // one row of creationCols per output
	cost      []any   // the upstream cost's row (costCols), or nil
	// outbox writes the finish's webhook events once its record holds.
	outbox writeFunc
}

const (
	creationCols = 11 // creationColumns
	costCols     = 8  // upstreamCostColumns
)

// creationInserts[n] and costInserts[n] insert n rows (n up to
// exactSizes, or maxInsertRows, as createbatch.go's INSERTs do).
var creationInserts, costInserts = func() (creations, costs map[int]string) {
	creations, costs = map[int]string{}, map[int]string{}
	for n := 1; n <= maxInsertRows; n++ {
		if n > exactSizes && n < maxInsertRows {
			continue
		}
		creations[n] = `INSERT INTO creations (` + creationColumns + `) VALUES ` + rows(n, creationCols)
		costs[n] = `INSERT INTO upstream_costs (` + upstreamCostColumns + `) VALUES ` + rows(n, costCols) +
			` ON CONFLICT (task_id) DO NOTHING`
	}
	return creations, costs
}()

// finishTogether writes the plain finishes among the jobs of batch (one
// per task, none of a task whose step record the batch holds too) in one
// savepoint of tx; it marks them in made and sets errs for those whose
// lease no longer held. It returns an error only when the savepoint itself
// fails; a failure of the group's statements undoes the group and leaves
// each finish to be written alone.
func (w *groupWriter) finishTogether(ctx context.Context, tx *sql.Tx, batch []*writeJob, made []bool, errs []error) error {
	count := map[string]int{}
	for _, j := range batch {
		switch {
		case j.finish != nil:
			count[j.finish.u.id]++
		case j.step != nil:
			count[j.step.id]++
		}
	}
	var group []int
	for i, j := range batch {
		if j.finish == nil || made[i] || j.ctx.Err() != nil || count[j.finish.u.id] > 1 {
			continue
		}
		group = append(group, i)
	}
	if len(group) < 2 {
		return nil
	}
	var saved map[string]bool
	kept, err := tryGroup(ctx, tx, "finishes", func() (err error) {
		saved, err = runFinishes(ctx, tx, batch, group)
		return err
	})
	if err != nil || !kept {
		return err // !kept: each is written alone
	}
	for _, i := range group {
		made[i] = true
		if !saved[batch[i].finish.u.id] {
			errs[i] = batch[i].finish.u.conflict()
		}
	}
	w.finishGroups.Add(1)
	w.finishItems.Add(int64(len(group)))
	return nil
}

// runFinishes runs the group's statements and returns the ids of the
// tasks whose finish held.
func runFinishes(ctx context.Context, tx *sql.Tx, batch []*writeJob, group []int) (map[string]bool, error) {
	recs := make([]*taskUpdate, len(group))
	for k, i := range group {
		recs[k] = batch[i].finish.u
	}
	saved, err := updateRecords(ctx, tx, recs)
	if err != nil {
		return nil, err
	}
	var creations, costs [][]any
	var held []*groupFinish
	for _, i := range group {
		f := batch[i].finish
		if !saved[f.u.id] {
			continue
		}
		held = append(held, f)
		creations = append(creations, f.creations...)
		if f.cost != nil {
			costs = append(costs, f.cost)
		}
	}
	if err := insertRows(ctx, tx, creationInserts, creationCols, creations); err != nil {
		return nil, err
	}
	if err := insertRows(ctx, tx, costInserts, costCols, costs); err != nil {
		return nil, err
	}
	for _, f := range held {
		if err := f.outbox(ctx, tx); err != nil {
			return nil, err
		}
	}
	return saved, nil
}

// insertRows inserts rows (each of cols values) with the statements of
// inserts, in chunks of chunk's sizes.
func insertRows(ctx context.Context, tx *sql.Tx, inserts map[int]string, cols int, rows [][]any) error {
	for rest := rows; len(rest) > 0; {
		n := chunk(len(rest))
		args := make([]any, 0, n*cols)
		for _, r := range rest[:n] {
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, inserts[n], args...); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// On PostgreSQL a finish was a transaction of its own: BEGIN, the UPDATE,
// an INSERT per output, the cost's INSERT, the outbox's INSERT … SELECT,
// pg_notify and COMMIT, each a round trip. The plain finishes that arrive
// together are written together instead, in one transaction: the grouped
// UPDATE (gengate_save_steps, the step records' function), one INSERT of
// all their creations and one of their costs (from arrays), then each
// held finish's outbox statements, and one COMMIT. One batch is in flight
// at a time, gathered as the step records' are (stepbatch.go). A batch
// that PostgreSQL refuses (an ERROR: nothing of it was written) sends each
// finish alone; a batch whose fate is unknown (the connection broke, the
// COMMIT failed) answers every caller with the error, which a worker
// treats as it treats a failed finish: the lease runs out, the task is
// claimed again, and the finish written the first time, if it was, makes
// the second one a conflict.

// pgCreationsSQL and pgCostsSQL insert the creations and the upstream
// costs of a batch, given as arrays (one per column, in creationColumns'
// and upstreamCostColumns' orders).
const (
	pgCreationsSQL = `INSERT INTO creations (` + creationColumns + `) SELECT * FROM unnest($1::text[], $2::text[],
	$3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[])`
	pgCostsSQL = `INSERT INTO upstream_costs (` + upstreamCostColumns + `) SELECT * FROM unnest($1::text[], $2::text[],
	$3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::bigint[]) ON CONFLICT (task_id) DO NOTHING`
)

// finishJob is a finish in a batch.
type finishJob struct {
	batchJob // its task's final record: f.u
	f        *groupFinish
}

// pgFinishSaver gathers plain finishes into batches on PostgreSQL.
type pgFinishSaver struct {
	db      *sql.DB
	timeout time.Duration // --db-batch-timeout: the longest one batch may take
	gather  *gatherer[*finishJob]

	batches, items atomic.Int64 // committed so far (tests)
}

func newPGFinishSaver(db *sql.DB, wait, timeout time.Duration) *pgFinishSaver {
	p := &pgFinishSaver{db: db, timeout: timeout}
	p.gather = newGatherer(pgStepMax, wait, false, wave, p.send) // finishes come in waves too
	return p
}

// save writes f in the next batch, or runs alone, which writes it in a
// transaction of its own, when it cannot go with the others.
func (p *pgFinishSaver) save(ctx context.Context, f *groupFinish, alone func() error) error {
	j := &finishJob{batchJob: batchJob{ctx: ctx, u: f.u}, f: f}
	p.gather.add(j)
	if j.alone {
		return alone()
	}
	return j.err
}

func (p *pgFinishSaver) send(batch []*finishJob) {
	live := liveJobs(batch)
	switch len(live) {
	case 0:
		return // every caller went away: nothing to write
	case 1:
		live[0].alone = true // its own transaction, as before batching
		return
	}
	// Never cancelled by a caller (the batch is every caller's), but
	// bounded, as the other batches are.
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	saved, err := p.write(ctx, live)
	if err == nil {
		p.batches.Add(1)
		p.items.Add(int64(len(live)))
	}
	settleJobs(live, saved, err)
}

// write runs the batch's transaction and returns the ids of the tasks
// whose finish held.
func (p *pgFinishSaver) write(ctx context.Context, live []*finishJob) (saved map[string]bool, err error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	records := make([][]any, len(live))
	var creations, costs [][]any
	for i, j := range live {
		records[i] = j.u.values()
	}
	saved = make(map[string]bool, len(live))
	if err := collectIDs(ctx, tx, pgSaveStepsSQL, columns(records, stepCols), saved); err != nil {
		return nil, err
	}
	var held []*groupFinish
	for _, j := range live {
		if saved[j.u.id] {
			held = append(held, j.f)
			creations = append(creations, j.f.creations...)
			if j.f.cost != nil {
				costs = append(costs, j.f.cost)
			}
		}
	}
	if len(creations) > 0 {
		if _, err := tx.ExecContext(ctx, pgCreationsSQL, columns(creations, creationCols)...); err != nil {
			return nil, err
		}
	}
	if len(costs) > 0 {
		if _, err := tx.ExecContext(ctx, pgCostsSQL, columns(costs, costCols)...); err != nil {
			return nil, err
		}
	}
	for _, f := range held {
		if err := f.outbox(ctx, tx); err != nil {
			return nil, err
		}
	}
	return saved, tx.Commit()
}
