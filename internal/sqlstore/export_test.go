package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/gengate/gengate"
)

// ClaimUpdatePlans returns SQLite's plans of the claim's UPDATEs
// (claimUpdates: the lease, and the lease with ClaimSteps' move to
// submitting; EXPLAIN QUERY PLAN), one line per plan node.
func (s *DB) ClaimUpdatePlans(ctx context.Context) ([2]string, error) {
	var plans [2]string
	for i, q := range claimUpdates {
		p, err := s.sqlitePlan(ctx, q, `[1,2]`, "tok", int64(2), int64(1))
		if err != nil {
			return plans, err
		}
		plans[i] = p
	}
	return plans, nil
}

// sqlitePlan returns SQLite's plan of the query (EXPLAIN QUERY PLAN), one
// line per plan node.
func (s *DB) sqlitePlan(ctx context.Context, q string, args ...any) (string, error) {
	return planText(ctx, s.db, "EXPLAIN QUERY PLAN "+q, args...)
}

// explainColumn runs an EXPLAIN statement on q (the pool, or one
// connection whose settings it must see) and returns one column of its
// rows, as text: column col, or the last one when col is negative.
func explainColumn(ctx context.Context, q querier, query string, args []any, col int) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if col < 0 {
		col = len(cols) - 1
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		switch v := vals[col].(type) {
		case []byte:
			out = append(out, string(v))
		default:
			out = append(out, fmt.Sprint(v))
		}
	}
	return out, rows.Err()
}

// ClaimPlan returns the database's plan of the due-task claim, one line
// per plan node: EXPLAIN QUERY PLAN on SQLite; on PostgreSQL, EXPLAIN of
// the body of gengate_claim_tasks as installed, under the settings the
// function runs with. There, generic asks for the generic plan, the one
// PostgreSQL may settle on for a statement run many times.
func (s *DB) ClaimPlan(ctx context.Context, now time.Time, generic bool) (string, error) {
	return s.claimPlanOf(ctx, "gengate_claim_tasks", now, generic)
}

// ClaimStepsPlan is ClaimPlan for ClaimSteps: on PostgreSQL the plan of
// gengate_claim_steps_plan, which also moves the claimed queued tasks to
// submitting; on SQLite the plan of the claim, which is ClaimTasks'.
func (s *DB) ClaimStepsPlan(ctx context.Context, now time.Time, generic bool) (string, error) {
	return s.claimPlanOf(ctx, "gengate_claim_steps_plan", now, generic)
}

func (s *DB) claimPlanOf(ctx context.Context, fn string, now time.Time, generic bool) (string, error) {
	q, args := s.claimDue("tok", ms(now)+1000, ms(now), 8)
	if !s.postgres {
		q, args = s.claimSelection(8), []any{ms(now)}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if s.postgres {
		body, err := functionQuery(ctx, conn, fn)
		if err != nil {
			return "", err
		}
		defer conn.ExecContext(ctx, `DEALLOCATE claim_plan`)
		defer conn.ExecContext(ctx, `RESET ALL`)
		for i, p := range []string{"p_token", "p_until", "p_now", "p_limit"} {
			body = strings.ReplaceAll(body, p, fmt.Sprintf("$%d", i+1))
		}
		if _, err := conn.ExecContext(ctx, `PREPARE claim_plan (text, bigint, bigint, int) AS `+body); err != nil {
			return "", err
		}
		mode := "force_custom_plan"
		if generic {
			mode = "force_generic_plan"
		}
		if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = `+mode); err != nil {
			return "", err
		}
		q, args = `EXPLAIN EXECUTE claim_plan ('tok', `+fmt.Sprint(ms(now)+1000)+`, `+fmt.Sprint(ms(now))+`, 8)`, nil
	} else {
		q = "EXPLAIN QUERY PLAN " + q
	}
	return planText(ctx, conn, q, args...)
}

// planText runs the EXPLAIN q on conn (the pool, or the connection whose
// settings it must see) and returns its plan, one line per
// row (the last column holds the plan text on both databases).
func planText(ctx context.Context, conn querier, q string, args ...any) (string, error) {
	lines, err := explainColumn(ctx, conn, q, args, -1)
	return strings.Join(lines, "\n"), err
}

// functionQuery returns the one query of the function fn (a LANGUAGE sql
// body, or a PL/pgSQL one that is one RETURN QUERY) and applies fn's
// settings (its SET clauses) to conn, so that the query is planned as it
// is inside fn. The caller resets conn's settings (RESET ALL).
func functionQuery(ctx context.Context, conn *sql.Conn, fn string) (string, error) {
	body, err := functionSource(ctx, conn, fn, -1)
	if err != nil {
		return "", err
	}
	if q, ok := strings.CutPrefix(strings.TrimSpace(body), "BEGIN\nRETURN QUERY\n"); ok {
		body = strings.TrimSuffix(strings.TrimSpace(q), "END;")
	}
	return strings.TrimSuffix(strings.TrimSpace(body), ";"), nil
}

// functionSource returns the body of the function fn of nargs arguments
// (any number if negative) and applies its settings to conn.
func functionSource(ctx context.Context, conn *sql.Conn, fn string, nargs int) (string, error) {
	var body, config string
	if err := conn.QueryRowContext(ctx, `SELECT prosrc, coalesce(array_to_string(proconfig, E'\n'), '') FROM pg_proc
		WHERE proname = $1 AND ($2 < 0 OR pronargs = $2) AND pronamespace = current_schema()::regnamespace`,
		fn, nargs).Scan(&body, &config); err != nil {
		return "", err
	}
	for _, c := range strings.Split(config, "\n") {
		name, value, ok := strings.Cut(c, "=")
		if !ok {
			continue
		}
		if _, err := conn.ExecContext(ctx, `SELECT set_config($1, $2, false)`, name, value); err != nil {
			return "", err
		}
	}
	return body, nil
}

// CreateKeysPlan returns PostgreSQL's plan of gengate_create_tasks'
// Idempotency-Key lookup (the batch's keys already used), taken from the
// function's body and planned under the function's settings, generic as
// PL/pgSQL settles on for a statement run many times.
func (s *DB) CreateKeysPlan(ctx context.Context) (string, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	defer conn.ExecContext(ctx, `RESET ALL`)
	body, err := functionSource(ctx, conn, "gengate_create_tasks", 23)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?s)SELECT coalesce\(array_agg\(t\.account_id[^;]*idempotency_key = u\.ikey`).FindString(body)
	if m == "" {
		return "", fmt.Errorf("no Idempotency-Key lookup in gengate_create_tasks:\n%s", body)
	}
	q := strings.NewReplacer(" INTO used", "", "p_account", "$1", "p_key", "$2").Replace(m)
	defer conn.ExecContext(ctx, `DEALLOCATE keys_plan`)
	if _, err := conn.ExecContext(ctx, `PREPARE keys_plan (text[], text[]) AS `+q); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		return "", err
	}
	return planText(ctx, conn, `EXPLAIN EXECUTE keys_plan ('{a,a}', '{k1,k2}')`)
}

// HoldWriter makes the SQLite writer run, in a batch of its own, a write
// that waits until release is called, and returns once the writer is in
// it: writes sent meanwhile queue up and go together into the next batch.
// Call it while no other write is queued.
func (s *DB) HoldWriter(tb testing.TB) (release func()) {
	tb.Helper()
	in, out, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.w.do(context.Background(), func(context.Context, *sql.Tx) error {
			close(in)
			<-out
			return nil
		})
	}()
	<-in
	return func() {
		close(out)
		if err := <-done; err != nil {
			tb.Errorf("held write: %v", err)
		}
	}
}

// QueuedWrites returns how many writes wait for the SQLite writer.
func (s *DB) QueuedWrites() int { return len(s.w.jobs) }

// OnCommit makes the SQLite writer call f with the number of writes of each
// batch before its COMMIT; an error from f fails the batch as a failed
// COMMIT would. It is set by a write, so that the writer sees it.
func (s *DB) OnCommit(tb testing.TB, f func(writes int) error) {
	tb.Helper()
	if err := s.w.do(context.Background(), func(context.Context, *sql.Tx) error {
		s.w.beforeCommit = f
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
}

// Write runs fn as one write: in a batch of the writer on SQLite.
func (s *DB) Write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.tx(ctx, fn)
}

// CreateBatches returns how many batches of task creations the store sent
// to PostgreSQL, and how many tasks they held (pgcreate.go); on SQLite,
// how many groups of creations the writer made together, and how many
// tasks they made (createbatch.go).
func (s *DB) CreateBatches() (batches, items int64) {
	if s.w != nil {
		return s.w.createGroups.Load(), s.w.createItems.Load()
	}
	if s.create == nil {
		return 0, 0
	}
	return s.create.batches.Load(), s.create.items.Load()
}

// CreateQueued returns how many task creations wait for a batch.
func (s *DB) CreateQueued() int {
	return s.create.gather.queued()
}

// SendCreateBatch sends the tasks to PostgreSQL as one batch of
// gengate_create_tasks, as the batcher would, and returns for each
// whether the batch created it (with the balance after it), or left it to
// be created alone, or failed it.
func (s *DB) SendCreateBatch(tasks []*gengate.Task) (plain, alone []bool, balances []int, err error) {
	jobs := make([]*createJob, len(tasks))
	for i, t := range tasks {
		options, err := encodeOptions(t.Options)
		if err != nil {
			return nil, nil, nil, err
		}
		inputs, _ := json.Marshal(t.Inputs)
		jobs[i] = &createJob{ctx: context.Background(), t: t, options: options, inputs: string(inputs)}
	}
	s.create.send(jobs)
	for _, j := range jobs {
		plain, alone, balances = append(plain, j.plain), append(alone, j.alone), append(balances, j.balance)
		if j.err != nil {
			err = j.err
		}
	}
	return plain, alone, balances, err
}

// SetSQLiteBatchWait changes how long the SQLite writer gathers writes
// that arrive together (WithSQLiteBatchWait, unbounded here). It is set
// by a write, so that the writer sees it.
func (s *DB) SetSQLiteBatchWait(tb testing.TB, d time.Duration) {
	tb.Helper()
	if err := s.w.do(context.Background(), func(context.Context, *sql.Tx) error {
		s.w.wait = d
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
}

// StatusPlans returns SQLite's plans (EXPLAIN QUERY PLAN, one line per
// node) of the queries by status: CountTasks', ListTasks' for each
// status given, and ListReview's with a cursor.
func (s *DB) StatusPlans(ctx context.Context, statuses ...gengate.Status) (map[string]string, error) {
	queries := map[string][]any{
		"CountTasks": {s.countTasksQuery()},
		"ListReview": {listReviewQuery(` AND (created_at > $1 OR (created_at = $1 AND id > $2))`, 3), int64(0), "", 10},
	}
	for _, st := range statuses {
		queries["ListTasks "+string(st)] = []any{listTasksQuery(st), string(st), 10}
	}
	plans := map[string]string{}
	for name, q := range queries {
		plan, err := s.sqlitePlan(ctx, q[0].(string), q[1:]...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		plans[name] = plan
	}
	return plans, nil
}

// ClearTokensPlan returns SQLite's plan of Open's query of the table's
// rows whose file token is in clear (filetokens.go).
func (s *DB) ClearTokensPlan(ctx context.Context, table string) (string, error) {
	return s.sqlitePlan(ctx, clearTokensQuery(table))
}

// CloseReaders closes SQLite's read pool, so that every read fails.
func (s *DB) CloseReaders() { s.read.Close() }

// InsertChunks returns the rows of each multi-row INSERT a group of n
// creations is written with (createbatch.go), and whether each has its
// statement text.
func InsertChunks(n int) (rows []int, texts bool) {
	texts = true
	for n > 0 {
		c := chunk(n)
		rows = append(rows, c)
		texts = texts && taskInserts[c] != "" && ledgerInserts[c] != ""
		n -= c
	}
	return rows, texts
}

// SetListenCheck makes Listen check a quiet connection after d (and give
// it at most d to answer) instead of after listenCheck.
func (s *DB) SetListenCheck(d time.Duration) { s.listenEvery = d }

// WakeWorkers asks the PostgreSQL work notifier for a notification.
func (s *DB) WakeWorkers() { s.work.wake() }

// StepBatches returns how many groups of step records were written
// together, and how many records they held (stepbatch.go): by the SQLite
// writer, or in PostgreSQL batches.
func (s *DB) StepBatches() (batches, items int64) {
	if s.w != nil {
		return s.w.stepGroups.Load(), s.w.stepItems.Load()
	}
	return s.steps.batches.Load(), s.steps.items.Load()
}

// SaveStepsPlan returns the database's plan of the UPDATE that writes two
// step records together (EXPLAIN QUERY PLAN on SQLite; on PostgreSQL
// EXPLAIN of the generic plan of gengate_save_steps' query under the
// function's settings, the plan PL/pgSQL settles on for a statement run
// many times).
func (s *DB) SaveStepsPlan(ctx context.Context) (string, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var q string
	var args []any
	if s.postgres {
		body, err := functionQuery(ctx, conn, "gengate_save_steps")
		if err != nil {
			return "", err
		}
		defer conn.ExecContext(ctx, `DEALLOCATE steps_plan`)
		defer conn.ExecContext(ctx, `RESET ALL`)
		if _, err := conn.ExecContext(ctx, `PREPARE steps_plan (text[], text[], bigint[], text[], text[], int[], text[], bigint[],
			bigint[], text[], int[], text[], text[], text[]) AS `+body); err != nil {
			return "", err
		}
		if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
			return "", err
		}
		q = `EXPLAIN EXECUTE steps_plan ('{running,running}', '{u,u}', '{1,1}', '{"",""}', '{"",""}', '{0,0}', '{"",""}',
			'{1,1}', '{0,0}', '{a,b}', '{0,0}', '{sandbox,sandbox}', '{"",""}', '{t,t}')`
	} else {
		q = "EXPLAIN QUERY PLAN " + stepUpdates[2]
		for range 2 {
			args = append(args, "running", "u", 1, "", "", 0, "", 1, 0, "a", 0, "sandbox", "", "t")
		}
	}
	return planText(ctx, conn, q, args...)
}

// HoldSteps makes the PostgreSQL step saver leave the records sent to it
// queued until release is called; they then go in one batch. Call it
// while no batch is in flight.
func (s *DB) HoldSteps() (release func()) {
	return s.steps.gather.hold()
}

// StepsQueued returns how many step records wait for a PostgreSQL batch.
func (s *DB) StepsQueued() int {
	return s.steps.gather.queued()
}

// FailResealAfter makes the sealed records' walks read one row per batch
// and fail every batch written after the first n, as a rotation killed
// midway; n < 0 lifts it.
func (s *DB) FailResealAfter(n int) {
	if n < 0 {
		s.resealBatch, s.resealFault = 0, nil
		return
	}
	written := 0
	s.resealBatch = 1
	s.resealFault = func() error {
		if written >= n {
			return fmt.Errorf("injected failure after %d batches", n)
		}
		written++
		return nil
	}
}

// MigrateDownTo undoes the schema's migrations after version (their
// goose Downs, newest first), as a rollback to an earlier release does.
func (s *DB) MigrateDownTo(ctx context.Context, version int64) error {
	dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
	if s.postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, s.db, sub)
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}

// WriteStatements are SQLite's statements on a task row's way, by name:
// its creation, a step record, the lease's extension, a claim.
func WriteStatements() map[string]string {
	return map[string]string{
		"task INSERT":      taskInserts[1],
		"ledger INSERT":    ledgerInserts[1],
		"step records":     stepUpdates[2],
		"lease extension":  `UPDATE tasks SET lease_until = $1 WHERE id = $2 AND lease_token = $3 AND ` + isActive,
		"claim selection":  (&DB{}).claimSelection(4),
		"claim lease":      claimUpdates[0],
		"claim submitting": claimUpdates[1],
		"CountTasks":       (&DB{}).countTasksQuery(),
	}
}

// Opcodes returns SQLite's program (EXPLAIN) for the statement, one
// opcode per instruction.
func (s *DB) Opcodes(ctx context.Context, query string) ([]string, error) {
	// Every parameter bound (to NULL): EXPLAIN only compiles.
	n := strings.Count(query, "?")
	for _, m := range regexp.MustCompile(`\$([0-9]+)`).FindAllStringSubmatch(query, -1) {
		if k, _ := strconv.Atoi(m[1]); k > n {
			n = k
		}
	}
	return explainColumn(ctx, s.db, "EXPLAIN "+query, make([]any, n), 1) // the opcode
}

// FinishBatches returns how many groups of finishes were written
// together, and how many finishes they held (finishbatch.go): by the
// SQLite writer, or in PostgreSQL batches.
func (s *DB) FinishBatches() (batches, items int64) {
	if s.w != nil {
		return s.w.finishGroups.Load(), s.w.finishItems.Load()
	}
	return s.finishes.batches.Load(), s.finishes.items.Load()
}

// HoldFinishes holds PostgreSQL's batcher of finishes: the finishes sent
// meanwhile queue up, and go in one batch once release is called.
func (s *DB) HoldFinishes() (release func()) { return s.finishes.gather.hold() }

// FinishesQueued returns how many finishes wait for a PostgreSQL batch.
func (s *DB) FinishesQueued() int { return s.finishes.gather.queued() }
