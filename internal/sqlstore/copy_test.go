package sqlstore_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// copyFixture names what populate put in a store.
type copyFixture struct {
	accounts  []string
	hashes    []string // of keys in use
	revoked   string   // hash of a revoked key
	tasks     []string
	idemKeys  map[string]string // idempotency key (account 0) → task id
	tokens    []string          // every creation's URL token
	claimable []string          // tasks a worker on the copy can claim
	leased    string            // a running task whose lease was live
}

// populate fills s like an installation that has been used: grants and an
// adjustment, keys (one revoked), tasks that succeeded (with creations),
// failed (refunded), wait in review, run under a live lease, or are queued,
// most with idempotency keys; and a purged task whose ledger entries and
// creations outlive it.
func populate(t *testing.T, s *sqlstore.DB) copyFixture {
	t.Helper()
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	f := copyFixture{idemKeys: map[string]string{}}
	a := newAccount(t, s, 100)
	b := newAccount(t, s, 0)
	f.accounts = []string{a.ID, b.ID}
	_, err := s.Grant(ctx, a.ID, 50, "top up", t0.Add(time.Second))
	must("Grant", err)
	_, err = s.Grant(ctx, a.ID, -10, "correction", t0.Add(2*time.Second))
	must("Grant", err)
	_, err = s.Grant(ctx, b.ID, 20, "trial", t0.Add(3*time.Second))
	must("Grant", err)

	for i, acct := range []string{a.ID, a.ID, b.ID} {
		_, k := gengate.NewAPIKey(acct, "key", t0.Add(time.Duration(i)*time.Second))
		must("CreateAPIKey", s.CreateAPIKey(ctx, k))
		if i == 1 {
			must("RevokeAPIKey", s.RevokeAPIKey(ctx, k.ID, t0.Add(time.Hour)))
			f.revoked = k.Hash
		} else {
			f.hashes = append(f.hashes, k.Hash)
		}
	}

	// create stores a task of account a (with the idempotency key, if any)
	// and claims it.
	create := func(key string, claim bool) *gengate.Task {
		t.Helper()
		task := newTask(a.ID, 4)
		task.IdempotencyKey = key
		task.Options = map[string]any{"aspectRatio": "16:9", "steps": int64(4), "guidance": 3.5, "scale": 2.0}
		task.Inputs = map[string]string{"image": "inputs/" + task.ID + ".png"}
		task.Route = gengate.Route{Engine: "fal", Upstream: "fal-ai/flux", Params: map[string]any{"quality": "high"}}
		mustCreate(t, s, task)
		f.tasks = append(f.tasks, task.ID)
		if key != "" {
			f.idemKeys[key] = task.ID
		}
		if !claim {
			return task
		}
		return mustClaim(t, s, task.ID, t0)
	}
	succeed := func(c *gengate.Task, outputs int, done time.Time) {
		t.Helper()
		for i := range outputs {
			out := gengate.Creation{ID: gengate.NewID(), AccountID: c.AccountID, TaskID: c.ID, Index: i,
				Key: "outputs/" + c.ID + "/" + string(rune('0'+i)) + ".png", Token: gengate.NewToken(),
				ContentType: "image/png", Ext: "png", Size: int64(1000 + i), CreatedAt: done}
			c.Outputs = append(c.Outputs, out)
			f.tokens = append(f.tokens, out.Token)
		}
		c.Status, c.UpstreamID, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, "up-"+c.ID[:8], done, done
		must("FinishTask(succeeded)", s.FinishTask(ctx, c, 0))
	}

	succeed(create("k-succeeded", true), 2, t0.Add(time.Minute))

	c := create("k-failed", true)
	c.Status, c.ErrorCode, c.ErrorMessage, c.InputFault = gengate.StatusFailed, gengate.EFailed, "upstream said no", true
	c.UpdatedAt, c.CompletedAt = t0.Add(time.Minute), t0.Add(time.Minute)
	must("FinishTask(failed)", s.FinishTask(ctx, c, 4))

	c = create("k-review", true)
	c.Status, c.ReviewReason, c.ErrorMessage = gengate.StatusNeedsReview, gengate.ReviewOutcomeUnknown, "unknown"
	c.UpdatedAt = t0.Add(time.Minute)
	must("FinishTask(review)", s.FinishTask(ctx, c, 0))

	// Running under a lease that is live now: its worker is gone with the
	// old database.
	c = create("k-running", false)
	c, err = s.ClaimTask(ctx, c.ID, "w", time.Now(), time.Hour)
	if err != nil || c == nil {
		t.Fatalf("ClaimTask(running) = %v, %v", c, err)
	}
	c.Status, c.UpstreamID, c.RunAt, c.UpdatedAt = gengate.StatusRunning, "up-running", t0.Add(30*time.Second), t0.Add(time.Minute)
	must("SaveStep(running)", s.SaveStep(ctx, c, false))
	f.leased = c.ID

	q := create("k-queued", false)

	// Succeeded long ago and purged: its charge and creation stay.
	old := create("", true)
	succeed(old, 1, t0.Add(-time.Hour))
	if n, err := s.PurgeTasks(ctx, t0); err != nil || n != 1 {
		t.Fatalf("PurgeTasks = %d, %v; want 1", n, err)
	}
	f.tasks = f.tasks[:len(f.tasks)-1]

	qb := newTask(b.ID, 4)
	mustCreate(t, s, qb)
	f.tasks = append(f.tasks, qb.ID)
	f.claimable = []string{f.leased, q.ID, qb.ID}
	return f
}

// checkCopy compares dst with src through the store's read methods.
func checkCopy(t *testing.T, src, dst *sqlstore.DB, f copyFixture) {
	t.Helper()
	ctx := context.Background()
	for _, id := range f.accounts {
		want, err := src.FindAccount(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := dst.FindAccount(ctx, id); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("FindAccount(%s) = %+v, %v; want %+v", id, got, err, want)
		}
		wantL, err := src.Ledger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := dst.Ledger(ctx, id); err != nil || !reflect.DeepEqual(got, wantL) {
			t.Errorf("Ledger(%s) =\n%+v, %v\nwant\n%+v", id, got, err, wantL)
		}
		checkLedger(t, dst, id)
	}
	for _, h := range f.hashes {
		want, err := src.FindAPIKeyByHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := dst.FindAPIKeyByHash(ctx, h); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("FindAPIKeyByHash = %+v, %v; want %+v", got, err, want)
		}
	}
	_, err := dst.FindAPIKeyByHash(ctx, f.revoked)
	wantCode(t, "FindAPIKeyByHash(revoked)", err, gengate.ENotFound)
	if n := count(t, dst, `SELECT COUNT(*) FROM api_keys WHERE hash = $1 AND revoked_at = $2`, f.revoked, t0.Add(time.Hour).UnixMilli()); n != 1 {
		t.Errorf("the revoked key's revoked_at was not copied")
	}
	for _, id := range f.tasks {
		want, err := src.FindTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want.LeaseToken = "" // leases are not copied
		if got, err := dst.FindTask(ctx, id); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("FindTask(%s) =\n%+v, %v\nwant\n%+v", id, got, err, want)
		}
	}
	for key, id := range f.idemKeys {
		got, err := dst.FindTaskByIdempotencyKey(ctx, f.accounts[0], key)
		if err != nil || got.ID != id {
			t.Errorf("FindTaskByIdempotencyKey(%s) = %+v, %v; want task %s", key, got, err, id)
		}
	}
	for _, tok := range f.tokens {
		want, err := src.FindCreation(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := dst.FindCreation(ctx, tok); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("FindCreation(%s) = %+v, %v; want %+v", tok, got, err, want)
		}
	}
	if n := count(t, dst, `SELECT COUNT(*) FROM tasks WHERE lease_token <> '' OR lease_until <> 0`); n != 0 {
		t.Errorf("%d copied tasks are leased; want none", n)
	}
}

// checkCopyWorks uses the copy as a server would: replays, claims, new
// entries.
func checkCopyWorks(t *testing.T, dst *sqlstore.DB, f copyFixture) {
	t.Helper()
	ctx := context.Background()
	a := f.accounts[0]
	before := balance(t, dst, a)

	// An idempotency replay finds its task (with its files), charges nothing.
	replay := newTask(a, 4)
	replay.IdempotencyKey = "k-succeeded"
	r, err := dst.CreateTask(ctx, replay)
	if err != nil || !r.Existing || r.Task.ID != f.idemKeys["k-succeeded"] || len(r.Task.Outputs) != 2 || r.Balance != before {
		t.Errorf("CreateTask(replay) = %+v, %v; want the succeeded task with 2 outputs, balance %d", r, err, before)
	}

	// Every active task is claimable: queued ones, and the one whose
	// worker held a lease on the old database.
	var claimed []string
	for {
		c, err := dst.ClaimTask(ctx, "", "w2", time.Now().Add(time.Hour), time.Minute)
		if err != nil {
			t.Fatalf("ClaimTask: %v", err)
		}
		if c == nil {
			break
		}
		claimed = append(claimed, c.ID)
		if c.ID == f.leased && (c.Status != gengate.StatusRunning || c.UpstreamID != "up-running") {
			t.Errorf("claimed the running task as %+v; want it running upstream job up-running", c)
		}
	}
	if !sameSet(claimed, f.claimable) {
		t.Errorf("claimed %v; want %v", claimed, f.claimable)
	}

	// New ledger entries follow the copied ones.
	entries := checkLedger(t, dst, a)
	last := entries[len(entries)-1].ID
	fresh := newTask(a, 4)
	fresh.IdempotencyKey = "k-new"
	mustCreate(t, dst, fresh)
	if _, err := dst.Grant(ctx, a, 1, "after the move", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	entries = checkLedger(t, dst, a)
	if n := len(entries); n < 2 || entries[n-2].ID <= last || entries[n-1].ID <= entries[n-2].ID {
		t.Errorf("new ledger ids %v after copied id %d; want them increasing", entries[len(entries)-2:], last)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// wantRows fails unless the store's tables hold these row counts.
func wantRows(t *testing.T, s *sqlstore.DB, want map[string]int) {
	t.Helper()
	got, err := s.CountRows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range got.Tables {
		if tc.Rows != want[tc.Table] {
			t.Errorf("%s has %d rows; want %d", tc.Table, tc.Rows, want[tc.Table])
		}
	}
}

var populated = map[string]int{"accounts": 2, "api_keys": 3, "tasks": 6, "ledger": 13, "creations": 3}

func TestCopy(t *testing.T) {
	for _, pair := range [][2]string{{"sqlite", "postgres"}, {"postgres", "sqlite"}, {"sqlite", "sqlite"}, {"postgres", "postgres"}} {
		t.Run(pair[0]+"_to_"+pair[1], func(t *testing.T) {
			ctx := context.Background()
			src, dst := sqltest.Open(t, pair[0]), sqltest.Open(t, pair[1])
			f := populate(t, src)
			wantRows(t, src, populated)

			counted, err := src.CountRows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			stats, err := src.CopyTo(ctx, dst)
			if err != nil {
				t.Fatalf("CopyTo: %v", err)
			}
			if !reflect.DeepEqual(stats.Tables, counted.Tables) || stats.Total() != 27 {
				t.Errorf("CopyTo stats %+v; want %+v (27 rows)", stats.Tables, counted.Tables)
			}
			if stats.Active != 3 || stats.Leased != 1 {
				t.Errorf("stats: %d active, %d leased; want 3 and 1", stats.Active, stats.Leased)
			}
			wantRows(t, dst, populated)
			checkCopy(t, src, dst, f)
			checkCopyWorks(t, dst, f)
			// The source is as it was.
			wantRows(t, src, populated)
		})
	}
}

// TestCopyRefusesNonEmpty: a destination with an account is never merged
// into, and is left as it was.
func TestCopyRefusesNonEmpty(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			other := map[string]string{"sqlite": "postgres", "postgres": "sqlite"}[d]
			src, dst := sqltest.Open(t, other), sqltest.Open(t, d)
			populate(t, src)
			mine := newAccount(t, dst, 7)
			_, err := src.CopyTo(ctx, dst)
			if !errors.Is(err, sqlstore.ErrDestinationNotEmpty) || !strings.Contains(err.Error(), "1 accounts") {
				t.Fatalf("CopyTo(non-empty) = %v; want ErrDestinationNotEmpty naming 1 account", err)
			}
			wantRows(t, dst, map[string]int{"accounts": 1, "ledger": 1})
			checkLedger(t, dst, mine.ID)
			if _, err := src.CopyTo(ctx, src); err == nil {
				t.Errorf("CopyTo(itself) succeeded")
			}
		})
	}
}

// TestCopyFailureWritesNothing: a copy that fails on the last table leaves
// the destination without a row; once the cause is gone, it succeeds.
func TestCopyFailureWritesNothing(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			other := map[string]string{"sqlite": "postgres", "postgres": "sqlite"}[d]
			src, dst := sqltest.Open(t, other), sqltest.Open(t, d)
			f := populate(t, src)
			// The destination refuses creations, the last table copied.
			fail := []string{`CREATE TRIGGER copy_fails BEFORE INSERT ON creations BEGIN SELECT RAISE(ABORT, 'injected failure'); END`}
			undo := []string{`DROP TRIGGER copy_fails`}
			if d == "postgres" {
				fail = []string{
					`CREATE FUNCTION copy_fails() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END; $$`,
					`CREATE TRIGGER copy_fails BEFORE INSERT ON creations FOR EACH ROW EXECUTE FUNCTION copy_fails()`,
				}
				undo = []string{`DROP TRIGGER copy_fails ON creations`, `DROP FUNCTION copy_fails()`}
			}
			for _, q := range fail {
				if _, err := dst.SQL().ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			_, err := src.CopyTo(ctx, dst)
			if err == nil || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "creations") {
				t.Fatalf("CopyTo = %v; want the injected failure on creations", err)
			}
			wantRows(t, dst, nil)

			for _, q := range undo {
				if _, err := dst.SQL().ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := src.CopyTo(ctx, dst); err != nil {
				t.Fatalf("CopyTo after the failure: %v", err)
			}
			wantRows(t, dst, populated)
			checkCopy(t, src, dst, f)
			checkCopyWorks(t, dst, f)
		})
	}
}

// TestCopyRefusesInconsistentSource: a source whose balance disagrees with
// its ledger is not copied.
func TestCopyRefusesInconsistentSource(t *testing.T) {
	ctx := context.Background()
	src, dst := sqltest.Open(t, "sqlite"), sqltest.Open(t, "sqlite")
	a := newAccount(t, src, 10)
	if _, err := src.SQL().ExecContext(ctx, `UPDATE accounts SET balance = 11 WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err := src.CopyTo(ctx, dst)
	if err == nil || !strings.Contains(err.Error(), "balance 11 but its ledger entries sum to 10") {
		t.Fatalf("CopyTo = %v; want a balance mismatch", err)
	}
	wantRows(t, dst, nil)
}

// TestCopyVerifiesDestination: a destination that ends up with a balance
// its ledger does not explain (here a trigger skews it) is rolled back.
func TestCopyVerifiesDestination(t *testing.T) {
	ctx := context.Background()
	src, dst := sqltest.Open(t, "postgres"), sqltest.Open(t, "sqlite")
	populate(t, src)
	if _, err := dst.SQL().ExecContext(ctx, `CREATE TRIGGER skew AFTER INSERT ON creations BEGIN UPDATE accounts SET balance = balance + 1; END`); err != nil {
		t.Fatal(err)
	}
	_, err := src.CopyTo(ctx, dst)
	if err == nil || !strings.Contains(err.Error(), "verify destination") || !strings.Contains(err.Error(), "ledger entries sum to") {
		t.Fatalf("CopyTo = %v; want the verification to fail", err)
	}
	wantRows(t, dst, nil)
}

// TestCopyRefusesUnknownTable: a table the copy does not know would be
// left behind, so the copy refuses.
func TestCopyRefusesUnknownTable(t *testing.T) {
	ctx := context.Background()
	src, dst := sqltest.Open(t, "sqlite"), sqltest.Open(t, "sqlite")
	newAccount(t, src, 10)
	if _, err := src.SQL().ExecContext(ctx, `CREATE TABLE webhooks (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := src.CopyTo(ctx, dst); err == nil || !strings.Contains(err.Error(), "webhooks") {
		t.Fatalf("CopyTo = %v; want a refusal naming webhooks", err)
	}
	if _, err := src.SQL().ExecContext(ctx, `DROP TABLE webhooks`); err != nil {
		t.Fatal(err)
	}
	if _, err := src.SQL().ExecContext(ctx, `ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := src.CopyTo(ctx, dst); err == nil || !strings.Contains(err.Error(), "tasks.priority") {
		t.Fatalf("CopyTo = %v; want a refusal naming tasks.priority", err)
	}
	wantRows(t, dst, nil)
}
