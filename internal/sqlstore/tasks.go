package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

const taskColumns = `id, account_id, model_id, type, status, prompt, options, inputs, cost, COALESCE(idempotency_key, ''),
	fingerprint, engine, upstream_id, error_code, error_message, input_fault, review_reason, lease_token,
	attempts, run_at, created_at, updated_at, completed_at, route, key_id, input_urls`

// isActive is the condition that a task is active (queued, submitting or
// running) and notActive its negation: chains of = and <>, not IN lists,
// which SQLite builds as a table at every execution of a statement that
// evaluates one (migration 00038). On SQLite they are also, word for word,
// the conditions of the partial indexes tasks_due and tasks_status: its
// planner uses a partial index only for a query whose WHERE holds the
// index's own condition. PostgreSQL proves its indexes from either form.
const (
	isActive  = `(status = 'queued' OR status = 'submitting' OR status = 'running')`
	notActive = `(status <> 'queued' AND status <> 'submitting' AND status <> 'running')`
)

// tasksIsActive is isActive on the column named with its table, for the
// statements that join tasks with another row source (stepbatch.go).
const tasksIsActive = `(tasks.status = 'queued' OR tasks.status = 'submitting' OR tasks.status = 'running')`

// stepClaimColumns are taskColumns of the composite t that
// gengate_claim_steps_plan returns, then its prev_lease and prev_status.
var stepClaimColumns = func() string {
	cols := strings.Split(strings.ReplaceAll(taskColumns, "\n\t", " "), ", ")
	for i, c := range cols {
		c = strings.TrimSpace(c)
		switch {
		case strings.HasPrefix(c, "COALESCE("):
			cols[i] = "COALESCE((t)." + strings.TrimPrefix(c, "COALESCE(")
		case strings.HasPrefix(c, "'"): // the rest of a COALESCE
			cols[i] = c
		default:
			cols[i] = "(t)." + c
		}
	}
	return strings.Join(cols, ", ") + ", prev_lease, prev_status"
}()

// withLast is a scanner that scans more columns, the last ones, into last.
func withLast(row scanner, last ...any) scanner { return lastScanner{row, last} }

type lastScanner struct {
	row  scanner
	last []any
}

func (l lastScanner) Scan(dest ...any) error { return l.row.Scan(append(dest, l.last...)...) }

type scanner interface{ Scan(...any) error }

// scanTasks reads every row of a task query and closes the rows; nil when
// there are none.
func scanTasks(rows *sql.Rows) ([]*gengate.Task, error) {
	defer rows.Close()
	var out []*gengate.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanTask(row scanner) (*gengate.Task, error) {
	r, err := scanTaskRow(row)
	if err != nil {
		return nil, err
	}
	return r.decode()
}

// taskRow is a task as read from its row, its JSON columns not yet
// decoded.
type taskRow struct {
	t                                 *gengate.Task
	options, inputs, route, inputURLs string
}

func scanTaskRow(row scanner) (taskRow, error) {
	t := &gengate.Task{}
	r := taskRow{t: t}
	var fault int
	var runAt, created, updated, completed int64
	err := row.Scan(&t.ID, &t.AccountID, &t.ModelID, &t.Type, &t.Status, &t.Prompt, &r.options, &r.inputs, &t.Cost,
		&t.IdempotencyKey, &t.Fingerprint, &t.Engine, &t.UpstreamID, &t.ErrorCode, &t.ErrorMessage, &fault,
		&t.ReviewReason, &t.LeaseToken, &t.Attempts, &runAt, &created, &updated, &completed, &r.route,
		&t.KeyID, &r.inputURLs)
	if err != nil {
		return r, err
	}
	t.InputFault = fault != 0
	t.RunAt, t.CreatedAt, t.UpdatedAt, t.CompletedAt = fromMS(runAt), fromMS(created), fromMS(updated), fromMS(completed)
	return r, nil
}

// decode decodes the row's JSON columns into its task: their common flat
// form by hand (rowdecode.go), anything else with encoding/json.
func (r taskRow) decode() (*gengate.Task, error) {
	t := r.t
	var ok bool
	if t.Options, ok = decodeOptions(r.options); !ok {
		t.Options = nil
		d := json.NewDecoder(strings.NewReader(r.options))
		d.UseNumber()
		if err := d.Decode(&t.Options); err != nil {
			return nil, fmt.Errorf("task %s options: %w", t.ID, err)
		}
		normalizeOptions(t.Options)
	}
	if t.Inputs, ok = decodeStrings(r.inputs); !ok {
		t.Inputs = nil
		if err := json.Unmarshal([]byte(r.inputs), &t.Inputs); err != nil {
			return nil, fmt.Errorf("task %s inputs: %w", t.ID, err)
		}
	}
	if r.inputURLs != "" {
		if t.InputURLs, ok = decodeStrings(r.inputURLs); !ok {
			t.InputURLs = nil
			if err := json.Unmarshal([]byte(r.inputURLs), &t.InputURLs); err != nil {
				return nil, fmt.Errorf("task %s input URLs: %w", t.ID, err)
			}
		}
	}
	if r.route != "" {
		if t.Route, ok = decodeRoute(r.route); !ok {
			t.Route = gengate.Route{}
			if err := json.Unmarshal([]byte(r.route), &t.Route); err != nil {
				return nil, fmt.Errorf("task %s route: %w", t.ID, err)
			}
		}
	}
	return t, nil
}

// encodeRoute is the stored form of a task's route: JSON, or "" for none.
func encodeRoute(r gengate.Route) string {
	if r.Engine == "" {
		return ""
	}
	if len(r.Params) == 0 && plainJSON(r.Engine) && plainJSON(r.Upstream) {
		// The common route, written by hand: every task's creation and
		// every step writes it, and encoding/json's reflection was 3% of
		// a busy server's CPU. The bytes are the ones json.Marshal
		// writes (TestEncodeRoute).
		s := `{"engine":"` + r.Engine + `","upstream":"` + r.Upstream + `"`
		if r.Test {
			s += `,"test":true`
		}
		return s + "}"
	}
	b, _ := json.Marshal(r) // strings and JSON-decoded params: cannot fail
	return string(b)
}

// plainJSON reports whether s is written in JSON as it is, between
// quotes: printable ASCII that encoding/json does not escape.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// encodeOptions is the stored form of a task's options: JSON in which a
// float64 always has a fraction or an exponent ("2.0", not "2"), so that
// normalizeOptions can tell it from an int64 when it reads it back.
func encodeOptions(opts map[string]any) (string, error) {
	if opts == nil {
		return "null", nil
	}
	if s, ok := encodeFlat(opts); ok { // no float64: the common form (rowjson.go)
		return s, nil
	}
	out := make(map[string]any, len(opts))
	for k, v := range opts {
		if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1e21 {
			// encoding/json writes such floats without a fraction.
			v = json.RawMessage(strconv.FormatFloat(f, 'f', 1, 64))
		}
		out[k] = v
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// encodeInputs is the stored form of a task's inputs: json.Marshal's.
func encodeInputs(inputs map[string]string) (string, error) {
	if inputs == nil {
		return "null", nil
	}
	if s, ok := encodeFlat(inputs); ok { // rowjson.go
		return s, nil
	}
	b, err := json.Marshal(inputs)
	return string(b), err
}

// normalizeOptions gives stored numbers back the types Job.Options promises:
// int64 for whole numbers, float64 otherwise.
func normalizeOptions(opts map[string]any) {
	for k, v := range opts {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				opts[k] = i
			} else {
				f, _ := n.Float64()
				opts[k] = f
			}
		}
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CreateTask debits the cost and inserts the task, or returns the task the
// idempotency key already names; see gengate.Store.
// CreatesLeased reports that CreateTask writes a task's lease with its row
// (gengate.LeasedCreator): every creation writes the columns of
// taskInsertArgs, and PostgreSQL's batch function takes them too
// (migration 00041).
func (s *DB) CreatesLeased() bool { return true }

func (s *DB) CreateTask(ctx context.Context, t *gengate.Task) (gengate.CreateResult, error) {
	var res gengate.CreateResult
	options, err := encodeOptions(t.Options)
	if err != nil {
		return res, fmt.Errorf("task %s options: %w", t.ID, err)
	}
	inputs, err := encodeInputs(t.Inputs)
	if err != nil {
		return res, fmt.Errorf("task %s inputs: %w", t.ID, err)
	}
	if s.create != nil && t.WebhookURL == "" && t.Status != gengate.StatusNeedsReview {
		// Gathered with the concurrent creations into one call and one
		// commit (pgcreate.go).
		j := &createJob{ctx: ctx, t: t, options: options, inputs: string(inputs)}
		s.create.create(j)
		switch {
		case j.plain:
			return gengate.CreateResult{Task: t, Balance: j.balance}, nil
		case j.err != nil:
			if tooManyClients(j.err) { // refused at connect: nothing was sent
				return res, overloaded()
			}
			return res, j.err
		}
		// Not a plain success, and nothing was written: the transaction
		// below tells replays and refusals apart.
	}
	route, inputURLs := encodeRoute(t.Route), encodeInputURLs(t.InputURLs)
	alone := func(ctx context.Context, tx *sql.Tx) error {
		// existing reports whether the idempotency key already names a
		// task, and makes that task, with its outputs, the result.
		existing := func() (bool, error) {
			if t.IdempotencyKey == "" {
				return false, nil
			}
			found, err := s.findTaskByKey(ctx, tx, t.AccountID, t.IdempotencyKey)
			if gengate.ErrorCode(err) == gengate.ENotFound {
				return false, nil
			}
			if err == nil {
				err = s.loadOutputs(ctx, tx, found)
			}
			if err != nil {
				return false, err
			}
			res.Task, res.Existing = found, true
			res.Balance, err = s.findAccountTx(ctx, tx, t.AccountID)
			return true, err
		}
		if ok, err := existing(); ok || err != nil {
			return err
		}
		// The conditional debit: the balance never goes below zero, however
		// many requests race for it.
		err := tx.QueryRowContext(ctx, `UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1 RETURNING balance`,
			t.Cost, t.AccountID).Scan(&res.Balance)
		if errors.Is(err, sql.ErrNoRows) {
			// On PostgreSQL a request with the same key may have committed
			// its task, spending the balance, while this debit waited for
			// the account row: then the key names that task, and this is
			// no refusal. A new statement's snapshot (READ COMMITTED)
			// sees it.
			if ok, err := existing(); ok || err != nil {
				return err
			}
			balance, ferr := s.findAccountTx(ctx, tx, t.AccountID)
			if ferr != nil {
				return ferr
			}
			return gengate.InsufficientCredits(balance, t.Cost)
		}
		if err != nil {
			return err
		}
		if t.KeyID != "" { // the key's daily spend limit, in the same transaction
			if err := s.spendKey(ctx, tx, t); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, taskInsertInto+
			`($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
			taskInsertArgs(t, options, string(inputs), route, inputURLs)...)
		if err != nil {
			return err
		}
		if err := insertLedger(ctx, tx, t.AccountID, t.ID, gengate.LedgerCharge, -t.Cost, t.ModelID, t.CreatedAt); err != nil {
			return err
		}
		if t.WebhookURL != "" {
			events, format := webhookColumns(t)
			if _, err := tx.ExecContext(ctx, `INSERT INTO task_webhooks (task_id, url, events, format) VALUES ($1, $2, $3, $4)`,
				t.ID, t.WebhookURL, events, format); err != nil {
				return err
			}
		}
		if t.Status == gengate.StatusNeedsReview { // held at creation (review terms): its event, webhooks.go
			if err := s.addWebhookEvent(ctx, tx, t); err != nil {
				return err
			}
		}
		res.Task = t
		return nil
	}
	if s.w != nil && t.WebhookURL == "" && t.Status != gengate.StatusNeedsReview {
		// On SQLite the writer makes it with the other plain creations of
		// its batch, or alone (createbatch.go).
		c := newGroupCreate(t, options, string(inputs), route, inputURLs)
		err = s.w.doCreate(ctx, c, alone)
		if err == nil && c.created {
			res = gengate.CreateResult{Task: t, Balance: c.balance}
		}
	} else {
		err = s.tx(ctx, alone)
	}
	if err == nil && s.work != nil && t.LeaseToken == "" { // a task created claimed is its process's already
		s.work.wake()
	}
	if err != nil && t.IdempotencyKey != "" && isUnique(err) {
		// A concurrent request with the same key committed first: its task
		// is the one this key names. Nothing of ours was kept.
		existing, ferr := s.FindTaskByIdempotencyKey(ctx, t.AccountID, t.IdempotencyKey)
		if ferr != nil {
			return res, gengate.Errorf(gengate.EKeyInUse, "a request with this Idempotency-Key is being processed; retry shortly")
		}
		acct, ferr := s.FindAccount(ctx, t.AccountID)
		if ferr != nil {
			return res, ferr
		}
		return gengate.CreateResult{Task: existing, Existing: true, Balance: acct.Balance}, nil
	}
	return res, err
}

// FindTask returns the task with the id, with its creations.
func (s *DB) FindTask(ctx context.Context, id string) (*gengate.Task, error) {
	t, err := scanTask(s.reader().QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("task", id)
	}
	if err != nil {
		return nil, err
	}
	return t, s.loadOutputs(ctx, s.reader(), t)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *DB) loadOutputs(ctx context.Context, q querier, t *gengate.Task) error {
	if t.Status != gengate.StatusSucceeded {
		return nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+creationColumns+` FROM creations WHERE task_id = $1 ORDER BY idx`, t.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := s.scanCreation(rows)
		if err != nil {
			return err
		}
		t.Outputs = append(t.Outputs, *c)
	}
	return rows.Err()
}

// creationColumns are scanCreation's columns.
const creationColumns = `id, account_id, task_id, idx, blob_key, token, token_sealed, content_type, ext, size, created_at`

func (s *DB) scanCreation(row scanner) (*gengate.Creation, error) {
	return s.scanCreationFor(row, nil)
}

// scanCreationFor scans a creation found by the URL token presented (nil
// when it was not found by one): a row that is not that token's is
// sql.ErrNoRows (filetokens.go: fileLookup.matches).
func (s *DB) scanCreationFor(row scanner, by *fileLookup) (*gengate.Creation, error) {
	c := &gengate.Creation{}
	var created int64
	var stored string
	var sealed sql.NullString
	if err := row.Scan(&c.ID, &c.AccountID, &c.TaskID, &c.Index, &c.Key, &stored, &sealed, &c.ContentType, &c.Ext, &c.Size, &created); err != nil {
		return nil, err
	}
	if by != nil && !by.matches(stored, sealed) {
		return nil, sql.ErrNoRows
	}
	c.CreatedAt = fromMS(created)
	if by != nil { // found by its token: serving it needs no server key
		c.Token = by.clear
		return c, nil
	}
	var err error
	if c.Token, err = s.openToken(stored, sealed, c.ID); err != nil {
		return nil, err
	}
	return c, nil
}

// FindTaskByIdempotencyKey returns the account's task with the key.
func (s *DB) FindTaskByIdempotencyKey(ctx context.Context, accountID, key string) (*gengate.Task, error) {
	t, err := s.findTaskByKey(ctx, s.reader(), accountID, key)
	if err != nil {
		return nil, err
	}
	return t, s.loadOutputs(ctx, s.reader(), t)
}

func (s *DB) findTaskByKey(ctx context.Context, q querier, accountID, key string) (*gengate.Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE account_id = $1 AND idempotency_key = $2`, accountID, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("task with key", key)
	}
	return t, err
}

// ClaimTask leases a due task (or the task with id) to a fresh claim.
func (s *DB) ClaimTask(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (*gengate.Task, error) {
	if id == "" {
		tasks, err := s.ClaimTasks(ctx, owner, now, lease, 1)
		if err != nil || len(tasks) == 0 {
			return nil, err
		}
		return tasks[0], nil
	}
	token := gengate.NewLeaseToken(owner)
	var t *gengate.Task
	err := s.write(ctx, func(ctx context.Context, q dbtx) error {
		var err error
		t, err = scanTask(q.QueryRowContext(ctx, `UPDATE tasks SET lease_token = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3
			WHERE id = $4 AND `+isActive+` AND lease_until < $3 RETURNING `+taskColumns,
			token, ms(now.Add(lease)), ms(now), id))
		if errors.Is(err, sql.ErrNoRows) {
			t, err = nil, nil
		}
		return err
	})
	return t, err
}

// dueTasks selects, on SQLite, the rowids of up to limit due, unleased
// tasks, earliest first ($3 is now). Its plan is a walk of the partial
// index tasks_due (active tasks by run_at) that stops after the rows it
// needs: no sort, and no read of tasks that are not due, however many
// wait on an upstream (TestClaimPlan checks the plan on both databases).
// SQLite, which has no statistics to tell it that, is told with INDEXED
// BY. The limit is written into the statement: a bound LIMIT makes SQLite
// plan the statement it keeps prepared (stmtcache.go) again at every
// claim, and a process claims at most --workers tasks at once, so there
// are few such statements. PostgreSQL's selection, the same walk that
// also skips locked rows (so that concurrent claimers take different
// tasks instead of queueing on one), is in gengate_claim_tasks.
func (s *DB) dueTasks(limit int) string {
	return `SELECT rowid FROM tasks INDEXED BY tasks_due WHERE ` + isActive + ` AND run_at <= $3 AND lease_until < $3
		ORDER BY run_at LIMIT ` + strconv.Itoa(limit)
}

// claimDue is the statement that leases the due tasks dueTasks selects,
// and its arguments. On PostgreSQL it calls gengate_claim_tasks (migration
// 00013), which runs dueTasks' selection as an array built once (an
// InitPlan, so that the LIMIT holds however the planner joins) and
// updates the rows by primary key, with sorts and bitmap and sequential
// scans turned off: the plan of the statement alone depended on the
// statistics, and a table that grew faster than autovacuum analyzed it
// read and sorted every due task at every claim (TestClaimPlan). The
// update does not test the status again: the selection's FOR UPDATE has
// checked its conditions on the newest version of each row it locked,
// and the lock keeps them true. It returns the tasks' rows. SQLite's
// claim is claimThenRead's selection and updates (claimread.go).
func (s *DB) claimDue(token string, until, now int64, limit int) (string, []any) {
	return `SELECT ` + taskColumns + ` FROM gengate_claim_tasks($1, $2, $3, $4)`, []any{token, until, now, limit}
}

// ClaimTasks leases up to limit due tasks in one statement, earliest due
// first; see gengate.Store.
func (s *DB) ClaimTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*gengate.Task, error) {
	return s.claimTasks(ctx, owner, now, lease, limit, false)
}

// ClaimSteps claims as ClaimTasks does and, in the same transaction, moves
// the claimed queued tasks to submitting (gengate.StepClaimer): the
// checkpoint before a submit commits with the claim, not in a write of its
// own. The tasks keep the status they had before the claim, with
// Checkpointed set on those moved.
func (s *DB) ClaimSteps(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*gengate.Task, error) {
	return s.claimTasks(ctx, owner, now, lease, limit, true)
}

// claimTasks is ClaimTasks, and ClaimSteps when checkpoint is set. On
// SQLite the writer only leases (and checkpoints) the rows, and the tasks
// are read after the commit (claimread.go). On PostgreSQL either is one
// statement, one round trip: gengate_claim_tasks, or gengate_claim_steps,
// which also checkpoints.
func (s *DB) claimTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, checkpoint bool) ([]*gengate.Task, error) {
	if limit < 1 {
		return nil, nil
	}
	token := gengate.NewLeaseToken(owner)
	if !s.postgres {
		return s.claimThenRead(ctx, token, now, lease, limit, checkpoint)
	}
	query, args := s.claimDue(token, ms(now.Add(lease)), ms(now), limit)
	if checkpoint {
		// The claim and the checkpoint in one statement, which returns
		// the rows with the status (migration 00031) and the lease
		// (00035) each had before, and writes the start events of the
		// predictions it moves out of queued (00036); PL/pgSQL, so its
		// plan is kept for the session (00041).
		query = `SELECT ` + stepClaimColumns + ` FROM gengate_claim_steps_plan($1, $2, $3, $4)`
	}
	var raw []taskRow
	var prev []string
	claim := func(ctx context.Context, q dbtx) error {
		raw, prev = raw[:0], prev[:0]
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p, status string
			var r taskRow
			var err error
			if checkpoint {
				r, err = scanTaskRow(withLast(rows, &p, &status))
				r.t.Status = gengate.Status(status)
			} else {
				r, err = scanTaskRow(rows)
			}
			if err != nil {
				return err
			}
			raw, prev = append(raw, r), append(prev, p)
		}
		return rows.Err()
	}
	err := s.write(ctx, claim) // one statement: no transaction of its own
	if err != nil {
		return nil, err
	}
	// The JSON columns are decoded after the commit, under the rule of
	// claimread.go for a row that cannot be.
	out := make([]*gengate.Task, 0, len(raw))
	for i, r := range raw {
		r.t.Checkpointed = checkpoint && r.t.Status == gengate.StatusQueued
		if checkpoint {
			r.t.TakenOver = prev[i]
		}
		t, derr := r.decode()
		if derr != nil {
			r.t.ErrorMessage = derr.Error()
			if herr := s.holdUnreadable(ctx, token, r.t, now); herr != nil {
				err = errors.Join(err, herr)
			}
			continue
		}
		out = append(out, t)
	}
	// RETURNING keeps no order.
	slices.SortFunc(out, func(a, b *gengate.Task) int { return a.RunAt.Compare(b.RunAt) })
	return out, err
}

// NextDue returns when the earliest unleased active task is due, or false
// when there is none. It only reads: idle workers ask it before they try a
// claim, which writes.
func (s *DB) NextDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	q := `SELECT run_at FROM tasks WHERE ` + isActive + ` AND lease_until < $1 ORDER BY run_at LIMIT 1`
	if !s.postgres {
		q = `SELECT run_at FROM tasks INDEXED BY tasks_due WHERE ` + isActive + ` AND lease_until < $1 ORDER BY run_at LIMIT 1`
	}
	var runAt int64
	err := s.reader().QueryRowContext(ctx, q, ms(now)).Scan(&runAt)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return time.UnixMilli(runAt).UTC(), true, nil
}

// leaseGuards are the WHERE clauses that fence writes: [1] the claim that
// holds the lease (its token is parameter $14), [0] an operator acting on
// a task in review (no lease).
var leaseGuards = [2]string{`status = 'needs_review'`, `lease_token = $14 AND ` + isActive}

// ExtendLease renews a claim that still holds its lease.
func (s *DB) ExtendLease(ctx context.Context, id, token string, until time.Time) error {
	return s.write(ctx, func(ctx context.Context, q dbtx) error {
		res, err := q.ExecContext(ctx, `UPDATE tasks SET lease_until = $1 WHERE id = $2 AND lease_token = $3 AND `+isActive,
			ms(until), id, token)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 || token == "" {
			return gengate.Errorf(gengate.EConflict, "task %s is no longer held by this claim", id)
		}
		return nil
	})
}

// soonDue is how soon a released step must be due for its release to wake
// the workers of every process.
const soonDue = time.Second

// SaveStep records an active task's progress under its lease.
func (s *DB) SaveStep(ctx context.Context, t *gengate.Task, release bool) error {
	// One statement: on PostgreSQL it runs alone on the pool (one round
	// trip, not BEGIN, UPDATE and COMMIT); on SQLite in the writer's batch.
	u := newTaskUpdate(t, release)
	run := func(ctx context.Context, q dbtx) error { return u.run(ctx, q) }
	var err error
	switch {
	case !u.groupable():
		err = s.write(ctx, run)
	case s.w != nil: // the writer saves it with the other steps of its batch (stepbatch.go)
		err = s.w.doStep(ctx, &u, func(ctx context.Context, tx *sql.Tx) error { return run(ctx, tx) })
	case s.steps != nil:
		err = s.steps.save(ctx, &u)
	default:
		err = s.write(ctx, run)
	}
	if err == nil && release && s.work != nil && !t.RunAt.After(time.Now().Add(soonDue)) {
		// After the commit (pgnotify.go); a step due later is found by
		// the workers' timers, so its release wakes no one.
		s.work.wake()
	}
	return err
}

// taskUpdate is the statement (and its arguments) that writes an active
// task's step under its lease; release also gives the lease up. Made by
// the caller's goroutine, so that the writer only runs it.
type taskUpdate struct {
	id    string
	query string
	args  []any
	// release and token (the lease's, empty for an operator's reopening)
	// tell whether it may be written with others (stepbatch.go).
	release bool
	token   string
}

// taskUpdates are newTaskUpdate's statements, by release and by whether
// the task is leased (leaseGuards): made once, not at every step.
var taskUpdates = func() (q [2][2]string) {
	for release := range 2 {
		set := `status = $1, upstream_id = $2, run_at = $3, error_code = $4, error_message = $5, input_fault = $6,
		review_reason = $7, updated_at = $8, completed_at = $9, attempts = $11, engine = $12, route = $13`
		if release == 1 {
			set += `, lease_token = '', lease_until = 0`
		}
		for leased, guard := range leaseGuards {
			q[release][leased] = `UPDATE tasks SET ` + set + ` WHERE id = $10 AND ` + guard
		}
	}
	return q
}()

func newTaskUpdate(t *gengate.Task, release bool) taskUpdate {
	args := append(make([]any, 0, 14), t.Status, t.UpstreamID, ms(t.RunAt), t.ErrorCode, t.ErrorMessage, boolInt(t.InputFault),
		t.ReviewReason, ms(t.UpdatedAt), ms(t.CompletedAt), t.ID, t.Attempts, t.Engine, encodeRoute(t.Route))
	leased := 0
	if t.LeaseToken != "" {
		leased, args = 1, append(args, t.LeaseToken)
	}
	return taskUpdate{id: t.ID, query: taskUpdates[boolInt(release)][leased], args: args, release: release, token: t.LeaseToken}
}

func (u taskUpdate) run(ctx context.Context, tx execer) error {
	res, err := tx.ExecContext(ctx, u.query, u.args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return u.conflict()
	}
	return nil
}

// conflict is the error of an update whose guard did not hold.
func (u taskUpdate) conflict() error {
	return gengate.Errorf(gengate.EConflict, "task %s changed under this claim", u.id)
}

// FinishTask moves a task to its final (or review) state, with its
// creations or its refund, in one transaction.
func (s *DB) FinishTask(ctx context.Context, t *gengate.Task, refund int) error {
	u := newTaskUpdate(t, true)
	// The outputs' rows, their tokens as stored (filetokens.go), made here
	// rather than on the writer.
	creations := make([][]any, len(t.Outputs))
	for i, c := range t.Outputs {
		digest, sealed := s.storedToken(c.Token, c.ID)
		creations[i] = []any{c.ID, c.AccountID, c.TaskID, c.Index, c.Key, digest, sealed, c.ContentType, c.Ext, c.Size, ms(c.CreatedAt)}
	}
	cost := upstreamCostArgs(t)
	outbox := func(ctx context.Context, tx *sql.Tx) error {
		if err := s.addWebhookEvent(ctx, tx, t); err != nil { // the outbox: webhooks.go
			return err
		}
		return s.notify(ctx, tx, ChannelTask, t.ID)
	}
	alone := func(ctx context.Context, tx *sql.Tx) error {
		if err := u.run(ctx, tx); err != nil {
			return err
		}
		for _, row := range creations {
			if _, err := tx.ExecContext(ctx, `INSERT INTO creations (`+creationColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, row...); err != nil {
				return err
			}
		}
		if refund > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, refund, t.AccountID); err != nil {
				return err
			}
			if err := insertLedger(ctx, tx, t.AccountID, t.ID, gengate.LedgerRefund, refund, t.ErrorCode, t.UpdatedAt); err != nil {
				return err
			}
			if err := s.unspendKey(ctx, tx, t, refund); err != nil {
				return err
			}
		}
		if cost != nil { // upstreamcosts.go
			if err := insertUpstreamCost(ctx, tx, cost); err != nil {
				return err
			}
		}
		return outbox(ctx, tx)
	}
	f := &groupFinish{u: &u, creations: creations, cost: cost, outbox: outbox}
	var err error
	switch plain := refund == 0 && u.groupable(); {
	case plain && s.w != nil: // the writer writes it with the other finishes of its batch (finishbatch.go)
		err = s.w.doFinish(ctx, f, alone)
	case plain && s.finishes != nil: // so does PostgreSQL's batcher
		err = s.finishes.save(ctx, f, func() error { return s.tx(ctx, alone) })
	default:
		err = s.tx(ctx, alone)
	}
	if err == nil {
		t.LeaseToken = ""
	}
	return err
}

// ListTasks returns tasks in a status, oldest first.
func (s *DB) ListTasks(ctx context.Context, status gengate.Status, limit int) ([]*gengate.Task, error) {
	rows, err := s.reader().QueryContext(ctx, listTasksQuery(status), status, limit)
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
}

// FindCreation returns the creation with the URL token.
func (s *DB) FindCreation(ctx context.Context, token string) (*gengate.Creation, error) {
	by := lookupToken(token)
	c, err := s.scanCreationFor(s.reader().QueryRowContext(ctx, `SELECT `+creationColumns+` FROM creations WHERE `+tokenLookup,
		by.digest, by.clear), &by)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("file", "")
	}
	return c, err
}

// PurgeTasks deletes finished task records completed before the time,
// and with them their webhook events and the events' attempts (the
// outbox rows name their task without a foreign key), in one transaction;
// and the backoff of webhook targets paused until before the time (no
// attempt since).
func (s *DB) PurgeTasks(ctx context.Context, completedBefore time.Time) (int, error) {
	const purged = `SELECT id FROM tasks WHERE status IN ('succeeded','failed','canceled') AND completed_at > 0 AND completed_at < $1`
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() // after a Commit, a no-op
	cut := ms(completedBefore)
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_attempts WHERE event_id IN
		(SELECT id FROM webhook_events WHERE task_id IN (`+purged+`))`, cut); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE task_id IN (`+purged+`)`, cut); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_backoff WHERE until_at < $1`, cut); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM upstream_costs WHERE completed_at < $1`, cut-costKeep.Milliseconds()); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE status IN ('succeeded','failed','canceled') AND completed_at > 0 AND completed_at < $1`, cut)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return int(n), tx.Commit()
}

// listTasksQuery is ListTasks' query of the tasks in status ($1).
func listTasksQuery(status gengate.Status) string {
	return `SELECT ` + taskColumns + ` FROM tasks WHERE status = $1 AND ` + statusTerm(status) + ` ORDER BY created_at LIMIT $2`
}

// statusTerm is the condition that a task in status is, or is not, in
// the active states. tasks_status holds only the tasks out of them
// (migration 00014 on SQLite, 00040 on PostgreSQL), and a planner uses a
// partial index only for a query whose WHERE implies the index's own
// condition (SQLite: holds it word for word): a query by status adds this
// term.
func statusTerm(status gengate.Status) string {
	if status.Active() {
		return isActive
	}
	return notActive
}

// countTasksQuery is CountTasks' query. The active tasks are counted in
// tasks_due and the others in tasks_status, each index holding only its
// own (migration 00014 on SQLite, 00040 on PostgreSQL); SQLite, which has
// no statistics, is told which index to walk.
func (s *DB) countTasksQuery() string {
	if s.postgres {
		return `SELECT status, COUNT(*) FROM tasks WHERE ` + isActive + ` GROUP BY status
		UNION ALL
		SELECT status, COUNT(*) FROM tasks WHERE ` + notActive + ` GROUP BY status`
	}
	return `SELECT status, COUNT(*) FROM tasks INDEXED BY tasks_due WHERE ` + isActive + ` GROUP BY status
		UNION ALL
		SELECT status, COUNT(*) FROM tasks INDEXED BY tasks_status WHERE ` + notActive + ` GROUP BY status`
}

// CountTasks returns the number of task records in each status.
func (s *DB) CountTasks(ctx context.Context) (map[gengate.Status]int, error) {
	rows, err := s.reader().QueryContext(ctx, s.countTasksQuery())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[gengate.Status]int{}
	for rows.Next() {
		var st gengate.Status
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		counts[st] = n
	}
	return counts, rows.Err()
}
