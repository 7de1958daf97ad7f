package sqlstore

// Group commit of task creations on PostgreSQL.
//
// Every task of an account debits the account's row, and PostgreSQL holds
// that row's lock until the transaction's commit is on disk. One creation
// per transaction therefore queues every submit of an account behind the
// previous one's WAL flush: at most one task per flush, whatever the
// number of clients or connections. So plain creations (no webhook, not
// held for review) are gathered: CreateTask queues the task, and a batcher
// sends all the queued tasks in one call of gengate_create_tasks (one
// round trip, one transaction, one commit and one flush for the batch).
// The batcher never waits to gather: it takes what is queued, and while
// its batch commits the next requests queue for the next batch; at most
// pgBatchers batches are in flight at once, so that a batch can be sent
// while the previous one is committing (pipelining) without taking the
// whole pool.
//
// Failure rules: an item that is not a plain success (a used
// Idempotency-Key, a balance or key limit that does not cover it, a
// revoked key) writes nothing and does not stop the others (the function
// checks before it writes, and gives back a debit it made); its caller
// then runs the step-by-step transaction, which tells a replay from a
// refusal. When the statement fails on the server (an error answered by
// PostgreSQL: the transaction rolled back, nothing of the batch was
// written), each caller runs its own task alone, as before batching, so
// one bad item never fails the others. When the fate of the batch is
// unknown (the connection broke), every caller gets the error, which the
// service answers by looking its task up (Service.GenerateFrom). No caller
// hears of a success before the batch's COMMIT returned: every 202 is on
// disk (synchronous_commit stays on).
//
// docs/architecture.md ("A write's path on PostgreSQL") tells the same.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gengate/gengate"
)

// pgBatchMax is the most tasks one gengate_create_tasks call creates.
const pgBatchMax = 128

// pgBatchers is the most creation batches in flight at once.
const pgBatchers = 2

const createTasksSQL = `SELECT item, balance FROM gengate_create_tasks($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
	$11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`

type createJob struct {
	ctx             context.Context
	t               *gengate.Task
	options, inputs string
	balance         int
	plain           bool  // created by the batch; balance is the new balance
	alone           bool  // the batch failed on the server: create it alone
	err             error // the batch's fate is unknown
	done            chan struct{}
}

// pgCreator gathers task creations into batches (see the file comment).
type pgCreator struct {
	db       *sql.DB
	max      int
	batchers int
	notify   func() // wakes the workers of every process, after a commit

	mu      sync.Mutex
	queue   []*createJob
	running int // batchers running

	batches, items atomic.Int64 // sent so far (tests and benchmarks)
}

func newPGCreator(db *sql.DB, conns int, notify func()) *pgCreator {
	return &pgCreator{db: db, max: pgBatchMax, batchers: min(pgBatchers, max(conns, 1)), notify: notify}
}

// create queues the job and returns once its batch is over.
func (c *pgCreator) create(j *createJob) {
	j.done = make(chan struct{})
	c.mu.Lock()
	c.queue = append(c.queue, j)
	if c.running < c.batchers {
		c.running++
		go c.run()
	}
	c.mu.Unlock()
	<-j.done
}

// run sends batches while jobs are queued.
func (c *pgCreator) run() {
	for {
		c.mu.Lock()
		n := min(len(c.queue), c.max)
		if n == 0 {
			c.running--
			c.mu.Unlock()
			return
		}
		batch := slices.Clone(c.queue[:n])
		c.queue = slices.Delete(c.queue, 0, n)
		if len(c.queue) == 0 {
			c.queue = nil // let the array go after a burst
		}
		c.mu.Unlock()
		c.send(batch)
	}
}

// send creates the batch's tasks in one call and answers each job.
func (c *pgCreator) send(batch []*createJob) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	// A caller that went away before its batch was sent gets nothing
	// written.
	live := batch[:0:0]
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.err = err
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	// Row locks in one order in every batch: accounts, then their keys.
	slices.SortStableFunc(live, func(a, b *createJob) int {
		return cmp.Or(cmp.Compare(a.t.AccountID, b.t.AccountID), cmp.Compare(a.t.KeyID, b.t.KeyID))
	})
	n := len(live)
	var (
		ids, accounts, models, types, statuses, prompts = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		options, inputs, fingerprints, engines, reviews = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		routes, keyIDs, inputURLs                       = make([]string, n), make([]string, n), make([]string, n)
		keys                                            = make([]*string, n)
		costs, runAt, created, updated, days            = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	)
	for i, j := range live {
		t := j.t
		ids[i], accounts[i], models[i], types[i], statuses[i], prompts[i] = t.ID, t.AccountID, t.ModelID, string(t.Type), string(t.Status), t.Prompt
		options[i], inputs[i], fingerprints[i], engines[i], reviews[i] = j.options, j.inputs, t.Fingerprint, t.Engine, t.ReviewReason
		routes[i], keyIDs[i], inputURLs[i] = encodeRoute(t.Route), t.KeyID, encodeInputURLs(t.InputURLs)
		if t.IdempotencyKey != "" {
			keys[i] = &t.IdempotencyKey
		}
		costs[i], runAt[i], created[i], updated[i], days[i] = int64(t.Cost), ms(t.RunAt), ms(t.CreatedAt), ms(t.UpdatedAt), gengate.UTCDay(t.CreatedAt)
	}
	c.batches.Add(1)
	c.items.Add(int64(n))
	// Never cancelled: the batch is every caller's, not one's.
	ctx := context.Background()
	err := func() error {
		rows, err := c.db.QueryContext(ctx, createTasksSQL, ids, accounts, models, types, statuses, prompts,
			options, inputs, costs, keys, fingerprints, engines, reviews, runAt, created, updated, routes, keyIDs, inputURLs, days)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var item int
			var balance sql.NullInt64
			if err := rows.Scan(&item, &balance); err != nil {
				return err
			}
			if item >= 1 && item <= n && balance.Valid {
				live[item-1].plain, live[item-1].balance = true, int(balance.Int64)
			}
		}
		return rows.Err()
	}()
	if err != nil {
		var pe *pgconn.PgError
		// PostgreSQL answered with an ERROR: the batch rolled back. A
		// FATAL (the session ended) leaves its fate unknown.
		refused := errors.As(err, &pe) && (pe.SeverityUnlocalized == "ERROR" || pe.SeverityUnlocalized == "" && pe.Severity == "ERROR")
		for _, j := range live {
			j.plain = false
			if refused {
				j.alone = true
			} else {
				j.err = err
			}
		}
		return
	}
	for _, j := range live {
		if j.plain {
			c.notify()
			break
		}
	}
}
