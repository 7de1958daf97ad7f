package sqlstore_test

import (
	"context"
	"fmt"
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

// TestCreateTaskBatchKeys: the batch applies the key rules of the
// step-by-step path (spendKey): a key's spend starts over on a new UTC day,
// also within one batch, and a revoked key creates nothing.
func TestCreateTaskBatchKeys(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a := newAccount(t, s, 100)
	_, k := gengate.NewAPIKey(a.ID, "limited", t0)
	k.SpendLimit = 3
	_, gone := gengate.NewAPIKey(a.ID, "revoked", t0)
	for _, x := range []*gengate.APIKey{k, gone} {
		if err := s.CreateAPIKey(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeAccountKey(ctx, a.ID, gone.ID, t0); err != nil {
		t.Fatal(err)
	}
	task := func(key *gengate.APIKey, cost int, at time.Time) *gengate.Task {
		x := newTask(a.ID, cost)
		x.KeyID, x.CreatedAt = key.ID, at
		return x
	}
	day2 := t0.Add(24 * time.Hour)
	tasks := []*gengate.Task{
		task(k, 3, t0),    // the day's whole limit
		task(k, 1, t0),    // over it
		task(k, 2, day2),  // the next day: spend starts over
		task(k, 2, day2),  // over the next day's limit
		task(gone, 1, t0), // a revoked key
		task(k, 1, day2),  // within the next day's limit
	}
	want := []bool{true, false, true, false, false, true}
	plain, alone, _, err := s.SendCreateBatch(tasks)
	if err != nil {
		t.Fatal(err)
	}
	// The batch decides the items without a key first, then by key id.
	for i, x := range tasks {
		if plain[i] != want[i] || alone[i] {
			t.Errorf("item %d (key %s, cost %d, day %s): created %v (alone %v); want %v",
				i, x.KeyID[:6], x.Cost, x.CreatedAt.Format(time.DateOnly), plain[i], alone[i], want[i])
		}
	}
	if got, err := s.FindAPIKey(ctx, k.ID); err != nil || got.SpentToday != 3 {
		t.Errorf("the key spent %+v, %v; want 3 on the next day", got, err)
	}
	if b := balance(t, s, a.ID); b != 100-3-2-1 {
		t.Errorf("balance %d; want %d", b, 100-3-2-1)
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
// the next batch, one commit for all, and each gets its own answer. One
// batch is in flight at a time.
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
		if int(items)+queued == n && batches == 1 {
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
	if batches, items := s.CreateBatches(); items != n || batches > 2 {
		t.Errorf("%d batches for %d creations; want at most 2 (one waited on the row, the rest gathered)", batches, items)
	}
}

// TestCreateTaskBatchWaitsForCallers: callers that create one task after
// the other (the clients of a busy server) are not split into batches
// sent half empty: once a batch has committed, the next one waits for its
// callers to come back (up to --db-batch-wait, here far longer than they
// need), so after the first rounds every batch holds every caller. The
// first caller's batch leaves alone, and the callers that were not queued
// yet may need a second round to join the others.
func TestCreateTaskBatchWaitsForCallers(t *testing.T) {
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, sqltest.URL(t, "postgres"), t.TempDir(), sqlstore.WithBatchWait(sqlstore.MaxBatchWait))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const callers, rounds = 8, 10
	a := newAccount(t, s, callers*rounds)
	errs := make(chan error, callers)
	for range callers {
		go func() {
			for range rounds {
				if _, err := s.CreateTask(ctx, newTask(a.ID, 1)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if b := balance(t, s, a.ID); b != 0 {
		t.Errorf("balance %d; want 0", b)
	}
	if batches, items := s.CreateBatches(); items != callers*rounds || batches > rounds+3 {
		t.Errorf("%d batches for %d creations; want at most %d (one per round, and the first rounds')", batches, items, rounds+3)
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

// TestCreateTaskIdempotentAfterLockWait: on PostgreSQL, creations made
// alone (a task with a webhookUrl is never gathered) with one
// Idempotency-Key can all find the key free and then queue on the
// account's row behind each other. Each that waited must answer the task
// of the one that committed first, as a replay, and charge nothing:
// whether its debit then finds the balance spent (the account paid for
// one task) or its INSERT meets the key's unique index (it paid for all).
// A transaction of the test holds the account's row until every creation
// waits on it, so every run takes those paths; without it they are a
// window of a millisecond.
func TestCreateTaskIdempotentAfterLockWait(t *testing.T) {
	const n, cost = 4, 4
	for _, credits := range []int{cost, 100} {
		t.Run(fmt.Sprintf("credits %d", credits), func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, "postgres")
			a := newAccount(t, s, credits)
			tasks := make([]*gengate.Task, n)
			for i := range tasks {
				tasks[i] = newTask(a.ID, cost)
				tasks[i].IdempotencyKey, tasks[i].WebhookURL = "key-1", "https://example.com/hook"
			}

			conn, err := s.SQL().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			var holder int
			if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, a.ID); err != nil {
				t.Fatal(err)
			}
			var results []gengate.CreateResult
			var errs []error
			done := make(chan struct{})
			go func() {
				defer close(done)
				results, errs = createConcurrently(s, tasks)
			}()
			defer func() { _ = tx.Rollback(); <-done }() // also when the test stops early
			// Each has looked its key up and waits to debit: on the test's
			// lock, or in the queue behind the first that waits on it.
			waitUntil(t, "every creation waiting on the account's row", func() bool {
				return count(t, s, `WITH RECURSIVE w(pid) AS (
					SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))
					UNION SELECT a.pid FROM pg_stat_activity a, w WHERE w.pid = ANY(pg_blocking_pids(a.pid)))
					SELECT COUNT(*) FROM w`, holder) == n
			})
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			<-done

			winner := ""
			for i, err := range errs {
				if err != nil {
					t.Fatalf("CreateTask %d: %v; want the task or its replay", i, err)
				}
				if r := results[i]; !r.Existing {
					if winner != "" {
						t.Fatalf("CreateTask %d made a second task with the key (%s, then %s)", i, winner, r.Task.ID)
					}
					winner = r.Task.ID
				}
			}
			if winner == "" {
				t.Fatal("no creation made the task")
			}
			for i, r := range results {
				if r.Task.ID != winner || r.Balance != credits-cost {
					t.Errorf("CreateTask %d = task %s (existing %v), balance %d; want task %s, balance %d",
						i, r.Task.ID, r.Existing, r.Balance, winner, credits-cost)
				}
			}
			if b := balance(t, s, a.ID); b != credits-cost {
				t.Errorf("balance = %d; want %d: one charge", b, credits-cost)
			}
			if k := count(t, s, `SELECT COUNT(*) FROM tasks`); k != 1 {
				t.Errorf("%d task rows; want 1", k)
			}
			checkLedger(t, s, a.ID)
		})
	}
}
