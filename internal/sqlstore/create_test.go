package sqlstore_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// createConcurrently calls CreateTask once per task, all at once, and
// returns the results and errors in the same order.
func createConcurrently(s *sqlstore.DB, tasks []*gengate.Task) ([]gengate.CreateResult, []error) {
	results := make([]gengate.CreateResult, len(tasks))
	errs := make([]error, len(tasks))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.CreateTask(context.Background(), task)
		})
	}
	close(start)
	wg.Wait()
	return results, errs
}

// TestCreateTaskNeverOverdraws is the money test: 24 concurrent requests
// for 4 credits each on an account with 40 credits.
func TestCreateTaskNeverOverdraws(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 40)
			tasks := make([]*gengate.Task, 24)
			for i := range tasks {
				tasks[i] = newTask(a.ID, 4)
			}
			results, errs := createConcurrently(s, tasks)

			var balances []int
			failed := 0
			for i, err := range errs {
				if err == nil {
					if results[i].Existing || results[i].Task.ID != tasks[i].ID {
						t.Errorf("CreateTask = %+v; want the new task %s", results[i], tasks[i].ID)
					}
					balances = append(balances, results[i].Balance)
					continue
				}
				failed++
				wantCode(t, "CreateTask", err, gengate.EInsufficient)
				var e *gengate.Error
				if errors.As(err, &e) && (e.Extra["requiredCredits"] != 4 || e.Extra["remainingCredits"] != 0) {
					t.Errorf("EInsufficient extras = %v; want requiredCredits 4, remainingCredits 0", e.Extra)
				}
			}
			if len(balances) != 10 || failed != 14 {
				t.Fatalf("%d created, %d refused; want 10 and 14", len(balances), failed)
			}
			// Each success saw the balance its own debit left.
			sort.Ints(balances)
			if want := []int{0, 4, 8, 12, 16, 20, 24, 28, 32, 36}; !reflect.DeepEqual(balances, want) {
				t.Errorf("balances after each debit = %v; want %v", balances, want)
			}
			if b := balance(t, s, a.ID); b != 0 {
				t.Errorf("balance = %d; want 0", b)
			}
			entries := checkLedger(t, s, a.ID)
			charges := 0
			for _, e := range entries[1:] {
				if e.Kind != gengate.LedgerCharge || e.Amount != -4 || e.TaskID == "" {
					t.Errorf("entry %+v; want a charge of -4 for a task", e)
				}
				charges++
			}
			if entries[0].Kind != gengate.LedgerGrant || entries[0].Amount != 40 || charges != 10 {
				t.Errorf("ledger = %+v; want a grant of 40 and 10 charges", entries)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM tasks WHERE account_id = $1`, a.ID); n != 10 {
				t.Errorf("%d task rows; want 10", n)
			}
		})
	}
}

func TestCreateTask(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 10)
			task := newTask(a.ID, 4)
			task.Inputs = map[string]string{"imageUrl": "inputs/x/imageUrl"}
			res := mustCreate(t, s, task)
			if res.Balance != 6 {
				t.Errorf("Balance = %d; want 6", res.Balance)
			}
			got, err := s.FindTask(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := *task
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("FindTask =\n%+v\nwant\n%+v", got, &want)
			}
			e := checkLedger(t, s, a.ID)[1]
			if e.Kind != gengate.LedgerCharge || e.TaskID != task.ID || e.Amount != -4 || !e.CreatedAt.Equal(t0) {
				t.Errorf("charge = %+v; want -4 for %s", e, task.ID)
			}

			// Too expensive: nothing stored, nothing charged.
			big := newTask(a.ID, 7)
			_, err = s.CreateTask(ctx, big)
			wantCode(t, "CreateTask(7 of 6)", err, gengate.EInsufficient)
			_, err = s.FindTask(ctx, big.ID)
			wantCode(t, "FindTask(refused)", err, gengate.ENotFound)

			// A free task needs no credits; a task for no account is not found.
			mustCreate(t, s, newTask(a.ID, 0))
			_, err = s.CreateTask(ctx, newTask(gengate.NewID(), 1))
			wantCode(t, "CreateTask(unknown account)", err, gengate.ENotFound)
			if b := balance(t, s, a.ID); b != 6 {
				t.Errorf("balance = %d; want 6", b)
			}
			checkLedger(t, s, a.ID)

			// A task id is used once.
			_, err = s.CreateTask(ctx, newTaskWithID(task.ID, a.ID, 1))
			if err == nil {
				t.Error("CreateTask with a taken id succeeded")
			}
			if b := balance(t, s, a.ID); b != 6 {
				t.Errorf("balance = %d after a refused duplicate id; want 6", b)
			}
		})
	}
}

func newTaskWithID(id, accountID string, cost int) *gengate.Task {
	t := newTask(accountID, cost)
	t.ID = id
	return t
}

// TestCreateTaskIdempotent races 20 requests with one Idempotency-Key.
func TestCreateTaskIdempotent(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			for _, credits := range []int{100, 4} { // 4: the balance pays for one task only
				ctx := context.Background()
				s := sqltest.Open(t, d)
				a := newAccount(t, s, credits)
				tasks := make([]*gengate.Task, 20)
				for i := range tasks {
					tasks[i] = newTask(a.ID, 4)
					tasks[i].IdempotencyKey = "key-1"
				}
				results, errs := createConcurrently(s, tasks)
				existing := 0
				var id string
				for i, err := range errs {
					if err != nil {
						t.Fatalf("credits %d: CreateTask %d: %v", credits, i, err)
					}
					r := results[i]
					if id == "" {
						id = r.Task.ID
					}
					if r.Task.ID != id {
						t.Errorf("credits %d: result %d names task %s; want %s", credits, i, r.Task.ID, id)
					}
					if r.Existing {
						existing++
					} else if r.Task.ID != tasks[i].ID {
						t.Errorf("credits %d: a new result names task %s, not its own %s", credits, r.Task.ID, tasks[i].ID)
					}
					if r.Balance != credits-4 {
						t.Errorf("credits %d: result %d has balance %d; want %d", credits, i, r.Balance, credits-4)
					}
				}
				if existing != 19 {
					t.Errorf("credits %d: %d results were Existing; want 19", credits, existing)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM tasks`); n != 1 {
					t.Errorf("credits %d: %d task rows; want 1", credits, n)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM ledger WHERE kind = 'charge'`); n != 1 {
					t.Errorf("credits %d: %d charges; want 1", credits, n)
				}
				if b := balance(t, s, a.ID); b != credits-4 {
					t.Errorf("credits %d: balance = %d; want %d", credits, b, credits-4)
				}
				checkLedger(t, s, a.ID)

				// Later replays find the same task, with its stored settings,
				// and charge nothing.
				again := newTask(a.ID, 4)
				again.IdempotencyKey, again.Fingerprint = "key-1", "other"
				r, err := s.CreateTask(ctx, again)
				if err != nil || !r.Existing || r.Task.ID != id || r.Task.Fingerprint != "fp" || r.Balance != credits-4 {
					t.Errorf("credits %d: replay = %+v, %v; want existing task %s with fingerprint fp", credits, r, err, id)
				}
				found, err := s.FindTaskByIdempotencyKey(ctx, a.ID, "key-1")
				if err != nil || found.ID != id {
					t.Errorf("credits %d: FindTaskByIdempotencyKey = %v, %v; want %s", credits, found, err, id)
				}
				_, err = s.FindTaskByIdempotencyKey(ctx, a.ID, "key-2")
				wantCode(t, "FindTaskByIdempotencyKey(unknown)", err, gengate.ENotFound)

				// The same key on another account is another task.
				b := newAccount(t, s, 10)
				other := newTask(b.ID, 4)
				other.IdempotencyKey = "key-1"
				if r := mustCreate(t, s, other); r.Balance != 6 {
					t.Errorf("credits %d: other account's balance = %d; want 6", credits, r.Balance)
				}
				_, err = s.FindTaskByIdempotencyKey(ctx, b.ID, "key-1")
				if err != nil {
					t.Error(err)
				}
				if bal := balance(t, s, a.ID); bal != credits-4 {
					t.Errorf("credits %d: first account's balance = %d; want %d", credits, bal, credits-4)
				}
			}
		})
	}
}
