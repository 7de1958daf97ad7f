package sqlstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestCreateTogether sends batches of task creations to the SQLite writer
// and checks that the plain ones are made together, as one group
// (createbatch.go), with the answers and the money of creations made one by
// one: each task sees the balance its own charge left, refusals (too few
// credits, a revoked key) change nothing, and an Idempotency-Key already
// used by a committed task makes the group fall back to creations made
// alone, so the replay gets its task and the others are still created.
func TestCreateTogether(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		usedKey    bool // one creation replays the key of a task committed before the batch
		wantGroups int64
	}{
		{"made together", false, 1},
		{"a used key: made alone", true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := sqltest.Open(t, "sqlite")
			a := newAccount(t, s, 100)
			var first *gengate.Task
			if c.usedKey {
				first = newTask(a.ID, 10)
				first.IdempotencyKey = "used"
				mustCreate(t, s, first)
			}
			_, revoked := gengate.NewAPIKey(a.ID, "revoked", t0)
			if err := s.CreateAPIKey(ctx, revoked); err != nil {
				t.Fatal(err)
			}
			if err := s.RevokeAccountKey(ctx, a.ID, revoked.ID, t0); err != nil {
				t.Fatal(err)
			}
			groups0, items0 := s.CreateBatches()

			var tasks []*gengate.Task
			for range 4 { // 4 × 20 credits: all paid
				tasks = append(tasks, newTask(a.ID, 20))
			}
			tooDear := newTask(a.ID, 101) // more than the balance, in any order
			byRevoked := newTask(a.ID, 1)
			byRevoked.KeyID = revoked.ID
			tasks = append(tasks, tooDear, byRevoked)
			var replay *gengate.Task
			if c.usedKey {
				replay = newTask(a.ID, 10)
				replay.IdempotencyKey = "used"
				tasks = append(tasks, replay)
			}
			results := make([]gengate.CreateResult, len(tasks))
			errs := make([]error, len(tasks))
			inOneBatch(t, s, len(tasks), nil, func(i int) {
				results[i], errs[i] = s.CreateTask(ctx, tasks[i])
			})

			start := 100
			if c.usedKey {
				start = 90
			}
			var balances []int
			for i, task := range tasks[:4] {
				if errs[i] != nil || results[i].Existing || results[i].Task.ID != task.ID {
					t.Fatalf("CreateTask %d = %+v, %v; want the new task", i, results[i], errs[i])
				}
				balances = append(balances, results[i].Balance)
			}
			slices.Sort(balances)
			if want := []int{start - 80, start - 60, start - 40, start - 20}; !slices.Equal(balances, want) {
				t.Errorf("balances after each charge = %v; want %v", balances, want)
			}
			wantCode(t, "CreateTask over the balance", errs[4], gengate.EInsufficient)
			wantCode(t, "CreateTask with a revoked key", errs[5], gengate.EUnauthorized)
			for _, task := range []*gengate.Task{tooDear, byRevoked} {
				if tasks, ledger := taskRows(t, s, task.ID); tasks != 0 || ledger != 0 {
					t.Errorf("refused task %s has %d rows and %d ledger lines; want none", task.ID, tasks, ledger)
				}
			}
			if c.usedKey {
				if errs[6] != nil || !results[6].Existing || results[6].Task.ID != first.ID {
					t.Errorf("the replay = %+v, %v; want the committed task %s", results[6], errs[6], first.ID)
				}
				if tasks, ledger := taskRows(t, s, replay.ID); tasks != 0 || ledger != 0 {
					t.Errorf("the replay's own task has %d rows and %d ledger lines; want none", tasks, ledger)
				}
			}
			if b := balance(t, s, a.ID); b != start-80 {
				t.Errorf("balance %d; want %d", b, start-80)
			}
			checkLedger(t, s, a.ID)

			groups, items := s.CreateBatches()
			if groups-groups0 != c.wantGroups || (c.wantGroups == 1 && items-items0 != 4) {
				t.Errorf("%d groups of %d creations made together; want %d of 4", groups-groups0, items-items0, c.wantGroups)
			}
		})
	}
}

// TestInsertChunks: a group of up to 16 creations (16 clients arriving
// together) is written with one INSERT per table, whatever its size; a
// larger one in chunks of 32 and 16 and then the rest, every chunk with
// its statement text.
func TestInsertChunks(t *testing.T) {
	for n := 1; n <= 100; n++ {
		rows, texts := sqlstore.InsertChunks(n)
		sum := 0
		for _, r := range rows {
			sum += r
		}
		if sum != n || !texts {
			t.Errorf("InsertChunks(%d) = %v, texts %v; want chunks summing to %d, each with its statement", n, rows, texts, n)
		}
		if n <= 16 && len(rows) != 1 {
			t.Errorf("InsertChunks(%d) = %v; want one INSERT of %d rows", n, rows, n)
		}
	}
	if rows, _ := sqlstore.InsertChunks(53); !slices.Equal(rows, []int{32, 16, 5}) {
		t.Errorf("InsertChunks(53) = %v; want [32 16 5]", rows)
	}
}
