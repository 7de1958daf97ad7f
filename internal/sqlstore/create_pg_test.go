package sqlstore_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestCreateTaskBatch: on PostgreSQL concurrent creations are sent as one
// call of gengate_create_tasks (pgcreate.go). An item that is not a plain
// success (over the key's daily limit, refused after its debit; over the
// balance; a used Idempotency-Key, also one used by an earlier item of
// the same batch) writes nothing and does not stop the items after it;
// the created tasks, their charges, the key's spend and the balances are
// what one transaction per task would have written; CreateTask then gives
// each refusal its answer.
func TestCreateTaskBatch(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a, b := newAccount(t, s, 10), newAccount(t, s, 5)
	_, k := gengate.NewAPIKey(a.ID, "k", t0)
	k.SpendLimit = 3
	if err := s.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	task := func(acct string, cost int, key *gengate.APIKey, idem string) *gengate.Task {
		x := newTask(acct, cost)
		x.IdempotencyKey = idem
		if key != nil {
			x.KeyID = key.ID
		}
		return x
	}
	items := []struct {
		name    string
		task    *gengate.Task
		balance int // after it; -1: not created
	}{
		// The batch takes the items of an account in the order given,
		// those without an API key first, then those of each key.
		{"plain, with an Idempotency-Key", task(a.ID, 2, nil, "key-1"), 8},
		{"over the balance", task(a.ID, 9, nil, ""), -1},
		{"the Idempotency-Key of an earlier item", task(a.ID, 1, nil, "key-1"), -1},
		{"plain, with the key", task(a.ID, 2, k, ""), 6},
		{"over the key's daily limit (after the debit)", task(a.ID, 2, k, ""), -1},
		{"plain, after the refusals", task(a.ID, 1, k, ""), 5},
		{"plain, another account", task(b.ID, 5, nil, ""), 0},
		{"over the other account's balance", task(b.ID, 1, nil, ""), -1},
	}
	var tasks []*gengate.Task
	for _, it := range items {
		tasks = append(tasks, it.task)
	}
	plain, alone, balances, err := s.SendCreateBatch(tasks)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		created := it.balance >= 0
		if plain[i] != created || alone[i] || created && balances[i] != it.balance {
			t.Errorf("%s: created %v (alone %v), balance %d; want created %v, balance %d", it.name, plain[i], alone[i], balances[i], created, it.balance)
		}
		_, err := s.FindTask(ctx, it.task.ID)
		if created != (err == nil) {
			t.Errorf("%s: FindTask: %v; want it created: %v", it.name, err, created)
		}
	}
	if ba, bb := balance(t, s, a.ID), balance(t, s, b.ID); ba != 5 || bb != 0 {
		t.Errorf("balances %d, %d; want 5, 0", ba, bb)
	}
	if entries := checkLedger(t, s, a.ID); len(entries) != 4 {
		t.Errorf("ledger of the first account %+v; want the grant and three charges", entries)
	}
	if got, err := s.FindAPIKey(ctx, k.ID); err != nil || got.SpentToday != 3 {
		t.Errorf("the key spent %+v, %v; want 3 (the refused item's spend not kept)", got, err)
	}
	// Through CreateTask, the refusals get their answers from the
	// transaction.
	for _, c := range []struct {
		task *gengate.Task
		code string
	}{{items[4].task, gengate.ESpendLimit}, {items[1].task, gengate.EInsufficient}, {items[7].task, gengate.EInsufficient}} {
		if _, err := s.CreateTask(ctx, c.task); gengate.ErrorCode(err) != c.code {
			t.Errorf("CreateTask %s: %v; want %s", c.task.ID, err, c.code)
		}
	}
	res, err := s.CreateTask(ctx, items[2].task)
	if err != nil || !res.Existing || res.Task.ID != items[0].task.ID || res.Balance != 5 {
		t.Errorf("CreateTask with a used key = %+v, %v; want the first task, balance 5", res, err)
	}
}

// TestCreateTaskBatchFailsAlone: when PostgreSQL refuses the batch's
// statement (here one item breaks a CHECK constraint), nothing of the
// batch is written and every item is created alone, so the bad item fails
// by itself and the others are created.
func TestCreateTaskBatchFailsAlone(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a := newAccount(t, s, 10)
	good, bad, good2 := newTask(a.ID, 1), newTask(a.ID, 1), newTask(a.ID, 1)
	bad.Status = "bogus"
	plain, alone, _, err := s.SendCreateBatch([]*gengate.Task{good, bad, good2})
	if err != nil || plain[0] || plain[2] || !alone[0] || !alone[1] || !alone[2] {
		t.Fatalf("batch: plain %v alone %v, %v; want every item left to be created alone", plain, alone, err)
	}
	if b := balance(t, s, a.ID); b != 10 {
		t.Fatalf("balance %d after the failed batch; want 10 (nothing written)", b)
	}
	// Concurrent callers: each one's CreateTask answers for its task alone.
	errs := make(chan error, 3)
	for _, x := range []*gengate.Task{good, bad, good2} {
		go func() {
			_, err := s.CreateTask(ctx, x)
			errs <- err
		}()
	}
	failed := 0
	for range 3 {
		if err := <-errs; err != nil {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d creations failed; want 1 (the bad one)", failed)
	}
	for _, x := range []*gengate.Task{good, good2} {
		if _, err := s.FindTask(ctx, x.ID); err != nil {
			t.Errorf("task %s: %v", x.ID, err)
		}
	}
	if b := balance(t, s, a.ID); b != 8 {
		t.Errorf("balance %d; want 8", b)
	}
}

// TestCreateTaskGathered: creations that arrive while a batch waits (here
// for the account's row, held by another transaction) are gathered into
// the next batch, one commit for all, and each gets its own answer.
func TestCreateTaskGathered(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	const n = 10
	a := newAccount(t, s, n)
	hold, err := s.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, a.ID); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res gengate.CreateResult
		err error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			res, err := s.CreateTask(ctx, newTask(a.ID, 1))
			answers <- answer{res, err}
		}()
	}
	// Every creation is either in a batch blocked on the row or queued
	// behind them.
	for {
		batches, items := s.CreateBatches()
		queued := s.CreateQueued()
		if int(items)+queued == n && (batches == 2 || queued == 0) {
			break
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for range n {
		a := <-answers
		if a.err != nil || a.res.Existing || a.res.Balance < 0 || seen[a.res.Balance] {
			t.Fatalf("CreateTask = %+v, %v; want a new task and a balance of its own", a.res, a.err)
		}
		seen[a.res.Balance] = true
	}
	if b := balance(t, s, a.ID); b != 0 {
		t.Errorf("balance %d; want 0", b)
	}
	if batches, items := s.CreateBatches(); items != n || batches > 3 {
		t.Errorf("%d batches for %d creations; want at most 3 (two waited on the row, the rest gathered)", batches, items)
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
