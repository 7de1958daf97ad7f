package sqlstore

// Task steps saved together.
//
// Every task's way through the workers ends each step with SaveStep: the
// step's record (submitted, its upstream id, the next poll's time) written
// under the claim's lease, and the lease given up. With many workers these
// writes arrive together, one per task, as many as the creations. Made
// one by one, each cost a statement of its own: on SQLite a savepoint, the
// UPDATE and its fixed costs (a table built for each IN list of the
// statement and of the table's constraints and partial indexes) on the one
// writer; on PostgreSQL a round trip, a transaction and its commit.
//
// So the plain step records (those that give the lease up, under a lease
// token) are written together, in one UPDATE of many rows, each row under
// its own lease guard (its token, an active status): the rows it updated
// are the steps saved; a row it did not update is answered EConflict, as
// its own UPDATE would have been. Rows are independent (each task its own
// row, under its own lease), so one statement for all of them writes what
// the statements one by one would have, in some order of theirs, and two
// records for one task never share a statement (the second is written
// alone).
//
//   - SQLite: the writer (groupcommit.go) saves the plain steps of its batch
//     in one savepoint, after the batch's creations. If the statement
//     fails, the savepoint is rolled back and each step is written alone,
//     as before, so one bad row fails only its own step. Their answers
//     come after the batch's COMMIT, like every other write's.
//   - PostgreSQL: one batch of steps is in flight at a time; the steps that
//     arrive meanwhile go in the next, sent as soon as the previous one
//     returns (an idle server sends a lone step at once, in its own
//     statement, which is in flight as a batch is), or after a wait of
//     at most --db-batch-wait for a wave of records (see newPGStepSaver). The batch
//     is one statement, its own transaction: no caller hears of its step
//     before its COMMIT returned. An ERROR from PostgreSQL (nothing
//     written) sends each step alone; a batch whose fate is unknown (the
//     connection broke) answers every caller with the error, which a
//     worker treats as it treats a failed SaveStep: the lease runs out and
//     the task is claimed again.

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gengate/gengate"
)

// stepCols is the number of values of a step record in a grouped UPDATE:
// the 13 of taskUpdate's SET and WHERE id, then the lease token.
const stepCols = 14

// groupable reports whether the step record may be written with others:
// it gives the lease up, and the lease token guards it.
func (u *taskUpdate) groupable() bool { return u.release && u.token != "" }

// values is the record's row in a grouped UPDATE (stepCols values): its
// arguments, which end with the token when it has one.
func (u *taskUpdate) values() []any { return u.args[:stepCols] }

// stepUpdates[n] is SQLite's UPDATE of n step records (n up to
// exactSizes, or maxInsertRows: createbatch.go's chunks). The rows of
// VALUES are read one by one, each task found by its id.
var stepUpdates = func() map[int]string {
	m := map[int]string{}
	for n := 1; n <= maxInsertRows; n++ {
		if n > exactSizes && n < maxInsertRows {
			continue
		}
		m[n] = `UPDATE tasks SET status = v.column1, upstream_id = v.column2, run_at = v.column3, error_code = v.column4,
			error_message = v.column5, input_fault = v.column6, review_reason = v.column7, updated_at = v.column8,
			completed_at = v.column9, attempts = v.column11, engine = v.column12, route = v.column13,
			lease_token = '', lease_until = 0
			FROM (VALUES ` + rows(n, stepCols) + `) AS v
			WHERE tasks.id = v.column10 AND tasks.lease_token = v.column14 AND ` + tasksIsActive + `
			RETURNING id`
	}
	return m
}()

// saveStepsTogether writes the plain step records among the jobs of batch
// (those with a step whose caller is still there, one per task) in one
// savepoint of tx; it marks them in made and sets errs for those whose
// lease no longer held. It returns an error only when the savepoint
// itself fails; a failure of the group's statements undoes the group and
// leaves each step to be written alone.
func (w *groupWriter) saveStepsTogether(ctx context.Context, tx *sql.Tx, batch []*writeJob, made []bool, errs []error) error {
	var group []int
	seen := map[string]bool{}
	for i, j := range batch {
		if j.step == nil || made[i] || j.ctx.Err() != nil || seen[j.step.id] {
			continue
		}
		seen[j.step.id] = true
		group = append(group, i)
	}
	if len(group) < 2 {
		return nil
	}
	var saved map[string]bool
	kept, err := tryGroup(ctx, tx, "steps", func() (err error) {
		recs := make([]*taskUpdate, len(group))
		for k, i := range group {
			recs[k] = batch[i].step
		}
		saved, err = updateRecords(ctx, tx, recs)
		return err
	})
	if err != nil || !kept {
		return err // !kept: each is written alone
	}
	for _, i := range group {
		made[i] = true
		if !saved[batch[i].step.id] {
			errs[i] = batch[i].step.conflict()
		}
	}
	w.stepGroups.Add(1)
	w.stepItems.Add(int64(len(group)))
	return nil
}

// tryGroup runs fn, the statements of a group of writes, in SAVEPOINT
// name of tx. If fn fails (or panics), the savepoint is rolled back and
// kept is false: nothing of the group is written, and each of its writes
// is then made alone. It returns an error only when the savepoint's own
// statements fail (the batch then fails as a whole).
func tryGroup(ctx context.Context, tx *sql.Tx, name string, fn func() error) (kept bool, err error) {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT `+name); err != nil {
		return false, err
	}
	failed := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("group %s panicked: %v", name, r)
			}
		}()
		return fn()
	}()
	if failed != nil {
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO `+name); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `RELEASE `+name); err != nil {
		return false, err
	}
	return failed == nil, nil
}

// updateRecords writes step records (each of a different task) with the
// grouped UPDATEs of stepUpdates, in chunks, and returns the ids of the
// tasks they updated: a record whose lease guard did not hold is absent.
func updateRecords(ctx context.Context, tx *sql.Tx, recs []*taskUpdate) (saved map[string]bool, err error) {
	saved = make(map[string]bool, len(recs))
	for rest := recs; len(rest) > 0; {
		n := chunk(len(rest))
		args := make([]any, 0, n*stepCols)
		for _, u := range rest[:n] {
			args = append(args, u.values()...)
		}
		if err := collectIDs(ctx, tx, stepUpdates[n], args, saved); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return saved, nil
}

// collectIDs runs a statement that returns task ids and adds them to ids.
func collectIDs(ctx context.Context, q querier, query string, args []any, ids map[string]bool) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids[id] = true
	}
	return rows.Err()
}

// pgSaveStepsSQL writes step records given as arrays, one element per
// record, in stepCols order: gengate_save_steps (migration 00043) is the
// UPDATE of SQLite's stepUpdates, in a function whose settings keep its
// plan on the primary key whatever the table's statistics say.
const pgSaveStepsSQL = `SELECT * FROM gengate_save_steps($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
	$6::int[], $7::text[], $8::bigint[], $9::bigint[], $10::text[], $11::int[], $12::text[], $13::text[], $14::text[])`

// pgStepMax is the most step records one PostgreSQL batch writes.
const pgStepMax = 128

// batchJob is one caller's record in a batch of a PostgreSQL saver (of
// step records here, of finishes in finishbatch.go): its task's update,
// and the outcome the saver sets for the caller.
type batchJob struct {
	ctx   context.Context
	u     *taskUpdate
	err   error
	alone bool // to be written by its caller, alone, after the batch
}

func (j *batchJob) job() *batchJob { return j }

// batched is a saver's job: a batchJob, with whatever else it writes.
type batched interface{ job() *batchJob }

// liveJobs returns the jobs of a batch to write together. A job whose
// caller went away gets its context's error (nothing written); a second
// record of one task is sent back to be written alone, after the batch,
// never in one statement with the first.
func liveJobs[J batched](batch []J) (live []J) {
	seen := map[string]bool{}
	for _, j := range batch {
		b := j.job()
		switch {
		case b.ctx.Err() != nil:
			b.err = b.ctx.Err()
		case seen[b.u.id]:
			b.alone = true
		default:
			seen[b.u.id] = true
			live = append(live, j)
		}
	}
	return live
}

// settleJobs sets the outcome of the jobs written together, given the
// tasks whose update held (saved) or the batch's error: refused by
// PostgreSQL (nothing written), each job is written alone; of unknown
// fate (the connection broke), each caller gets the error, as after any
// failed write of its own; written, a job whose lease no longer held is
// EConflict, as its own statement would have been.
func settleJobs[J batched](live []J, saved map[string]bool, err error) {
	refused := err != nil && refusedByServer(err)
	for _, j := range live {
		b := j.job()
		switch {
		case refused:
			b.alone = true
		case err != nil:
			b.err = err
		case !saved[b.u.id]:
			b.err = b.u.conflict()
		}
	}
}

// stepJob is a step record in a batch.
type stepJob = batchJob

// pgStepSaver gathers step records into batches on PostgreSQL (see the
// file comment).
type pgStepSaver struct {
	db      *sql.DB
	timeout time.Duration // --db-batch-timeout: the longest one batch may take
	gather  *gatherer[*stepJob]

	batches, items atomic.Int64 // sent so far (tests)
}

func newPGStepSaver(db *sql.DB, wait, timeout time.Duration) *pgStepSaver {
	p := &pgStepSaver{db: db, timeout: timeout}
	// The steps of one claim end together, so their records come in a
	// wave: once a batch of several has been written, the next waits, up
	// to --db-batch-wait, until as many are queued as it held (as the
	// creations' batcher does), so that a wave goes in one batch rather
	// than its first record alone and the rest behind it: one round trip
	// less on each wave's way back to the claimer. A lone record expects
	// no wave, and nothing queued is nothing to wait for.
	p.gather = newGatherer(pgStepMax, wait, false, wave, p.send)
	return p
}

// wave is the gatherer's next for the records of a claim, which end
// together: after a batch of n > 1, wait for as many.
func wave(n, queued int) int {
	if n > 1 {
		return min(pgStepMax, n)
	}
	return 0
}

// save writes the step record u in the next batch, or alone.
func (p *pgStepSaver) save(ctx context.Context, u *taskUpdate) error {
	j := &stepJob{ctx: ctx, u: u}
	p.gather.add(j)
	if j.alone {
		return u.run(ctx, p.db)
	}
	return j.err
}

// send writes the batch's records in one statement and sets each job's
// outcome; the caller then answers them.
func (p *pgStepSaver) send(batch []*stepJob) {
	live := liveJobs(batch)
	if len(live) == 0 {
		return // every caller went away: nothing to write
	}
	// Never cancelled by a caller (the batch is every caller's), but
	// bounded, as the creations' batches are (pgcreate.go).
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if len(live) == 1 {
		// Its own statement, sent from here all the same: the records
		// that arrive meanwhile wait for it and go together.
		live[0].err = live[0].u.run(ctx, p.db)
		return
	}
	records := make([][]any, len(live))
	for i, j := range live {
		records[i] = j.u.values()
	}
	p.batches.Add(1)
	p.items.Add(int64(len(live)))
	saved := make(map[string]bool, len(live))
	err := collectIDs(ctx, p.db, pgSaveStepsSQL, columns(records, stepCols), saved)
	settleJobs(live, saved, err)
}

// columns turns rows (each of cols values) into cols arrays, one
// parameter each.
func columns(rows [][]any, cols int) []any {
	out := make([]any, cols)
	col := make([]any, len(rows))
	for c := range cols {
		for i, r := range rows {
			col[i] = r[c]
		}
		out[c] = pgArray(col)
	}
	return out
}

// pgArray makes one column of a batch a typed Go slice, which the driver
// sends as a PostgreSQL array.
func pgArray(col []any) any {
	switch col[0].(type) {
	case int64:
		out := make([]int64, len(col))
		for i, v := range col {
			out[i] = v.(int64)
		}
		return out
	case int:
		out := make([]int64, len(col))
		for i, v := range col {
			out[i] = int64(v.(int))
		}
		return out
	case sql.NullInt64:
		out := make([]*int64, len(col))
		for i, v := range col {
			if n := v.(sql.NullInt64); n.Valid {
				out[i] = &n.Int64
			}
		}
		return out
	}
	out := make([]string, len(col))
	for i, v := range col {
		switch v := v.(type) {
		case string:
			out[i] = v
		case gengate.Status:
			out[i] = string(v)
		default:
			out[i] = fmt.Sprint(v)
		}
	}
	return out
}
