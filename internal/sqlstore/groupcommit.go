package sqlstore

// Group commit on SQLite.
//
// Every write of the store on SQLite is a job for one writer goroutine.
// The writer takes the jobs that are queued (at most the batch limit),
// runs them one after the other in one transaction, each inside its own
// SAVEPOINT, and commits once: one fsync (synchronous=FULL) for the whole
// batch. A job that returns an error (a refusal: too few credits, a used
// Idempotency-Key, the key's spend limit, a lease lost) is rolled back to
// its savepoint, so it changes nothing, and the others in the batch go on.
// Only a failure of the batch itself (BEGIN, SAVEPOINT, ROLLBACK TO,
// RELEASE or COMMIT: the disk, the lock, SQLite having dropped the
// transaction) fails it as a whole; then every job of the batch gets that
// error and none a success. No job's caller hears of its result before the
// COMMIT returned, so an answer is never sent for a write that is not on
// disk. The writer takes what is queued; when writes are arriving
// together (more than one was queued, or its last batch had several), it
// also gathers those that arrive within --sqlite-batch-wait (1ms), or
// until the batch is as large as the larger of its last two, so that one
// commit serves more of them; an idle writer commits a lone write at
// once. The plain task creations of a batch are made together
// (createbatch.go).
//
// docs/architecture.md ("A write's path on SQLite") tells the same.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSQLiteBatch is the default largest number of writes committed
// together in one SQLite transaction (serve --sqlite-batch).
const DefaultSQLiteBatch = 128

// MaxSQLiteBatch bounds --sqlite-batch: the writer's queue and each batch
// hold at most that many writes.
const MaxSQLiteBatch = 4096

// WithSQLiteBatch sets the largest number of writes the SQLite writer
// commits in one transaction (at least 1; 1 commits each write alone). It
// does not apply to PostgreSQL.
func WithSQLiteBatch(n int) Option {
	return func(o *options) { o.sqliteBatch = min(max(n, 1), MaxSQLiteBatch) }
}

// DefaultSQLiteBatchWait is the default of serve --sqlite-batch-wait: how
// long the writer, having found more than one write queued or having just
// committed several, waits for more before it begins the batch.
const DefaultSQLiteBatchWait = time.Millisecond

// MaxSQLiteBatchWait bounds --sqlite-batch-wait.
const MaxSQLiteBatchWait = 100 * time.Millisecond

// WithSQLiteBatchWait sets how long the SQLite writer, when writes are
// arriving together (more than one is queued, or its last batch had
// several), waits for more before it begins the batch (0: never; a lone
// write on an idle writer never waits). It does not apply to PostgreSQL.
func WithSQLiteBatchWait(d time.Duration) Option {
	return func(o *options) { o.sqliteWait = min(max(d, 0), MaxSQLiteBatchWait) }
}

// errClosed answers a write sent after the store was closed.
var errClosed = errors.New("sqlstore: database closed")

// writeFunc is one write: its statements on the batch's transaction. The
// context it is given is never cancelled (a cancelled statement would
// interrupt SQLite, which rolls back the whole transaction, the other
// writes of the batch with it).
type writeFunc func(ctx context.Context, tx *sql.Tx) error

type writeJob struct {
	ctx context.Context // the caller's: checked before the job runs
	fn  writeFunc
	// create, when set, is a plain task creation that the writer may make
	// with the others of its batch (createbatch.go); fn makes it alone.
	create *groupCreate
	// step, when set, is a plain step record that the writer may write
	// with the others of its batch (stepbatch.go); fn writes it alone.
	step *taskUpdate
	// finish, when set, is a plain finish that the writer may write with
	// the others of its batch (finishbatch.go); fn writes it alone.
	finish *groupFinish
	done   chan error // buffered: the writer never waits for a caller
	// sent and taken time its stages (writestages.go): when its caller
	// sent it, when the writer took it.
	sent, taken time.Time
}

// groupWriter is the one writer of a SQLite store.
type groupWriter struct {
	db   *sql.DB
	max  int
	wait time.Duration // how long a batch gathers when writes arrive together
	jobs chan *writeJob
	ckpt *checkpointer // told of each commit; nil: SQLite's own checkpoints
	// timeout bounds one batch, from BEGIN to COMMIT (--db-batch-timeout).
	timeout time.Duration

	mu     sync.RWMutex // held for reading while a job is sent; Close takes it to stop sends
	closed bool
	quit   chan struct{}
	ended  chan struct{}

	// createGroups and createItems count the groups of task creations
	// made together (createbatch.go) and the tasks they made.
	createGroups, createItems atomic.Int64
	// stepGroups and stepItems count the groups of step records written
	// together (stepbatch.go) and the records in them.
	stepGroups, stepItems atomic.Int64
	// finishGroups and finishItems count the groups of finishes written
	// together (finishbatch.go) and the finishes in them.
	finishGroups, finishItems atomic.Int64
	// batches, jobs and busy count the batches committed (or failed), the
	// writes in them and the time spent running them, COMMIT included:
	// the writer's work, which bounds what SQLite can do.
	batches, writes, busy atomic.Int64

	stages writeStages // where the writes' time went (writestages.go)

	// beforeCommit, when set (tests only), runs before each COMMIT; an
	// error fails the batch as a failed COMMIT would.
	beforeCommit func(jobs int) error
}

func newGroupWriter(db *sql.DB, limit int, wait, timeout time.Duration, ckpt *checkpointer) *groupWriter {
	w := &groupWriter{db: db, max: limit, wait: wait, timeout: timeout, jobs: make(chan *writeJob, limit), ckpt: ckpt,
		quit: make(chan struct{}), ended: make(chan struct{})}
	go w.run()
	return w
}

// do runs fn in one of the writer's batches and returns its result once
// the batch has committed (or failed). A caller whose context ends before
// its job is taken gets the context's error, and nothing is written; once
// taken, the job is answered whatever the context does, so a nil error
// always means committed.
func (w *groupWriter) do(ctx context.Context, fn writeFunc) error {
	return w.send(ctx, &writeJob{ctx: ctx, fn: fn})
}

// doCreate is do for a plain task creation: the writer makes c with the
// other creations of its batch (c.created is then set), or runs fn, which
// makes it alone.
func (w *groupWriter) doCreate(ctx context.Context, c *groupCreate, fn writeFunc) error {
	return w.send(ctx, &writeJob{ctx: ctx, fn: fn, create: c})
}

// doStep is do for a plain step record: the writer writes u with the
// other steps of its batch, or runs fn, which writes it alone.
func (w *groupWriter) doStep(ctx context.Context, u *taskUpdate, fn writeFunc) error {
	return w.send(ctx, &writeJob{ctx: ctx, fn: fn, step: u})
}

// doFinish is do for a plain finish: the writer writes f with the other
// finishes of its batch, or runs fn, which writes it alone.
func (w *groupWriter) doFinish(ctx context.Context, f *groupFinish, fn writeFunc) error {
	return w.send(ctx, &writeJob{ctx: ctx, fn: fn, finish: f})
}

func (w *groupWriter) send(ctx context.Context, j *writeJob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j.done = make(chan error, 1)
	j.sent = time.Now()
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return errClosed
	}
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	err := <-j.done
	w.stages.stages[StageTotal].observe(time.Since(j.sent))
	return err
}

// close lets the writer commit what is queued and stops it.
func (w *groupWriter) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.quit)
	}
	w.mu.Unlock()
	<-w.ended
}

func (w *groupWriter) run() {
	defer close(w.ended)
	batch := make([]*writeJob, 0, w.max)
	gather := time.NewTimer(time.Hour)
	gather.Stop()
	last, before := 0, 0 // the sizes of the last two batches
	for {
		select {
		case j := <-w.jobs:
			j.taken = time.Now()
			batch = append(batch[:0], j)
		case <-w.quit:
			// No job can be sent any more (closed is set under the
			// lock every sender holds): commit the ones queued.
			for {
				batch = batch[:0]
				for len(batch) < w.max && len(w.jobs) > 0 {
					j := <-w.jobs
					j.taken = time.Now()
					batch = append(batch, j)
				}
				if len(batch) == 0 {
					return
				}
				w.commit(batch)
			}
		}
		if w.wait > 0 && (len(w.jobs) > 0 || last > 1) {
			// Writes are arriving together (more are queued, or the
			// last batch had several: the clients of a busy server,
			// whose callers are coming back): gather the ones that
			// come in the next moment too, so that one commit, its
			// fsync and its pages serve more of them. A lone write on
			// an idle server is committed at once. Once the batch is
			// as large as the larger of the last two, the callers are
			// back: it stops gathering (whatever else is queued then
			// still joins it, so batches grow with the load).
			target := w.max
			if m := max(last, before); m > 1 {
				target = min(m, w.max)
			}
			gather.Reset(w.wait)
		wait:
			for len(batch) < target {
				select {
				case j := <-w.jobs:
					j.taken = time.Now()
					batch = append(batch, j)
				case <-gather.C:
					break wait
				case <-w.quit:
					break wait
				}
			}
			gather.Stop()
		}
	fill: // whatever else is queued
		for len(batch) < w.max {
			select {
			case j := <-w.jobs:
				j.taken = time.Now()
				batch = append(batch, j)
			default:
				break fill
			}
		}
		began := time.Now()
		w.commit(batch)
		w.busy.Add(int64(time.Since(began)))
		w.batches.Add(1)
		w.writes.Add(int64(len(batch)))
		last, before = len(batch), last
		if w.ckpt != nil {
			w.ckpt.committed()
			w.ckpt.writerTurn(w.db)
		}
	}
}

// commit runs the jobs in one transaction and answers each. The batch
// is every caller's, so no caller's context ends it; its deadline
// (w.timeout) does: a statement still running then is interrupted, and
// the transaction, which SQLite then rolls back, is not committed: every
// job of the batch fails and nothing of it is written. A COMMIT that has
// begun is not interrupted, so a nil answer still means committed.
func (w *groupWriter) commit(batch []*writeJob) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	errs := make([]error, len(batch))
	fail := func(err error) {
		for _, j := range batch {
			j.done <- err
		}
	}
	began := time.Now()
	tx, err := w.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): the write lock
	if err != nil {
		fail(err)
		return
	}
	abort := func(err error) {
		tx.Rollback()
		fail(fmt.Errorf("group commit of %d writes: %w", len(batch), err))
	}
	// The plain task creations first, together (createbatch.go): the
	// writes of one batch are concurrent, so any order is one they could
	// have arrived in.
	made := make([]bool, len(batch))
	if err := w.createTogether(ctx, tx, batch, made); err != nil {
		abort(err)
		return
	}
	// Then the plain step records, together (stepbatch.go).
	if err := w.saveStepsTogether(ctx, tx, batch, made, errs); err != nil {
		abort(err)
		return
	}
	// Then the plain finishes, together (finishbatch.go).
	if err := w.finishTogether(ctx, tx, batch, made, errs); err != nil {
		abort(err)
		return
	}
	for i, j := range batch {
		if made[i] {
			continue
		}
		if err := j.ctx.Err(); err != nil { // its caller is gone: not run
			errs[i] = err
			continue
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
			abort(err)
			return
		}
		errs[i] = runJob(ctx, j, tx)
		if errs[i] != nil {
			// A refusal (or a failed statement): undo this job's
			// statements only. If SQLite has dropped the whole
			// transaction (an I/O error, a full disk), there is no
			// savepoint left to roll back to, and the batch fails.
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO write`); err != nil {
				abort(fmt.Errorf("%w (after a write's %v)", err, errs[i]))
				return
			}
		}
		if _, err := tx.ExecContext(ctx, `RELEASE write`); err != nil {
			abort(err)
			return
		}
	}
	if w.beforeCommit != nil {
		if err := w.beforeCommit(len(batch)); err != nil {
			abort(err)
			return
		}
	}
	committing := time.Now()
	err = tx.Commit()
	w.observe(batch, began, committing, time.Now())
	if err != nil {
		fail(fmt.Errorf("group commit of %d writes: %w", len(batch), err))
		return
	}
	for i, j := range batch {
		j.done <- errs[i]
	}
}

// observe counts the stages of a committed batch's writes: it began at
// began, its COMMIT at committing, and ended at ended.
func (w *groupWriter) observe(batch []*writeJob, began, committing, ended time.Time) {
	exec, commit := committing.Sub(began), ended.Sub(committing)
	st := &w.stages.stages
	for _, j := range batch {
		st[StageQueue].observe(j.taken.Sub(j.sent))
		st[StageGather].observe(began.Sub(j.taken))
		st[StageExec].observe(exec)
		st[StageCommit].observe(commit)
	}
}

// runJob runs one job's statements; a panic is its error (the writer and
// the rest of its batch go on).
func runJob(batch context.Context, j *writeJob, tx *sql.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write panicked: %v", r)
		}
	}()
	// The caller's values, not its cancellation; the batch's deadline.
	ctx := context.WithoutCancel(j.ctx)
	if d, ok := batch.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	return j.fn(ctx, tx)
}
