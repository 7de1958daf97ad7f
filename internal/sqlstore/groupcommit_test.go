package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// batchLog records the number of writes of each batch the SQLite writer
// commits.
type batchLog struct {
	mu    sync.Mutex
	sizes []int
}

func (b *batchLog) record(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes = append(b.sizes, n)
	return nil
}

func (b *batchLog) get() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.sizes)
}

// inOneBatch holds the writer, starts call(i) for i in [0, n) in
// goroutines of their own, waits until all n writes are queued, runs
// queued (if not nil), releases the writer and waits for every call: with
// n at most the batch limit, the n writes are then one batch.
func inOneBatch(t *testing.T, s *sqlstore.DB, n int, queued func(), call func(i int)) {
	t.Helper()
	release := s.HoldWriter(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { call(i) })
	}
	for s.QueuedWrites() < n { // a condition, not a duration
		time.Sleep(time.Millisecond)
	}
	if queued != nil {
		queued()
	}
	release()
	wg.Wait()
}

// tasksWith counts the task rows and the ledger lines of the task id.
func taskRows(t *testing.T, s *sqlstore.DB, id string) (tasks, ledger int) {
	t.Helper()
	return count(t, s, `SELECT COUNT(*) FROM tasks WHERE id = $1`, id),
		count(t, s, `SELECT COUNT(*) FROM ledger WHERE task_id = $1`, id)
}

// TestGroupCommitRefusals sends, in one batch of the SQLite writer, new
// tasks, replays of their Idempotency-Keys, tasks an account cannot pay,
// tasks over an API key's daily spend limit and one whose caller gave up
// while it was queued: the good ones commit, the refused ones change
// nothing, and balances, ledgers and the key's spend come out exact.
func TestGroupCommitRefusals(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "sqlite")
	rich := newAccount(t, s, 1_000_000)
	poor := newAccount(t, s, 250)
	_, key := gengate.NewAPIKey(rich.ID, "limited", t0)
	key.SpendLimit = 30
	if err := s.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	var log batchLog
	s.OnCommit(t, log.record)

	type call struct {
		task *gengate.Task
		ctx  context.Context
		res  gengate.CreateResult
		err  error
	}
	var calls []*call
	add := func(task *gengate.Task) *call {
		c := &call{task: task, ctx: ctx}
		calls = append(calls, c)
		return c
	}
	for i := range 8 { // new keys, 10 credits each
		task := newTask(rich.ID, 10)
		task.IdempotencyKey = fmt.Sprintf("k%d", i)
		add(task)
	}
	for i := range 4 { // the same keys again, with other task ids
		task := newTask(rich.ID, 10)
		task.IdempotencyKey = fmt.Sprintf("k%d", i)
		add(task)
	}
	for range 6 { // 250 credits pay for 2 of these 6
		add(newTask(poor.ID, 100))
	}
	for range 5 { // the key's limit of 30 a day pays for 3 of these 5
		task := newTask(rich.ID, 10)
		task.KeyID = key.ID
		add(task)
	}
	gone := add(newTask(rich.ID, 10)) // its caller gives up while it is queued
	var cancel context.CancelFunc
	gone.ctx, cancel = context.WithCancel(ctx)

	inOneBatch(t, s, len(calls), cancel, func(i int) {
		c := calls[i]
		c.res, c.err = s.CreateTask(c.ctx, c.task)
	})
	if sizes := log.get(); !slices.Contains(sizes, len(calls)) {
		t.Fatalf("batch sizes %v; want one batch of all %d writes", sizes, len(calls))
	}

	// Each key names one task, charged once, and every call with the key
	// got that task; one of them created it.
	byKey := map[string][]*call{}
	for _, c := range calls[:12] {
		if c.err != nil {
			t.Fatalf("CreateTask with key %s: %v", c.task.IdempotencyKey, c.err)
		}
		byKey[c.task.IdempotencyKey] = append(byKey[c.task.IdempotencyKey], c)
	}
	richCharges := 0
	for k, cs := range byKey {
		created := 0
		for _, c := range cs {
			if c.res.Task.ID != cs[0].res.Task.ID {
				t.Errorf("key %s: calls got tasks %s and %s", k, cs[0].res.Task.ID, c.res.Task.ID)
			}
			if !c.res.Existing {
				created++
				if c.res.Task.ID != c.task.ID {
					t.Errorf("key %s: a new task %s; want the call's own %s", k, c.res.Task.ID, c.task.ID)
				}
			} else if tasks, ledger := taskRows(t, s, c.task.ID); c.res.Task.ID != c.task.ID && (tasks != 0 || ledger != 0) {
				t.Errorf("key %s: the replay's own task %s has %d rows and %d ledger lines; want none", k, c.task.ID, tasks, ledger)
			}
		}
		if created != 1 {
			t.Errorf("key %s: %d calls created a task; want 1", k, created)
		}
		id := cs[0].res.Task.ID
		if n := count(t, s, `SELECT COUNT(*) FROM ledger WHERE task_id = $1 AND kind = 'charge' AND amount = -10`, id); n != 1 {
			t.Errorf("key %s: task %s has %d charges of 10; want 1", k, id, n)
		}
		richCharges++
	}

	// refused checks that exactly ok calls of cs succeeded and that the
	// others were refused with code and left nothing behind.
	refused := func(what string, cs []*call, ok int, code string) {
		t.Helper()
		got := 0
		for _, c := range cs {
			if c.err == nil {
				got++
				if tasks, ledger := taskRows(t, s, c.task.ID); tasks != 1 || ledger != 1 {
					t.Errorf("%s: created task %s has %d rows and %d ledger lines; want 1 and 1", what, c.task.ID, tasks, ledger)
				}
				continue
			}
			if gengate.ErrorCode(c.err) != code {
				t.Errorf("%s: %v; want code %s", what, c.err, code)
			}
			if tasks, ledger := taskRows(t, s, c.task.ID); tasks != 0 || ledger != 0 {
				t.Errorf("%s: refused task %s has %d rows and %d ledger lines; want none", what, c.task.ID, tasks, ledger)
			}
		}
		if got != ok {
			t.Errorf("%s: %d of %d created; want %d", what, got, len(cs), ok)
		}
	}
	refused("poor account", calls[12:18], 2, gengate.EInsufficient)
	refused("limited key", calls[18:23], 3, gengate.ESpendLimit)
	richCharges += 3

	if !errors.Is(gone.err, context.Canceled) {
		t.Errorf("CreateTask whose caller gave up = %v; want context.Canceled", gone.err)
	}
	if tasks, ledger := taskRows(t, s, gone.task.ID); tasks != 0 || ledger != 0 {
		t.Errorf("the abandoned task has %d rows and %d ledger lines; want none", tasks, ledger)
	}

	if b := balance(t, s, rich.ID); b != 1_000_000-10*richCharges {
		t.Errorf("rich balance %d; want %d", b, 1_000_000-10*richCharges)
	}
	if b := balance(t, s, poor.ID); b != 50 {
		t.Errorf("poor balance %d; want 50", b)
	}
	checkLedger(t, s, rich.ID)
	checkLedger(t, s, poor.ID)
	if n := count(t, s, `SELECT COUNT(*) FROM tasks`); n != 8+2+3 {
		t.Errorf("%d tasks; want 13", n)
	}
	if n := count(t, s, `SELECT spent FROM api_keys WHERE id = $1`, key.ID); n != 30 {
		t.Errorf("the key's spend is %d; want 30", n)
	}
}

// TestGroupCommitFailsAsAWhole: when a batch's COMMIT fails, every write
// of the batch gets the error (a refused one too: its refusal was decided
// on writes that were not kept), nothing of the batch is written, and the
// writer goes on with the next batch.
func TestGroupCommitFailsAsAWhole(t *testing.T) {
	s := sqltest.Open(t, "sqlite")
	a := newAccount(t, s, 100)
	failed := false
	s.OnCommit(t, func(n int) error {
		if n > 1 && !failed {
			failed = true // the writer's goroutine is the only caller
			return errors.New("injected commit failure")
		}
		return nil
	})
	tasks := make([]*gengate.Task, 6)
	for i := range tasks {
		tasks[i] = newTask(a.ID, 30) // 100 credits pay for 3
	}
	errs := make([]error, len(tasks))
	inOneBatch(t, s, len(tasks), nil, func(i int) {
		_, errs[i] = s.CreateTask(context.Background(), tasks[i])
	})
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "injected commit failure") {
			t.Errorf("write %d: %v; want the batch's failure", i, err)
		}
	}
	if n := count(t, s, `SELECT COUNT(*) FROM tasks`); n != 0 {
		t.Errorf("%d tasks after a failed batch; want 0", n)
	}
	if b := balance(t, s, a.ID); b != 100 {
		t.Errorf("balance %d after a failed batch; want 100", b)
	}
	checkLedger(t, s, a.ID)

	// The next batch commits.
	results, errs := createConcurrently(s, tasks[:3])
	for i, err := range errs {
		if err != nil || results[i].Task.ID != tasks[i].ID {
			t.Errorf("CreateTask after the failed batch = %+v, %v", results[i], err)
		}
	}
	if b := balance(t, s, a.ID); b != 10 {
		t.Errorf("balance %d; want 10", b)
	}
	checkLedger(t, s, a.ID)
}

// TestGroupCommitLostTransaction: when SQLite drops the batch's transaction
// under a write (as it does on some I/O errors and a full disk; here the
// write ends it itself), its savepoint is gone, the batch fails as a
// whole, and the writes before it in the batch are not kept either.
func TestGroupCommitLostTransaction(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "sqlite")
	a := newAccount(t, s, 100)
	tasks := []*gengate.Task{newTask(a.ID, 10), newTask(a.ID, 10)}
	errs := make([]error, 3)
	inOneBatch(t, s, 3, nil, func(i int) {
		if i < 2 {
			_, errs[i] = s.CreateTask(ctx, tasks[i])
			return
		}
		errs[i] = s.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `ROLLBACK`); err != nil {
				return err
			}
			return errors.New("disk I/O error")
		})
	})
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "group commit") {
			t.Errorf("write %d: %v; want the batch's failure", i, err)
		}
	}
	if n := count(t, s, `SELECT COUNT(*) FROM tasks`); n != 0 {
		t.Errorf("%d tasks after a lost batch; want 0", n)
	}
	if b := balance(t, s, a.ID); b != 100 {
		t.Errorf("balance %d; want 100", b)
	}
	mustCreate(t, s, newTask(a.ID, 10)) // and the writer goes on
	checkLedger(t, s, a.ID)
}

// TestGroupCommitBatchLimit: a batch never holds more writes than the
// limit (WithSQLiteBatch); the rest go into the next batches.
func TestGroupCommitBatchLimit(t *testing.T) {
	s, err := sqlstore.Open(context.Background(), "", filepath.Join(t.TempDir(), "data"), sqlstore.WithSQLiteBatch(4))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newAccount(t, s, 1000)
	var log batchLog
	s.OnCommit(t, log.record)
	release := s.HoldWriter(t)
	tasks := make([]*gengate.Task, 10)
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i := range tasks {
		tasks[i] = newTask(a.ID, 1)
		wg.Go(func() { _, errs[i] = s.CreateTask(context.Background(), tasks[i]) })
	}
	// The queue holds as many writes as a batch; the others wait to be
	// queued.
	for s.QueuedWrites() < 4 {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("CreateTask %d: %v", i, err)
		}
	}
	total := 0
	for _, n := range log.get() {
		if n > 4 {
			t.Errorf("a batch of %d writes; the limit is 4 (sizes %v)", n, log.get())
		}
		total += n
	}
	if total < 10 || count(t, s, `SELECT COUNT(*) FROM tasks`) != 10 || balance(t, s, a.ID) != 990 {
		t.Errorf("batches %v; want the 10 tasks committed and the balance at 990", log.get())
	}
	checkLedger(t, s, a.ID)
}

// TestGroupCommitGathers: when the writer finds more than one write queued,
// it waits (--sqlite-batch-wait, an hour here) for more until the batch is
// full, so writes that arrive after it began gathering share the commit;
// a lone write on an idle writer (its last batch was one write too) is
// committed at once, whatever the wait (with an hour's wait the test would
// not end otherwise).
func TestGroupCommitGathers(t *testing.T) {
	s, err := sqlstore.Open(context.Background(), "", filepath.Join(t.TempDir(), "data"), sqlstore.WithSQLiteBatch(4))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newAccount(t, s, 1000)
	var log batchLog
	s.OnCommit(t, log.record)
	s.SetSQLiteBatchWait(t, time.Hour)
	mustCreate(t, s, newTask(a.ID, 1)) // alone: committed at once

	var wg sync.WaitGroup
	create := func() {
		wg.Go(func() {
			if _, err := s.CreateTask(context.Background(), newTask(a.ID, 1)); err != nil {
				t.Errorf("CreateTask: %v", err)
			}
		})
	}
	release := s.HoldWriter(t)
	create()
	create()
	for s.QueuedWrites() < 2 { // a condition, not a duration
		time.Sleep(time.Millisecond)
	}
	release()
	// The writer gathers: these two join the first two, whenever they
	// arrive, and the full batch commits.
	create()
	create()
	wg.Wait()

	// OnCommit's write, the setting, the lone write, the held one, the four.
	if sizes := log.get(); !slices.Equal(sizes, []int{1, 1, 1, 1, 4}) {
		t.Errorf("batch sizes %v; want four of one write and one of the 4 writes", sizes)
	}
	if balance(t, s, a.ID) != 995 {
		t.Errorf("balance %d; want 995", balance(t, s, a.ID))
	}
}
