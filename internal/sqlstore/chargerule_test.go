package sqlstore_test

// The rule that decides whether a task creation is charged is applied by
// three pieces of code: the creation made alone in its own transaction
// (tasks.go, with spendKey in keys.go), the SQLite writer's group of
// creations decided in memory (createbatch.go runCreates), and
// PostgreSQL's set-based gengate_create_tasks (migrations/postgres). The
// group paths only accept: whatever they do not accept is made alone,
// which then refuses or replays. So the rule holds when, for every case,
//
//   - the alone path ends in the case's outcome (created, refused with its
//     code, or the Idempotency-Key's task replayed) with the case's balance
//     and key spend, and
//   - each group path accepts exactly the cases the rule creates (a
//     replay is never accepted by a group: it is answered alone).
//
// TestChargeRule runs one table through all of them. A change to the rule
// is a change to this table, and a path that disagrees fails it.

import (
	"context"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// chargeCase is one creation and the state it meets.
type chargeCase struct {
	name    string
	balance int // the account's balance when the creation comes (after the setup's charges)
	cost    int

	// The key the task is created with: none when limit < 0.
	limit       int  // its daily spend limit (0: none)
	spentToday  int  // spent by an earlier task of the key, today
	spentDayAgo bool // that earlier spend was yesterday (UTC) instead
	revoked     bool

	replay bool // an earlier task already holds the Idempotency-Key

	// The outcome.
	code        string // refused with this code; "" when created or replayed
	wantBalance int
	wantSpent   int // the key's spend today after the creation
}

var chargeCases = []chargeCase{
	{name: "covered", balance: 10, cost: 4, limit: -1, wantBalance: 6},
	{name: "exactly covered", balance: 4, cost: 4, limit: -1, wantBalance: 0},
	{name: "one credit short", balance: 3, cost: 4, limit: -1, code: gengate.EInsufficient, wantBalance: 3},
	{name: "free on an empty account", balance: 0, cost: 0, limit: -1, wantBalance: 0},
	{name: "key without a limit", balance: 10, cost: 4, limit: 0, wantBalance: 6, wantSpent: 4},
	{name: "within the key's limit", balance: 20, cost: 4, limit: 10, spentToday: 6, wantBalance: 16, wantSpent: 10},
	{name: "over the key's limit", balance: 20, cost: 4, limit: 10, spentToday: 8,
		code: gengate.ESpendLimit, wantBalance: 20, wantSpent: 8},
	{name: "limit starts over on a new day", balance: 20, cost: 4, limit: 10, spentToday: 8, spentDayAgo: true,
		wantBalance: 16, wantSpent: 4},
	{name: "balance short though the key allows", balance: 3, cost: 4, limit: 10,
		code: gengate.EInsufficient, wantBalance: 3},
	{name: "revoked key", balance: 10, cost: 4, limit: 0, revoked: true, code: gengate.EUnauthorized, wantBalance: 10},
	{name: "replay", balance: 10, cost: 4, limit: -1, replay: true, wantBalance: 10},
	{name: "replay when the balance no longer covers it", balance: 0, cost: 4, limit: -1, replay: true, wantBalance: 0},
	{name: "replay on a key at its limit", balance: 20, cost: 4, limit: 4, replay: true, wantBalance: 20, wantSpent: 4},
}

// chargeSetup makes the case's account, key and earlier task, and returns
// the task to create.
func chargeSetup(t *testing.T, s *sqlstore.DB, c chargeCase) (*gengate.Task, *gengate.APIKey, *gengate.Task) {
	t.Helper()
	ctx := context.Background()
	// The earlier spend and the replayed task are charged at setup: the
	// account gets what they cost on top of its balance.
	a := newAccount(t, s, c.balance+c.spentToday+map[bool]int{true: c.cost}[c.replay])
	var k *gengate.APIKey
	if c.limit >= 0 {
		_, k = gengate.NewAPIKey(a.ID, "case", t0)
		k.SpendLimit = c.limit
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	task := newTask(a.ID, c.cost)
	if k != nil {
		task.KeyID = k.ID
	}
	if c.spentToday > 0 {
		earlier := newTask(a.ID, c.spentToday)
		earlier.KeyID = k.ID
		if c.spentDayAgo {
			earlier.CreatedAt = t0.Add(-24 * time.Hour)
		}
		mustCreate(t, s, earlier)
	}
	var first *gengate.Task
	if c.replay {
		task.IdempotencyKey = "case-key"
		first = newTask(a.ID, c.cost)
		first.KeyID, first.IdempotencyKey = task.KeyID, task.IdempotencyKey
		mustCreate(t, s, first)
	}
	if c.revoked {
		if err := s.RevokeAccountKey(ctx, a.ID, k.ID, t0); err != nil {
			t.Fatal(err)
		}
	}
	return task, k, first
}

// checkChargeOutcome checks what CreateTask answered and what it left.
func checkChargeOutcome(t *testing.T, s *sqlstore.DB, c chargeCase, task *gengate.Task, k *gengate.APIKey,
	first *gengate.Task, res gengate.CreateResult, err error) {
	t.Helper()
	ctx := context.Background()
	switch {
	case c.code != "":
		if got := gengate.ErrorCode(err); got != c.code {
			t.Errorf("error %v (code %q); want code %q", err, got, c.code)
		}
		if _, ferr := s.FindTask(ctx, task.ID); gengate.ErrorCode(ferr) != gengate.ENotFound {
			t.Errorf("a refused creation left task %s (%v)", task.ID, ferr)
		}
	case err != nil:
		t.Errorf("error %v; want the task %s", err, map[bool]string{true: "replayed", false: "created"}[c.replay])
	case c.replay:
		if !res.Existing || res.Task.ID != first.ID {
			t.Errorf("answered task %s (existing %v); want the replay of %s", res.Task.ID, res.Existing, first.ID)
		}
	default:
		if res.Existing || res.Task.ID != task.ID || res.Balance != c.wantBalance {
			t.Errorf("answered task %s (existing %v, balance %d); want the new task %s, balance %d",
				res.Task.ID, res.Existing, res.Balance, task.ID, c.wantBalance)
		}
	}
	if b := balance(t, s, task.AccountID); b != c.wantBalance {
		t.Errorf("balance %d; want %d", b, c.wantBalance)
	}
	checkLedger(t, s, task.AccountID)
	if k != nil {
		got, ferr := s.FindAPIKey(ctx, k.ID)
		if ferr != nil {
			t.Fatal(ferr)
		}
		if spent := got.SpentOn(t0); spent != c.wantSpent {
			t.Errorf("the key spent %d today; want %d", spent, c.wantSpent)
		}
	}
}

func TestChargeRule(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			filler := newAccount(t, s, 1000) // the other creation of a SQLite group
			for _, c := range chargeCases {
				t.Run(c.name+"/alone", func(t *testing.T) {
					task, k, first := chargeSetup(t, s, c)
					// A task with a webhook is always created alone.
					task.WebhookURL = "https://hooks.example/charge"
					res, err := s.CreateTask(context.Background(), task)
					checkChargeOutcome(t, s, c, task, k, first, res, err)
				})
				t.Run(c.name+"/group", func(t *testing.T) {
					task, k, first := chargeSetup(t, s, c)
					var accepted bool
					var res gengate.CreateResult
					var err error
					if d == "postgres" {
						plain, _, _, berr := s.SendCreateBatch([]*gengate.Task{task})
						if berr != nil && c.code == "" && !c.replay {
							t.Fatalf("batch: %v", berr)
						}
						accepted = plain[0]
						if accepted {
							res = gengate.CreateResult{Task: task, Balance: balance(t, s, task.AccountID)}
						} else { // left to be made alone, as the batcher's caller then does
							res, err = s.CreateTask(context.Background(), task)
						}
					} else {
						accepted, res, err = createInSQLiteGroup(t, s, task, newTask(filler.ID, 1))
					}
					want := c.code == "" && !c.replay
					if accepted != want {
						t.Errorf("the group accepted it: %v; want %v", accepted, want)
					}
					checkChargeOutcome(t, s, c, task, k, first, res, err)
				})
			}
		})
	}
}

// createInSQLiteGroup creates task together with other, in one batch of
// the SQLite writer, and reports whether the writer's group made task
// (rather than leaving it to be made alone).
func createInSQLiteGroup(t *testing.T, s *sqlstore.DB, task, other *gengate.Task) (bool, gengate.CreateResult, error) {
	t.Helper()
	_, before := s.CreateBatches()
	release := s.HoldWriter(t)
	type answer struct {
		res gengate.CreateResult
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		res, err := s.CreateTask(context.Background(), task)
		answers <- answer{res, err}
	}()
	otherDone := make(chan error, 1)
	go func() {
		_, err := s.CreateTask(context.Background(), other)
		otherDone <- err
	}()
	for s.QueuedWrites() < 2 { // both creations wait for the held writer
		time.Sleep(time.Millisecond)
	}
	release()
	a := <-answers
	if err := <-otherDone; err != nil {
		t.Fatalf("the other creation of the group: %v", err)
	}
	_, after := s.CreateBatches()
	// The other creation is always acceptable: the group made task too
	// when it made two. One: it left task alone. None: a statement of the
	// group failed (an Idempotency-Key already taken), and both were made
	// alone.
	if n := after - before; n > 2 {
		t.Fatalf("the writer's groups made %d tasks; want at most 2", n)
	}
	return after-before == 2, a.res, a.err
}
