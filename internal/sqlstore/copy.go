package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// This file copies one installation's rows into another database (the
// gengate migrate-data command): SQLite to PostgreSQL, or back. The source
// is read in one snapshot, the destination written in one transaction, and
// the copy is checked before that transaction commits, so the destination
// ends with all of the source's rows or none.

// ErrDestinationNotEmpty is returned (wrapped) by CopyTo when the
// destination already holds rows: two installations are never merged.
var ErrDestinationNotEmpty = errors.New("the destination database is not empty")

// TableCount is the number of rows of one table.
type TableCount struct {
	Table string
	Rows  int
}

// CopyStats says what CopyTo copied (or CountRows counted).
type CopyStats struct {
	// Tables holds every table, in copy order.
	Tables []TableCount
	// Active is the number of tasks a worker still has to run or finish
	// (queued, submitting or running). Their leases are not copied: any
	// worker on the destination may claim them.
	Active int
	// Leased is the number of tasks whose lease was live in the snapshot
	// (at the time of the copy): a worker on the source was running them,
	// so the source was still in use.
	Leased int
}

// Rows returns the count of the table, 0 when it is not listed.
func (c CopyStats) Rows(table string) int {
	for _, t := range c.Tables {
		if t.Table == table {
			return t.Rows
		}
	}
	return 0
}

// Total returns the number of rows in all tables.
func (c CopyStats) Total() int {
	n := 0
	for _, t := range c.Tables {
		n += t.Rows
	}
	return n
}

// Column kinds of copyTable.
const (
	colText     = iota // TEXT NOT NULL
	colNullText        // TEXT, may be NULL
	colInt             // BIGINT or INTEGER
	colNullInt         // BIGINT, may be NULL
	colReset           // known, not copied: the destination's default applies
)

type copyColumn struct {
	name string
	kind int
}

type copyTable struct {
	name  string
	order string
	cols  []copyColumn
}

// copyTables is every table of the schema, in dependency order (accounts
// first: the others refer to them). A migration that adds a table or a
// column must add it here too: CopyTo refuses a schema with a table or
// column it does not know, rather than leave data behind.
var copyTables = []copyTable{
	{"accounts", "id", []copyColumn{
		{"id", colText}, {"name", colText}, {"balance", colInt}, {"created_at", colInt},
	}},
	{"api_keys", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"name", colText}, {"prefix", colText}, {"hash", colText},
		{"created_at", colInt}, {"revoked_at", colInt},
		{"last_used_at", colInt}, {"spend_limit", colInt}, {"spent_day", colInt}, {"spent", colInt},
		{"test", colInt},
		{"operator", colInt},
	}},
	{"members", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"email", colText}, {"role", colText}, {"password_hash", colText},
		{"created_at", colInt}, {"email_form", colInt},
	}},
	{"sessions", "id", []copyColumn{
		{"id", colText}, {"token_hash", colText}, {"member_id", colText}, {"csrf_token", colText},
		{"created_at", colInt}, {"expires_at", colInt}, {"last_seen_at", colInt}, {"user_agent", colText},
	}},
	{"login_links", "token_hash", []copyColumn{
		{"token_hash", colText}, {"member_id", colText}, {"purpose", colText}, {"created_at", colInt},
		{"expires_at", colInt}, {"used_at", colInt},
	}},
	{"tasks", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"model_id", colText}, {"type", colText}, {"status", colText},
		{"prompt", colText}, {"options", colText}, {"inputs", colText}, {"cost", colInt},
		{"idempotency_key", colNullText}, {"fingerprint", colText}, {"engine", colText}, {"upstream_id", colText},
		{"error_code", colText}, {"error_message", colText}, {"input_fault", colInt}, {"review_reason", colText},
		// A lease names a claim of a process on the source; on the
		// destination the task is free for any worker to claim.
		{"lease_token", colReset}, {"lease_until", colReset},
		{"attempts", colInt}, {"run_at", colInt}, {"created_at", colInt}, {"updated_at", colInt},
		{"completed_at", colInt}, {"route", colText}, {"key_id", colText}, {"input_urls", colText},
	}},
	{"ledger", "id", []copyColumn{
		{"id", colInt}, {"account_id", colText}, {"task_id", colNullText}, {"kind", colText}, {"amount", colInt},
		{"note", colText}, {"created_at", colInt},
	}},
	{"redemption_codes", "hash", []copyColumn{
		{"hash", colText}, {"credits", colInt}, {"created_at", colInt}, {"expires_at", colInt},
		{"redeemed_by", colNullText}, {"redeemed_at", colInt},
	}},
	{"purchases", "session_id", []copyColumn{
		{"session_id", colText}, {"account_id", colText}, {"credits", colInt}, {"payment_intent", colText},
		{"amount_total", colInt}, {"currency", colText}, {"created_at", colInt}, {"refunded_credits", colInt}, {"taken_back", colInt},
	}},
	{"upstream_costs", "task_id", []copyColumn{
		{"task_id", colText}, {"model_id", colText}, {"engine", colText}, {"upstream", colText}, {"credits", colInt},
		{"micro_usd", colNullInt}, {"basis", colText}, {"completed_at", colInt},
	}},
	{"creations", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"task_id", colText}, {"idx", colInt}, {"blob_key", colText},
		{"token", colText}, {"token_sealed", colNullText}, {"content_type", colText}, {"ext", colText}, {"size", colInt}, {"created_at", colInt},
	}},
	{"uploads", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"blob_key", colText}, {"token", colText}, {"token_sealed", colNullText},
		{"content_type", colText}, {"ext", colText}, {"size", colInt}, {"created_at", colInt}, {"expires_at", colInt},
	}},
	{"task_progress", "task_id", []copyColumn{
		{"task_id", colText}, {"report", colText}, {"updated_at", colInt},
	}},
	{"task_webhooks", "task_id", []copyColumn{{"task_id", colText}, {"url", colText}, {"events", colText}, {"format", colText}}},
	{"webhook_secrets", "account_id", []copyColumn{{"account_id", colText}, {"secret", colText}, {"created_at", colInt},
		{"previous", colText}, {"previous_until", colInt}}},
	{"webhook_endpoints", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"url", colText}, {"event_types", colText}, {"created_at", colInt},
		{"secret", colText}, {"previous", colText}, {"previous_until", colInt},
	}},
	{"webhook_events", "id", []copyColumn{
		{"id", colText}, {"account_id", colText}, {"task_id", colText}, {"url", colText}, {"type", colText},
		{"created_at", colInt}, {"status", colText}, {"attempts", colInt}, {"next_at", colInt},
		{"lease_until", colReset}, // a claim of a process on the source
		{"last_status", colInt}, {"last_error", colText}, {"delivered_at", colInt},
		{"endpoint_id", colText}, {"schedule_from", colInt}, {"logs", colText},
	}},
	{"webhook_attempts", "id", []copyColumn{
		{"id", colText}, {"event_id", colText}, {"n", colInt}, {"at", colInt}, {"status", colInt}, {"error", colText},
	}},
	{"webhook_backoff", "account_id, target", []copyColumn{
		{"account_id", colText}, {"target", colText}, {"failures", colInt}, {"until_at", colInt},
	}},
	// Sealed under the server key the copy's processes are given, so the
	// install keeps signing with the keys its receivers know.
	{"signing_keys", "id", []copyColumn{
		{"id", colText}, {"public_key", colText}, {"private_key", colText}, {"created_at", colInt},
	}},
}

// copied returns the columns CopyTo carries over.
func (t copyTable) copied() []copyColumn {
	var out []copyColumn
	for _, c := range t.cols {
		if c.kind != colReset {
			out = append(out, c)
		}
	}
	return out
}

func columnNames(cols []copyColumn) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// CountRows counts the rows of every table in one consistent snapshot.
func (s *DB) CountRows(ctx context.Context) (CopyStats, error) {
	var stats CopyStats
	err := s.snapshot(ctx, func(tx *sql.Tx) error {
		if err := checkSchema(ctx, tx, s.postgres); err != nil {
			return err
		}
		var err error
		stats, err = countRows(ctx, tx, time.Now())
		return err
	})
	return stats, err
}

// snapshot runs fn in a read-only transaction: one consistent view of the
// database (REPEATABLE READ on PostgreSQL; a WAL read transaction on
// SQLite, which takes no write lock).
func (s *DB) snapshot(ctx context.Context, fn func(*sql.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin read snapshot: %w", err)
	}
	defer tx.Rollback() // read only: nothing to commit
	return fn(tx)
}

func countRows(ctx context.Context, q querier, now time.Time) (CopyStats, error) {
	var stats CopyStats
	for _, t := range copyTables {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.name).Scan(&n); err != nil {
			return stats, fmt.Errorf("count %s: %w", t.name, err)
		}
		stats.Tables = append(stats.Tables, TableCount{t.name, n})
	}
	err := q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN lease_until > $1 THEN 1 ELSE 0 END), 0)
		FROM tasks WHERE `+isActive, ms(now)).Scan(&stats.Active, &stats.Leased)
	if err != nil {
		return stats, fmt.Errorf("count active tasks: %w", err)
	}
	return stats, nil
}

// notData are the tables the copy leaves alone: the migrations' own
// bookkeeping, key_changes (a counter each database keeps for its own
// processes, created by its migration) and server_key (the check of the
// key the first serve on a database opened it with: filetokens.go; the
// copy's processes must be given the source's key, migrate-data says so,
// and carries the check itself: copyServerKeyCheck),
// Litestream's two tables in a SQLite database replicated by serve
// --replicate (its position counter and a lock it takes while it syncs;
// neither holds gengate's data), and worker_heartbeats (the processes
// running on that database: heartbeats.go).
var notData = map[string]bool{"goose_db_version": true, "key_changes": true, "server_key": true,
	"_litestream_seq": true, "_litestream_lock": true, "worker_heartbeats": true}

// checkSchema refuses a database with a table or column copyTables does not
// know: copying it would leave data behind without a word.
func checkSchema(ctx context.Context, tx *sql.Tx, postgres bool) error {
	query := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if postgres {
		query = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range tables {
		if !notData[name] && !slices.ContainsFunc(copyTables, func(t copyTable) bool { return t.name == name }) {
			return fmt.Errorf("table %s is not known to the copy (internal/sqlstore/copy.go): refusing to leave its rows behind", name)
		}
	}
	for _, t := range copyTables {
		rows, err := tx.QueryContext(ctx, `SELECT * FROM `+t.name+` WHERE 1 = 0`)
		if err != nil {
			return fmt.Errorf("read columns of %s: %w", t.name, err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			return err
		}
		for _, c := range cols {
			if !slices.ContainsFunc(t.cols, func(k copyColumn) bool { return k.name == c }) {
				return fmt.Errorf("column %s.%s is not known to the copy (internal/sqlstore/copy.go): refusing to leave it behind", t.name, c)
			}
		}
		for _, k := range t.cols {
			if !slices.Contains(cols, k.name) {
				return fmt.Errorf("table %s has no column %s: the schema is not the one this gengate expects", t.name, k.name)
			}
		}
	}
	return nil
}

// checkBalances returns an error naming the first account whose balance is
// not the sum of its ledger entries.
func checkBalances(ctx context.Context, q querier) error {
	var id string
	var balance, sum int64
	err := q.QueryRowContext(ctx, `SELECT a.id, a.balance, CAST(COALESCE(SUM(l.amount), 0) AS BIGINT)
		FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id
		GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(l.amount), 0)
		ORDER BY a.id LIMIT 1`).Scan(&id, &balance, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check balances: %w", err)
	}
	return fmt.Errorf("account %s has balance %d but its ledger entries sum to %d", id, balance, sum)
}

// CopyTo copies every row of s into dst, which must hold none: accounts,
// API keys (their hashes: the keys themselves are never stored), tasks
// with their idempotency keys, the ledger with its ids, and creations with
// their URL tokens. Task leases are reset, so that workers on dst can
// claim the tasks that were active. The output files themselves (blobs)
// are not copied.
//
// s is read in one snapshot; dst is written in one transaction, which
// commits only after dst's row counts equal s's and every account's
// balance equals the sum of its ledger entries. On any error nothing is
// written. A dst that already holds rows is refused with an error that
// wraps ErrDestinationNotEmpty.
func (s *DB) CopyTo(ctx context.Context, dst *DB) (CopyStats, error) {
	if s == dst || s.db == dst.db {
		return CopyStats{}, errors.New("the source and the destination are the same database")
	}
	var stats CopyStats
	err := s.snapshot(ctx, func(src *sql.Tx) error {
		if err := checkSchema(ctx, src, s.postgres); err != nil {
			return fmt.Errorf("source: %w", err)
		}
		var err error
		if stats, err = countRows(ctx, src, time.Now()); err != nil {
			return fmt.Errorf("source: %w", err)
		}
		if err := checkBalances(ctx, src); err != nil {
			return fmt.Errorf("source (nothing copied): %w", err)
		}
		return dst.tx(ctx, func(ctx context.Context, w *sql.Tx) error {
			return copyInto(ctx, dst, src, w, stats)
		})
	})
	if err != nil {
		return CopyStats{}, err
	}
	return stats, nil
}

// copyInto writes the rows of src into w, the destination's transaction,
// and checks them.
func copyInto(ctx context.Context, dst *DB, src, w *sql.Tx, want CopyStats) error {
	if dst.postgres {
		// Keep every other writer (a gengate serve started early, whose first
		// start creates an account) out until this transaction ends; readers
		// may go on. On SQLite the transaction holds the write lock already.
		if _, err := w.ExecContext(ctx, `LOCK TABLE accounts, api_keys, members, sessions, login_links, tasks, ledger, creations, uploads, task_progress,
			task_webhooks, webhook_secrets, webhook_endpoints, webhook_events, webhook_attempts, webhook_backoff, redemption_codes, purchases, upstream_costs, signing_keys IN EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("destination: lock tables: %w", err)
		}
	}
	if err := checkSchema(ctx, w, dst.postgres); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	have, err := countRows(ctx, w, time.Now())
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if n := have.Total(); n > 0 {
		return fmt.Errorf("%w: it holds %d accounts and %d rows in all (a gengate serve started on it creates an account on its first start); "+
			"migrate-data copies into an empty database only", ErrDestinationNotEmpty, have.Rows("accounts"), n)
	}
	for _, t := range copyTables {
		n, err := copyRows(ctx, dst.postgres, src, w, t)
		if err != nil {
			return fmt.Errorf("copy %s: %w", t.name, err)
		}
		if n != want.Rows(t.name) {
			return fmt.Errorf("copy %s: read %d rows from a snapshot that counted %d", t.name, n, want.Rows(t.name))
		}
	}
	if err := copyServerKeyCheck(ctx, src, w); err != nil {
		return err
	}
	if dst.postgres && want.Rows("ledger") > 0 {
		// Ledger ids were inserted as they are; new entries go on after
		// the largest. (A sequence change outlives a rollback: harmless, it
		// only makes a gap in the ids.)
		if _, err := w.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('ledger', 'id'), (SELECT MAX(id) FROM ledger))`); err != nil {
			return fmt.Errorf("destination: advance the ledger ids: %w", err)
		}
	}
	// Verify before committing.
	got, err := countRows(ctx, w, time.Now())
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	for i, t := range want.Tables {
		if g := got.Tables[i]; g.Rows != t.Rows {
			return fmt.Errorf("verify: the destination has %d rows in %s; the source has %d", g.Rows, t.Table, t.Rows)
		}
	}
	if err := checkBalances(ctx, w); err != nil {
		return fmt.Errorf("verify destination: %w", err)
	}
	return nil
}

// copyRows copies one table's rows, in the order of its key, and returns
// how many.
func copyRows(ctx context.Context, postgres bool, src, w *sql.Tx, t copyTable) (int, error) {
	cols := t.copied()
	names := columnNames(cols)
	params := make([]string, len(cols))
	for i := range cols {
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	override := ""
	if postgres && t.name == "ledger" {
		// ledger.id is GENERATED ALWAYS on PostgreSQL; keep the source's ids.
		override = " OVERRIDING SYSTEM VALUE"
	}
	ins, err := w.PrepareContext(ctx, `INSERT INTO `+t.name+` (`+names+`)`+override+` VALUES (`+strings.Join(params, ", ")+`)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	rows, err := src.QueryContext(ctx, `SELECT `+names+` FROM `+t.name+` ORDER BY `+t.order)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i, c := range cols {
		switch c.kind {
		case colText:
			ptrs[i] = new(string)
		case colNullText:
			ptrs[i] = new(sql.NullString)
		case colInt:
			ptrs[i] = new(int64)
		case colNullInt:
			ptrs[i] = new(sql.NullInt64)
		}
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, p := range ptrs {
			switch p := p.(type) {
			case *string:
				vals[i] = *p
			case *sql.NullString:
				vals[i] = *p // a driver.Valuer: NULL stays NULL
			case *sql.NullInt64:
				vals[i] = *p
			case *int64:
				vals[i] = *p
			}
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return n, fmt.Errorf("row %d (%s %v): %w", n+1, cols[0].name, vals[0], err)
		}
		n++
	}
	return n, rows.Err()
}

// copyServerKeyCheck carries the source's server key check (filetokens.go)
// to the destination, whose rows are sealed under the same key: a serve
// started on the copy with another key then stops at start, saying to give
// it the install's key, instead of starting and failing every read of a
// sealed token.
func copyServerKeyCheck(ctx context.Context, src, w *sql.Tx) error {
	var sealed string
	err := src.QueryRowContext(ctx, `SELECT sealed FROM server_key WHERE id = 1`).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no serve ever opened the source with a key
	}
	if err != nil {
		return fmt.Errorf("source: server key check: %w", err)
	}
	// The destination may hold a check of its own, made when it was opened
	// under a server key; its rows will be the source's, sealed under the
	// source's key, so the source's check replaces it.
	if _, err := w.ExecContext(ctx, `INSERT INTO server_key (id, sealed) VALUES (1, $1)
		ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed`, sealed); err != nil {
		return fmt.Errorf("destination: server key check: %w", err)
	}
	return nil
}
