package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// t0 is the tests' clock. Times round-trip at millisecond precision.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// newAccount creates an account with credits.
func newAccount(tb testing.TB, s *sqlstore.DB, credits int) *gengate.Account {
	tb.Helper()
	a := &gengate.Account{ID: gengate.NewID(), Name: "acct", CreatedAt: t0}
	if err := s.CreateAccount(context.Background(), a, credits); err != nil {
		tb.Fatalf("CreateAccount: %v", err)
	}
	return a
}

// newTask returns a queued task of the account, due at t0.
func newTask(accountID string, cost int) *gengate.Task {
	return &gengate.Task{
		ID: gengate.NewTaskID(time.Now()), AccountID: accountID, ModelID: "flux-schnell", Type: "image",
		Status: gengate.StatusQueued, Prompt: "a red fox", Options: map[string]any{"aspectRatio": "1:1"},
		Inputs: map[string]string{}, Cost: cost, Fingerprint: "fp", Engine: "sandbox",
		RunAt: t0, CreatedAt: t0, UpdatedAt: t0,
	}
}

// mustCreate stores a new task and fails the test unless it was created.
func mustCreate(tb testing.TB, s *sqlstore.DB, task *gengate.Task) gengate.CreateResult {
	tb.Helper()
	res, err := s.CreateTask(context.Background(), task)
	if err != nil {
		tb.Fatalf("CreateTask: %v", err)
	}
	if res.Existing || res.Task.ID != task.ID {
		tb.Fatalf("CreateTask = %+v; want new task %s", res, task.ID)
	}
	return res
}

// mustClaim claims the task with id (any due task when id is empty) and
// fails the test when there is none.
func mustClaim(tb testing.TB, s *sqlstore.DB, id string, now time.Time) *gengate.Task {
	tb.Helper()
	c, err := s.ClaimTask(context.Background(), id, "w", now, time.Minute)
	if err != nil || c == nil {
		tb.Fatalf("ClaimTask(%q) = %v, %v; want a task", id, c, err)
	}
	return c
}

func balance(tb testing.TB, s *sqlstore.DB, accountID string) int {
	tb.Helper()
	a, err := s.FindAccount(context.Background(), accountID)
	if err != nil {
		tb.Fatalf("FindAccount: %v", err)
	}
	return a.Balance
}

// checkLedger fails the test unless the account's ledger entries sum to its
// balance, and returns the entries.
func checkLedger(tb testing.TB, s *sqlstore.DB, accountID string) []gengate.LedgerEntry {
	tb.Helper()
	entries, err := s.Ledger(context.Background(), accountID)
	if err != nil {
		tb.Fatalf("Ledger: %v", err)
	}
	sum := 0
	for _, e := range entries {
		sum += e.Amount
	}
	if b := balance(tb, s, accountID); sum != b {
		tb.Fatalf("ledger sums to %d, balance is %d; entries %+v", sum, b, entries)
	}
	return entries
}

// waitUntil polls cond until it holds, failing the test after 10 seconds.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// count runs a SELECT COUNT(*) query.
func count(tb testing.TB, s *sqlstore.DB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := s.SQL().QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

func wantCode(tb testing.TB, what string, err error, code string) {
	tb.Helper()
	if got := gengate.ErrorCode(err); got != code {
		tb.Fatalf("%s: error %v (code %q); want code %q", what, err, got, code)
	}
}

// Constraint kinds reported by violation.
const (
	vUnique     = "unique"
	vCheck      = "check"
	vForeignKey = "foreign key"
	vAppendOnly = "append-only"
)

// violation names the constraint an error from either database violated,
// or returns "".
func violation(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			return vUnique
		case "23514":
			return vCheck
		case "23503":
			return vForeignKey
		case "P0001":
			if strings.Contains(pe.Message, "append-only") {
				return vAppendOnly
			}
		}
		return ""
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return vUnique
		case sqlite3.SQLITE_CONSTRAINT_CHECK:
			return vCheck
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return vForeignKey
		case sqlite3.SQLITE_CONSTRAINT_TRIGGER:
			if strings.Contains(se.Error(), "append-only") {
				return vAppendOnly
			}
		}
	}
	return ""
}

func wantViolation(tb testing.TB, what string, err error, kind string) {
	tb.Helper()
	if got := violation(err); got != kind {
		tb.Fatalf("%s: error %v (violation %q); want a %s violation", what, err, got, kind)
	}
}

func TestCreateAccount(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			if n, err := s.CountAccounts(ctx); err != nil || n != 0 {
				t.Fatalf("CountAccounts = %d, %v; want 0", n, err)
			}
			a := &gengate.Account{ID: gengate.NewID(), Name: "studio", CreatedAt: t0}
			if err := s.CreateAccount(ctx, a, 40); err != nil {
				t.Fatal(err)
			}
			if a.Balance != 40 {
				t.Errorf("a.Balance = %d; want 40", a.Balance)
			}
			got, err := s.FindAccount(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != a.ID || got.Name != "studio" || got.Balance != 40 || !got.CreatedAt.Equal(t0) {
				t.Errorf("FindAccount = %+v; want %+v", got, a)
			}
			entries := checkLedger(t, s, a.ID)
			if len(entries) != 1 {
				t.Fatalf("ledger = %+v; want one grant", entries)
			}
			if e := entries[0]; e.Kind != gengate.LedgerGrant || e.Amount != 40 || e.TaskID != "" || e.AccountID != a.ID || !e.CreatedAt.Equal(t0) {
				t.Errorf("ledger entry = %+v; want a grant of 40 at %v", e, t0)
			}

			newAccount(t, s, 0)
			if n, err := s.CountAccounts(ctx); err != nil || n != 2 {
				t.Errorf("CountAccounts = %d, %v; want 2", n, err)
			}
			if err := s.CreateAccount(ctx, &gengate.Account{ID: a.ID, CreatedAt: t0}, 1); err == nil {
				t.Error("CreateAccount with a taken id succeeded")
			}
			err = s.CreateAccount(ctx, &gengate.Account{ID: gengate.NewID(), CreatedAt: t0}, -1)
			wantCode(t, "CreateAccount(-1)", err, gengate.EInvalid)
			if n, _ := s.CountAccounts(ctx); n != 2 {
				t.Errorf("CountAccounts = %d after refused creations; want 2", n)
			}
			_, err = s.FindAccount(ctx, gengate.NewID())
			wantCode(t, "FindAccount(unknown)", err, gengate.ENotFound)
		})
	}
}

func TestAPIKeys(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 0)
			newKey := func(name string) (*gengate.APIKey, string) {
				t.Helper()
				secret, k := gengate.NewAPIKey(a.ID, name, t0)
				if err := s.CreateAPIKey(ctx, k); err != nil {
					t.Fatalf("CreateAPIKey: %v", err)
				}
				return k, secret
			}
			k1, secret1 := newKey("one")
			k2, secret2 := newKey("two")
			k3, secret3 := newKey("three")

			got, err := s.FindAPIKeyByHash(ctx, gengate.HashKey(secret1))
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != k1.ID || got.AccountID != a.ID || got.Name != "one" || got.Prefix != k1.Prefix ||
				got.Hash != k1.Hash || !got.CreatedAt.Equal(t0) || !got.RevokedAt.IsZero() {
				t.Errorf("FindAPIKeyByHash = %+v; want %+v", got, k1)
			}
			_, err = s.FindAPIKeyByHash(ctx, gengate.HashKey(gengate.NewKeySecret()))
			wantCode(t, "FindAPIKeyByHash(unknown)", err, gengate.ENotFound)

			// Revoke by id, then by display prefix.
			if err := s.RevokeAPIKey(ctx, k1.ID, t0); err != nil {
				t.Fatal(err)
			}
			_, err = s.FindAPIKeyByHash(ctx, gengate.HashKey(secret1))
			wantCode(t, "FindAPIKeyByHash(revoked by id)", err, gengate.ENotFound)
			if err := s.RevokeAPIKey(ctx, k2.Prefix, t0); err != nil {
				t.Fatal(err)
			}
			_, err = s.FindAPIKeyByHash(ctx, gengate.HashKey(secret2))
			wantCode(t, "FindAPIKeyByHash(revoked by prefix)", err, gengate.ENotFound)

			// The third key is untouched; revoking twice or an unknown key
			// is not found.
			if got, err := s.FindAPIKeyByHash(ctx, gengate.HashKey(secret3)); err != nil || got.ID != k3.ID {
				t.Errorf("FindAPIKeyByHash(key 3) = %+v, %v; want key 3", got, err)
			}
			wantCode(t, "RevokeAPIKey(again)", s.RevokeAPIKey(ctx, k1.ID, t0), gengate.ENotFound)
			wantCode(t, "RevokeAPIKey(unknown)", s.RevokeAPIKey(ctx, "gg_live_nope", t0), gengate.ENotFound)

			// A key needs an existing account, and hashes are unique.
			err = s.CreateAPIKey(ctx, &gengate.APIKey{ID: gengate.NewID(), AccountID: gengate.NewID(), Prefix: "p", Hash: "h", CreatedAt: t0})
			wantViolation(t, "CreateAPIKey(unknown account)", err, vForeignKey)
			err = s.CreateAPIKey(ctx, &gengate.APIKey{ID: gengate.NewID(), AccountID: a.ID, Prefix: "p", Hash: k3.Hash, CreatedAt: t0})
			wantViolation(t, "CreateAPIKey(same hash)", err, vUnique)
		})
	}
}

func TestGrant(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 40)
			steps := []struct {
				credits int
				want    int
				code    string
			}{
				{10, 50, ""},
				{-20, 30, ""},
				{-31, 30, gengate.EInsufficient},
				{-30, 0, ""},
				{-1, 0, gengate.EInsufficient},
				{5, 5, ""},
			}
			for _, st := range steps {
				got, err := s.Grant(ctx, a.ID, st.credits, "note", t0)
				wantCode(t, "Grant", err, st.code)
				if err == nil && got != st.want {
					t.Errorf("Grant(%d) = %d; want %d", st.credits, got, st.want)
				}
				if b := balance(t, s, a.ID); b != st.want {
					t.Fatalf("after Grant(%d) the balance is %d; want %d", st.credits, b, st.want)
				}
			}
			entries := checkLedger(t, s, a.ID)
			var kinds []string
			for _, e := range entries {
				kinds = append(kinds, e.Kind)
				if e.TaskID != "" {
					t.Errorf("entry %+v has a task", e)
				}
			}
			want := "grant grant adjustment adjustment grant"
			if strings.Join(kinds, " ") != want {
				t.Errorf("ledger kinds = %v; want %s", kinds, want)
			}
			if e := entries[2]; e.Amount != -20 || e.Note != "note" {
				t.Errorf("adjustment = %+v; want -20 with its note", e)
			}

			_, err := s.Grant(ctx, gengate.NewID(), 10, "", t0)
			wantCode(t, "Grant(unknown account)", err, gengate.ENotFound)
			_, err = s.Grant(ctx, gengate.NewID(), -10, "", t0)
			wantCode(t, "Grant(unknown account, negative)", err, gengate.ENotFound)
			if n := count(t, s, `SELECT COUNT(*) FROM ledger`); n != len(entries) {
				t.Errorf("%d ledger rows; want %d (refused grants write none)", n, len(entries))
			}
		})
	}
}
