package sqlstore

// Task creations made together on SQLite.
//
// The writer's batches (groupcommit.go) are mostly task creations when
// clients submit. Made one by one, each costs a SAVEPOINT, the account's
// conditional debit, the key's spend, a task row, a ledger line and a
// RELEASE: seven statements. The writer makes the plain creations of a
// batch (no webhook, not held for review; at least two) together instead,
// in one savepoint of the batch's transaction:
//
//  1. it reads the balance of each of their accounts and the spend of each
//     of their API keys, in the transaction (so under the write lock: no
//     other write can change them before the commit);
//  2. it decides each creation in memory, in the batch's order, as the
//     statements would have: the balance covers the cost (it never goes
//     below zero), the key is live and its daily limit covers the cost,
//     and no earlier creation of the group has the same Idempotency-Key;
//  3. one UPDATE per account (its balance minus what the group spent) and
//     per key (its spend), then the accepted tasks' rows and their charges
//     in the ledger with multi-row INSERTs.
//
// A creation that is not accepted in memory (too few credits, the key's
// limit, a revoked key, an account or key not found, a key used by an
// earlier creation of the group) is made alone after the group, by the
// same statements as before, in its own savepoint: the group's tasks are
// then in the transaction, so it is refused, or answered with the task of
// its Idempotency-Key, exactly as if it had come after them in the batch,
// which it may have (the creations of one batch are concurrent: none of
// their callers has been answered). A statement of the group that fails (a
// unique key: an Idempotency-Key already used by a committed task, a
// constraint) rolls the whole group back to its savepoint, and every
// creation of it is then made alone: so a refusal or a failure still
// fails only its own creation. The group's answers are given only after
// the batch's COMMIT, like every other write's.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/gengate/gengate"
)

// groupCreate is a plain task creation sent to the writer: the task and
// its stored forms, computed by the caller. The writer sets created and
// balance when it made the task with others of its batch.
type groupCreate struct {
	t *gengate.Task
	// The rows' parameters, made by the caller's goroutine: the writer
	// only copies them into its INSERTs.
	taskArgs, ledgerArgs []any

	created bool // made by the group (else the job's fn made it, or refused it)
	balance int  // the account's balance after this task's charge
}

// newGroupCreate is the creation of t (with the stored forms of its
// options, inputs, route and input URLs), its rows' parameters made.
func newGroupCreate(t *gengate.Task, options, inputs, route, inputURLs string) *groupCreate {
	return &groupCreate{t: t,
		taskArgs:   taskInsertArgs(t, options, inputs, route, inputURLs),
		ledgerArgs: []any{t.AccountID, t.ID, gengate.LedgerCharge, -t.Cost, t.ModelID, ms(t.CreatedAt)},
	}
}

// taskInsertInto is the head of every tasks INSERT (CreateTask's and
// taskInserts'), up to its VALUES: the columns of taskInsertArgs, in their
// order.
const taskInsertInto = `INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost,
	idempotency_key, fingerprint, engine, review_reason, run_at, created_at, updated_at, route, key_id, input_urls,
	lease_token, lease_until, attempts) VALUES `

// taskInsertArgs is a new task's row for the columns of taskInsertInto,
// in their order.
func taskInsertArgs(t *gengate.Task, options, inputs, route, inputURLs string) []any {
	var leaseUntil int64
	if t.LeaseToken != "" { // created already claimed (gengate.Handoff)
		leaseUntil = ms(t.LeaseUntil)
	}
	return []any{t.ID, t.AccountID, t.ModelID, t.Type, t.Status, t.Prompt, options, inputs, t.Cost,
		nullable(t.IdempotencyKey), t.Fingerprint, t.Engine, t.ReviewReason, ms(t.RunAt), ms(t.CreatedAt), ms(t.UpdatedAt),
		route, t.KeyID, inputURLs, t.LeaseToken, leaseUntil, t.Attempts}
}

// A group's rows go in multi-row INSERTs of exactSizes rows or fewer, one
// statement of exactly their number (a group of 11 is one INSERT of 11
// rows per table, not 8, 2 and 1: each statement has its fixed costs, a
// cursor on the table and on each of its indexes, its own statement
// journal), and larger groups in chunks of exactSizes and
// maxInsertRows rows. Each table so has exactSizes + 1 statement texts,
// kept prepared (stmtcache.go).
const (
	exactSizes    = 16 // the clients of a busy server that arrive together: `gengate bench submit`'s 16
	maxInsertRows = 32
)

// createTogether makes the plain creations among the jobs of batch (those
// with a create whose caller is still there) in one savepoint of tx, and
// marks the ones it made in made (their error stays nil). It returns an
// error only when the savepoint itself fails (the batch then fails as a
// whole); a failure of the group's statements undoes the group and leaves
// every creation to be made alone.
func (w *groupWriter) createTogether(ctx context.Context, tx *sql.Tx, batch []*writeJob, made []bool) error {
	var group []int // indices into batch
	for i, j := range batch {
		if j.create != nil && j.ctx.Err() == nil {
			group = append(group, i)
		}
	}
	if len(group) < 2 {
		return nil
	}
	var accepted []int
	kept, err := tryGroup(ctx, tx, "creates", func() (err error) {
		accepted, err = runCreates(ctx, tx, batch, group)
		return err
	})
	if err != nil {
		return err
	}
	if !kept {
		// Nothing of the group is kept: each creation is made alone.
		for _, i := range accepted {
			batch[i].create.created = false
		}
		return nil
	}
	for _, i := range accepted {
		made[i] = true
	}
	if len(accepted) > 0 {
		w.createGroups.Add(1)
		w.createItems.Add(int64(len(accepted)))
	}
	return nil
}

type keySpend struct {
	spent, day, limit int64
	ok                bool // found and not revoked
}

// runCreates decides the group's creations and writes the accepted ones;
// it returns their indices (into batch).
func runCreates(ctx context.Context, tx *sql.Tx, batch []*writeJob, group []int) (accepted []int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("group of creations panicked: %v", r)
		}
	}()
	balances := map[string]int64{} // absent: the account was not found
	start := map[string]int64{}
	keys := map[string]*keySpend{}
	seen := map[[2]string]bool{} // account, Idempotency-Key
	for _, i := range group {
		t := batch[i].create.t
		if _, ok := start[t.AccountID]; !ok {
			var b int64
			err := tx.QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = $1`, t.AccountID).Scan(&b)
			switch {
			case err == sql.ErrNoRows:
				start[t.AccountID] = -1
			case err != nil:
				return nil, err
			default:
				start[t.AccountID], balances[t.AccountID] = b, b
			}
		}
		if t.KeyID != "" && keys[t.KeyID] == nil {
			k := &keySpend{}
			var revoked int64
			err := tx.QueryRowContext(ctx, `SELECT spent, spent_day, spend_limit, revoked_at FROM api_keys WHERE id = $1`, t.KeyID).
				Scan(&k.spent, &k.day, &k.limit, &revoked)
			if err != nil && err != sql.ErrNoRows {
				return nil, err
			}
			k.ok = err == nil && revoked == 0
			keys[t.KeyID] = k
		}
		// The checks of CreateTask's statements, in memory.
		bal, found := balances[t.AccountID]
		if !found || bal < int64(t.Cost) {
			continue
		}
		var k *keySpend
		var spent, day int64
		if t.KeyID != "" {
			k = keys[t.KeyID]
			day = gengate.UTCDay(t.CreatedAt)
			if k.day == day {
				spent = k.spent
			}
			if !k.ok || (k.limit != 0 && spent+int64(t.Cost) > k.limit) {
				continue
			}
		}
		if t.IdempotencyKey != "" {
			id := [2]string{t.AccountID, t.IdempotencyKey}
			if seen[id] {
				continue // made alone after the group: a replay of the earlier one
			}
			seen[id] = true
		}
		balances[t.AccountID] = bal - int64(t.Cost)
		if k != nil {
			k.spent, k.day = spent+int64(t.Cost), day
		}
		batch[i].create.created = true
		batch[i].create.balance = int(bal) - t.Cost
		accepted = append(accepted, i)
	}
	if len(accepted) == 0 {
		return nil, nil
	}
	for id, b := range balances {
		if spent := start[id] - b; spent > 0 {
			// The CHECK (balance >= 0) stays the last guard.
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance - $1 WHERE id = $2`, spent, id); err != nil {
				return accepted, err
			}
		}
	}
	for id, k := range keys {
		if !k.ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET spent = $1, spent_day = $2 WHERE id = $3 AND revoked_at = 0`, k.spent, k.day, id); err != nil {
			return accepted, err
		}
	}
	for rest := accepted; len(rest) > 0; {
		n := chunk(len(rest))
		taskArgs := make([]any, 0, n*taskInsertCols)
		ledgerArgs := make([]any, 0, n*ledgerInsertCols)
		for _, i := range rest[:n] {
			c := batch[i].create
			taskArgs = append(taskArgs, c.taskArgs...)
			ledgerArgs = append(ledgerArgs, c.ledgerArgs...)
		}
		if _, err := tx.ExecContext(ctx, taskInserts[n], taskArgs...); err != nil {
			return accepted, err
		}
		if _, err := tx.ExecContext(ctx, ledgerInserts[n], ledgerArgs...); err != nil {
			return accepted, err
		}
		rest = rest[n:]
	}
	return accepted, nil
}

// chunk is the rows of the next INSERT for n rows: all of them up to
// exactSizes, else maxInsertRows or exactSizes.
func chunk(n int) int {
	switch {
	case n <= exactSizes:
		return n
	case n >= maxInsertRows:
		return maxInsertRows
	}
	return exactSizes
}

const (
	taskInsertCols   = 22
	ledgerInsertCols = 6
)

// taskInserts[n] and ledgerInserts[n] insert n rows (n up to exactSizes,
// or maxInsertRows): the columns of CreateTask's INSERTs.
var taskInserts, ledgerInserts = func() (tasks, ledger map[int]string) {
	tasks, ledger = map[int]string{}, map[int]string{}
	for n := 1; n <= maxInsertRows; n++ {
		if n > exactSizes && n < maxInsertRows {
			continue
		}
		tasks[n] = taskInsertInto + rows(n, taskInsertCols)
		ledger[n] = `INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at) VALUES ` + rows(n, ledgerInsertCols)
	}
	return tasks, ledger
}()

// rows is "(?, ?, ...), (...)": n rows of cols parameters.
func rows(n, cols int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}
