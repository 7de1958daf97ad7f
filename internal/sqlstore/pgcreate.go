package sqlstore

// Group commit of task creations on PostgreSQL.
//
// Every task of an account debits the account's row, and PostgreSQL holds
// that row's lock until the transaction's commit is on disk. One creation
// per transaction therefore queues every submit of an account behind the
// previous one's WAL flush: at most one task per flush, whatever the
// number of clients or connections. So plain creations (no webhook, not
// held for review) are gathered: CreateTask queues the task, and the
// batcher sends all the queued tasks in one call of gengate_create_tasks
// (one round trip, one transaction, one commit and one flush for the
// batch).
//
// One batch is in flight at a time. Two in flight (one sent while the
// other commits) gained nothing: the second waits for the first's row
// locks, hence for its flush, anyway, and it left with the few callers
// that happened to be queued, so the batches of one account went out half
// empty, one flush each. Instead the batcher, once a batch has committed,
// waits for its callers to come back: it sends the next batch as soon as
// as many creations are queued as the previous batch held plus those that
// queued meanwhile, or after --db-batch-wait (1 ms), whichever comes
// first. A creation that finds no batch in flight and nothing to wait for
// is sent at once: an idle server adds no delay. Under load from clients
// that do not wait for each other, a batch may wait the whole 1 ms: the
// latency of a commit (a WAL flush, 1.3 ms and more on the test machine)
// and a little more, for more tasks per commit.
//
// Failure rules: an item that is not a plain success (a used
// Idempotency-Key, a balance or key limit that does not cover it, a
// revoked key) writes nothing and does not stop the others (the function
// decides every item before it writes); its caller then runs the
// step-by-step transaction, which tells a replay from a refusal. When the
// statement fails on the server (an error answered by PostgreSQL: the
// transaction rolled back, nothing of the batch was written), each caller
// runs its own task alone, as before batching, so one bad item never fails
// the others. When the fate of the batch is unknown (the connection
// broke), every caller gets the error, which the service answers by
// looking its task up (Service.GenerateFrom). No caller hears of a success
// before the batch's COMMIT returned: every 202 is on disk
// (synchronous_commit stays on).
//
// docs/architecture.md ("A write's path on PostgreSQL") tells the same.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gengate/gengate"
)

// pgBatchMax is the most tasks one gengate_create_tasks call creates.
const pgBatchMax = 128

// DefaultBatchWait is the default of serve --db-batch-wait: the longest a
// batch of task creations waits for the callers of the previous one.
const DefaultBatchWait = time.Millisecond

// MaxBatchWait bounds --db-batch-wait.
const MaxBatchWait = 100 * time.Millisecond

// WithBatchWait sets how long, at most, the PostgreSQL batch of task
// creations waits for the callers of the previous batch to come back
// (pgcreate.go); 0 sends each batch at once. It does not apply to SQLite.
func WithBatchWait(d time.Duration) Option {
	return func(o *options) { o.batchWait = min(max(d, 0), MaxBatchWait) }
}

// createTasksSQL calls the form of gengate_create_tasks that writes a
// task's lease with its row (migration 00041: gengate.LeasedCreator).
const createTasksSQL = `SELECT item, balance FROM gengate_create_tasks($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
	$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`

type createJob struct {
	ctx             context.Context
	t               *gengate.Task
	options, inputs string
	balance         int
	plain           bool  // created by the batch; balance is the new balance
	alone           bool  // the batch failed on the server: create it alone
	err             error // the batch's fate is unknown
}

// pgCreator gathers task creations into batches (see the file comment).
type pgCreator struct {
	db      *sql.DB
	timeout time.Duration // --db-batch-timeout: the longest one batch may take
	notify  func()        // wakes the workers of every process, after a commit
	gather  *gatherer[*createJob]

	batches, items atomic.Int64 // sent so far (tests and benchmarks)
}

func newPGCreator(db *sql.DB, wait, timeout time.Duration, notify func()) *pgCreator {
	c := &pgCreator{db: db, timeout: timeout, notify: notify}
	// Once a batch has committed, the next waits (up to --db-batch-wait)
	// for its callers to come back and for those queued meanwhile, even
	// before any of them is queued again.
	c.gather = newGatherer(pgBatchMax, wait, true, func(n, queued int) int { return min(pgBatchMax, queued+n) }, c.send)
	return c
}

// create queues the job and returns once its batch is over.
func (c *pgCreator) create(j *createJob) { c.gather.add(j) }

// send creates the batch's tasks in one call and sets each job's outcome;
// the caller then answers them (closes done).
func (c *pgCreator) send(batch []*createJob) {
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
	// The items are decided by account, then by key (those without one
	// first); the function takes the row locks in id order itself.
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
		leaseTokens, leaseUntil, attempts               = make([]string, n), make([]int64, n), make([]int32, n)
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
		if t.LeaseToken != "" { // created claimed (gengate's handoff.go)
			leaseTokens[i], leaseUntil[i], attempts[i] = t.LeaseToken, ms(t.LeaseUntil), int32(t.Attempts)
		}
	}
	c.batches.Add(1)
	c.items.Add(int64(n))
	// Never cancelled by a caller: the batch is every caller's, not one's.
	// But bounded: a batch stuck on a connection that stopped answering
	// (or waiting for one) would hold every creation behind it, and
	// shutdown. At the deadline the connection is closed under the call,
	// which ends as a broken connection does: the batch's fate is unknown,
	// and every caller gets the error (the durability rules above hold).
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	err := func() error {
		rows, err := c.db.QueryContext(ctx, createTasksSQL, ids, accounts, models, types, statuses, prompts,
			options, inputs, costs, keys, fingerprints, engines, reviews, runAt, created, updated, routes, keyIDs, inputURLs, days,
			leaseTokens, leaseUntil, attempts)
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
		// PostgreSQL answered with an ERROR: the batch rolled back. A
		// FATAL (the session ended) leaves its fate unknown.
		refused := refusedByServer(err)
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
	// The workers of every process are told of queued tasks; a task
	// created claimed is already its own process's.
	for _, j := range live {
		if j.plain && j.t.LeaseToken == "" {
			c.notify()
			break
		}
	}
}

// refusedByServer reports whether err is PostgreSQL's answer ERROR: the
// statement failed and the transaction was rolled back, so nothing of a
// batch was written (its items may each be tried alone). Any other
// failure (a FATAL that ended the session, a broken connection, a
// deadline) leaves the batch's fate unknown.
func refusedByServer(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.SeverityUnlocalized == "ERROR" || pe.SeverityUnlocalized == "" && pe.Severity == "ERROR")
}
