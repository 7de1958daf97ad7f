package sqlstore_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestSchemaConstraints proves the money rules hold in the schema itself,
// whatever code writes to it.
func TestSchemaConstraints(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			db := s.SQL()
			a := newAccount(t, s, 40)
			task := newTask(a.ID, 4)
			mustCreate(t, s, task)
			c := mustClaim(t, s, task.ID, t0)
			c.Status = gengate.StatusFailed
			if err := s.FinishTask(ctx, c, 4); err != nil {
				t.Fatal(err)
			}
			insert := func(taskID any, kind string, amount int) error {
				_, err := db.ExecContext(ctx, `INSERT INTO ledger (account_id, task_id, kind, amount, note, created_at)
					VALUES ($1, $2, $3, $4, '', 0)`, a.ID, taskID, kind, amount)
				return err
			}

			// One charge and one refund per task.
			wantViolation(t, "second charge", insert(task.ID, "charge", -4), vUnique)
			wantViolation(t, "second refund", insert(task.ID, "refund", 4), vUnique)
			// Charges and refunds name a task; grants and adjustments do not.
			wantViolation(t, "charge without a task", insert(nil, "charge", -4), vCheck)
			wantViolation(t, "refund without a task", insert(nil, "refund", 4), vCheck)
			wantViolation(t, "grant with a task", insert(gengate.NewID(), "grant", 4), vCheck)
			wantViolation(t, "unknown kind", insert(nil, "gift", 4), vCheck)
			wantViolation(t, "unknown account", func() error {
				_, err := db.ExecContext(ctx, `INSERT INTO ledger (account_id, kind, amount, created_at) VALUES ($1, 'grant', 1, 0)`, gengate.NewID())
				return err
			}(), vForeignKey)

			// The ledger is append-only.
			_, err := db.ExecContext(ctx, `UPDATE ledger SET amount = 1000 WHERE account_id = $1`, a.ID)
			wantViolation(t, "UPDATE ledger", err, vAppendOnly)
			_, err = db.ExecContext(ctx, `DELETE FROM ledger WHERE account_id = $1`, a.ID)
			wantViolation(t, "DELETE FROM ledger", err, vAppendOnly)
			if entries := checkLedger(t, s, a.ID); len(entries) != 3 {
				t.Errorf("ledger = %+v; want grant, charge, refund", entries)
			}

			// A balance is never negative.
			_, err = db.ExecContext(ctx, `UPDATE accounts SET balance = balance - 41 WHERE id = $1`, a.ID)
			wantViolation(t, "negative balance", err, vCheck)
			if b := balance(t, s, a.ID); b != 40 {
				t.Errorf("balance = %d; want 40", b)
			}

			// Tasks: known states, non-negative cost, one task per key and account.
			_, err = db.ExecContext(ctx, `UPDATE tasks SET status = 'lost' WHERE id = $1`, task.ID)
			wantViolation(t, "unknown status", err, vCheck)
			_, err = db.ExecContext(ctx, `UPDATE tasks SET cost = -1 WHERE id = $1`, task.ID)
			wantViolation(t, "negative cost", err, vCheck)
			k1, k2 := newTask(a.ID, 0), newTask(a.ID, 0)
			k1.IdempotencyKey, k2.IdempotencyKey = "k", "k"
			mustCreate(t, s, k1)
			_, err = db.ExecContext(ctx, `UPDATE tasks SET idempotency_key = 'k' WHERE id = $1`, task.ID)
			wantViolation(t, "second task with a key", err, vUnique)
			_, err = db.ExecContext(ctx, `UPDATE tasks SET account_id = $1 WHERE id = $2`, gengate.NewID(), task.ID)
			wantViolation(t, "task of an unknown account", err, vForeignKey)
		})
	}
}

func gooseVersions(tb testing.TB, db *sql.DB) int {
	tb.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM goose_db_version`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestMigrationsIdempotent opens one database twice, the second time while
// the first handle is still open.
func TestMigrationsIdempotent(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			s1, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s1.Close()
			applied := gooseVersions(t, s1.SQL())
			if applied < 2 { // goose's version 0 and at least one migration
				t.Fatalf("goose_db_version has %d rows after the first Open", applied)
			}
			a := newAccount(t, s1, 7)

			s2, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatalf("second Open: %v", err)
			}
			defer s2.Close()
			if n := gooseVersions(t, s2.SQL()); n != applied {
				t.Errorf("goose_db_version has %d rows after the second Open; want %d (nothing new applied)", n, applied)
			}
			if b := balance(t, s2, a.ID); b != 7 {
				t.Errorf("balance through the second handle = %d; want 7", b)
			}
			s2.Close()

			s3, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatalf("third Open: %v", err)
			}
			defer s3.Close()
			if n := gooseVersions(t, s3.SQL()); n != applied {
				t.Errorf("goose_db_version has %d rows after the third Open; want %d", n, applied)
			}
		})
	}
}

// TestTwoHandles is two processes on one database: each writes while the
// other is open, and on SQLite a writer proceeds while a reader holds a
// snapshot (WAL) or waits for another writer's lock (busy_timeout) rather
// than failing at once.
func TestTwoHandles(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			h1, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer h1.Close()
			h2, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer h2.Close()
			a := newAccount(t, h1, 10)
			newAccount(t, h1, 0)

			if b, err := h2.Grant(ctx, a.ID, 5, "from 2", t0); err != nil || b != 15 {
				t.Fatalf("Grant through handle 2 = %d, %v; want 15", b, err)
			}
			if b := balance(t, h1, a.ID); b != 15 {
				t.Errorf("handle 1 sees balance %d; want 15", b)
			}

			// Handle 1 holds a read snapshot; handle 2 still writes.
			rtx, err := h1.SQL().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := rtx.QueryContext(ctx, `SELECT id FROM accounts`)
			if err != nil || !rows.Next() {
				t.Fatalf("read through handle 1: %v", err)
			}
			if b, err := h2.Grant(ctx, a.ID, 5, "during a read", t0); err != nil || b != 20 {
				t.Fatalf("Grant through handle 2 during handle 1's read = %d, %v; want 20", b, err)
			}
			rows.Close()
			rtx.Rollback()

			// Handle 1 holds the write lock (or, on PostgreSQL, the
			// account's row); handle 2's Grant waits for it, then lands.
			wtx, err := h1.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := wtx.ExecContext(ctx, `UPDATE accounts SET balance = balance WHERE id = $1`, a.ID); err != nil {
				t.Fatal(err)
			}
			started, done := make(chan struct{}), make(chan error, 1)
			go func() {
				close(started)
				_, err := h2.Grant(ctx, a.ID, 5, "after a write", t0)
				done <- err
			}()
			<-started
			// Keep the lock for a moment of work, so that the Grant meets it
			// (without a busy timeout it would fail at once).
			var n int
			if err := wtx.QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)
				SELECT COUNT(*) FROM c`).Scan(&n); err != nil || n != 30000 {
				t.Fatalf("work under the lock: %d, %v", n, err)
			}
			if err := wtx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("Grant through handle 2 while handle 1 wrote: %v", err)
			}
			if b := balance(t, h1, a.ID); b != 25 {
				t.Errorf("balance = %d; want 25", b)
			}
			checkLedger(t, h1, a.ID)
		})
	}
}

// TestConnectionSettings checks what the store's statements rely on:
// on SQLite WAL, a busy timeout, foreign keys and full sync; on PostgreSQL
// READ COMMITTED, under which a blocked conditional UPDATE rereads the row.
func TestConnectionSettings(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			query := func(q string) string {
				t.Helper()
				var v string
				if err := s.SQL().QueryRowContext(context.Background(), q).Scan(&v); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return v
			}
			want := map[string]string{"SHOW transaction_isolation": "read committed"}
			if d == "sqlite" {
				want = map[string]string{
					"PRAGMA journal_mode": "wal",
					"PRAGMA busy_timeout": "10000",
					"PRAGMA foreign_keys": "1",
					"PRAGMA synchronous":  "2",
				}
			}
			for q, w := range want {
				if got := query(q); got != w {
					t.Errorf("%s = %q; want %q", q, got, w)
				}
			}
			if s.Postgres() != (d == "postgres") {
				t.Errorf("Postgres() = %v on %s", s.Postgres(), d)
			}
		})
	}
}
