package sqlstore_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestKeysGeneration: every change to a key that authentication depends
// on (revoked by the operator or by its account, renamed, limited) moves
// the change counter in the change's own transaction, on both databases;
// the writes that happen on every request (the key's daily spend when a
// task is charged, its last-used time) do not, so caches of keys are not
// dropped by ordinary traffic.
func TestKeysGeneration(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, dialect)
			acct := newAccount(t, s, 100)
			newKey := func() *gengate.APIKey {
				_, k := gengate.NewAPIKey(acct.ID, "k", t0)
				if err := s.CreateAPIKey(ctx, k); err != nil {
					t.Fatal(err)
				}
				return k
			}
			k := newKey()
			gen := func() int64 {
				t.Helper()
				g, err := s.KeysGeneration(ctx)
				if err != nil {
					t.Fatalf("KeysGeneration: %v", err)
				}
				return g
			}
			for _, step := range []struct {
				name  string
				moves bool
				do    func() error
			}{
				{"create a key", false, func() error { newKey(); return nil }},
				{"record its use", false, func() error { return s.TouchAPIKey(ctx, k.ID, t0.Add(gengate.KeyTouchInterval*2)) }},
				{"charge a task to it", false, func() error {
					task := newTask(acct.ID, 3)
					task.KeyID = k.ID
					_, err := s.CreateTask(ctx, task)
					return err
				}},
				{"rename and limit it", true, func() error {
					k.Name, k.SpendLimit = "renamed", 50
					return s.UpdateAPIKey(ctx, k)
				}},
				{"revoke it by its account", true, func() error { return s.RevokeAccountKey(ctx, acct.ID, k.ID, t0) }},
				{"revoke another by the operator (CLI)", true, func() error { return s.RevokeAPIKey(ctx, newKey().ID, t0) }},
			} {
				before := gen()
				if err := step.do(); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if moved := gen() != before; moved != step.moves {
					t.Errorf("%s: the generation moved = %v, want %v", step.name, moved, step.moves)
				}
			}
		})
	}
}

// TestKeysGenerationSharedByStores: a change made through one store (one
// process) is seen by another store on the same database: the SQLite file,
// or the PostgreSQL database.
func TestKeysGenerationSharedByStores(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, dialect), t.TempDir()
			open := func() *sqlstore.DB {
				s, err := sqlstore.Open(ctx, url, dir, sqlstore.WithPostgresConns(2))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			a, b := open(), open()
			acct := newAccount(t, a, 10)
			_, k := gengate.NewAPIKey(acct.ID, "k", t0)
			if err := a.CreateAPIKey(ctx, k); err != nil {
				t.Fatal(err)
			}
			before, err := b.KeysGeneration(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.RevokeAPIKey(ctx, k.ID, t0); err != nil {
				t.Fatal(err)
			}
			after, err := b.KeysGeneration(ctx)
			if err != nil || after == before {
				t.Fatalf("the other store's generation: %d before, %d after the revocation (err %v); want a change", before, after, err)
			}
		})
	}
}
