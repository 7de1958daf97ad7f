package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestCreateTaskOneRoundTrip: on PostgreSQL a new task is created by one
// call of gengate_create_task (debit, key spend, task, charge, notify). A
// request it does not create raises GG001 having written nothing, even
// when the refusal comes after the debit (the key's daily limit); then
// CreateTask's transaction gives the right answer. The created task, its
// charge and the balance are what the transaction would have written.
func TestCreateTaskOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a := newAccount(t, s, 10)
	_, k := gengate.NewAPIKey(a.ID, "k", t0)
	k.SpendLimit = 3
	if err := s.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	call := func(task *gengate.Task) (int, error) {
		var balance int
		err := s.SQL().QueryRowContext(ctx, `SELECT gengate_create_task($1, $2, $3, $4, $5, $6, '{}', '{}', $7, $8,
			'fp', 'sandbox', '', $9, $9, $9, '', $10, '', $11)`,
			task.ID, task.AccountID, task.ModelID, task.Type, task.Status, task.Prompt, task.Cost,
			nilIfEmpty(task.IdempotencyKey), t0.UnixMilli(), task.KeyID, gengate.UTCDay(t0)).Scan(&balance)
		return balance, err
	}
	isGG001 := func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "GG001"
	}
	first := newTask(a.ID, 2)
	first.KeyID, first.IdempotencyKey = k.ID, "key-1"
	if b, err := call(first); err != nil || b != 8 {
		t.Fatalf("gengate_create_task = %d, %v; want balance 8", b, err)
	}
	got, err := s.FindTask(ctx, first.ID)
	if err != nil || got.Cost != 2 || got.Status != gengate.StatusQueued || got.IdempotencyKey != "key-1" || got.RunAt.UnixMilli() != t0.UnixMilli() {
		t.Fatalf("FindTask = %+v, %v", got, err)
	}
	for name, task := range map[string]*gengate.Task{
		"over the key's daily limit (after the debit)": func() *gengate.Task { x := newTask(a.ID, 2); x.KeyID = k.ID; return x }(),
		"over the balance": newTask(a.ID, 9),
		"a used Idempotency-Key": func() *gengate.Task {
			x := newTask(a.ID, 1)
			x.IdempotencyKey = "key-1"
			return x
		}(),
	} {
		if _, err := call(task); !isGG001(err) {
			t.Errorf("%s: err %v; want GG001", name, err)
		}
		if _, err := s.FindTask(ctx, task.ID); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Errorf("%s: the task was written (%v)", name, err)
		}
	}
	if b := balance(t, s, a.ID); b != 8 {
		t.Errorf("balance %d after the refusals; want 8 (nothing debited)", b)
	}
	entries := checkLedger(t, s, a.ID)
	if len(entries) != 2 || entries[1].Kind != gengate.LedgerCharge || entries[1].TaskID != first.ID || entries[1].Amount != -2 {
		t.Errorf("ledger %+v; want the grant and one charge of 2 for %s", entries, first.ID)
	}
	// Through CreateTask, the refusals get their answers from the
	// transaction.
	over := newTask(a.ID, 2)
	over.KeyID = k.ID
	if _, err := s.CreateTask(ctx, over); gengate.ErrorCode(err) != gengate.ESpendLimit {
		t.Errorf("CreateTask over the key's limit: %v; want %s", err, gengate.ESpendLimit)
	}
	res, err := s.CreateTask(ctx, func() *gengate.Task { x := newTask(a.ID, 1); x.IdempotencyKey = "key-1"; return x }())
	if err != nil || !res.Existing || res.Task.ID != first.ID || res.Balance != 8 {
		t.Errorf("CreateTask with a used key = %+v, %v; want the first task, balance 8", res, err)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestPostgresPool: the PostgreSQL pool is DefaultPostgresConns unless
// WithPostgresConns says otherwise, and never more connections are open.
func TestPostgresPool(t *testing.T) {
	url := sqltest.URL(t, "postgres")
	for _, c := range []struct {
		opts []sqlstore.Option
		want int
	}{{nil, sqlstore.DefaultPostgresConns}, {[]sqlstore.Option{sqlstore.WithPostgresConns(3)}, 3}} {
		s, err := sqlstore.Open(context.Background(), url, t.TempDir(), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		// Hold more connections than the pool has: the extra ones wait.
		ctx, cancel := context.WithCancel(context.Background())
		for range c.want + 2 {
			go func() {
				conn, err := s.SQL().Conn(ctx)
				if err == nil {
					<-ctx.Done()
					conn.Close()
				}
			}()
		}
		deadline := time.Now().Add(time.Minute)
		for s.SQL().Stats().InUse < c.want && time.Now().Before(deadline) {
			<-time.After(10 * time.Millisecond)
		}
		if st := s.SQL().Stats(); st.MaxOpenConnections != c.want || st.OpenConnections != c.want {
			t.Errorf("pool: %d open, max %d; want %d", st.OpenConnections, st.MaxOpenConnections, c.want)
		}
		cancel()
		s.Close()
	}
}
