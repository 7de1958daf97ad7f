package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestIdempotencyIndexSkipsKeylessTasks: on PostgreSQL the uniqueness of
// an account's Idempotency-Keys is a partial index (migration 00041), so
// a task sent without a key writes no entry in it at any of its row
// versions, while two tasks of an account still never share a key.
func TestIdempotencyIndexSkipsKeylessTasks(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a := newAccount(t, s, 1000)
	size := func() (n int64) {
		t.Helper()
		if err := s.SQL().QueryRow(`SELECT pg_relation_size('tasks_idempotency')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	empty := size()
	addTasks(t, s, a.ID, "q", "queued", t0.UnixMilli(), 3000)
	if got := size(); got != empty {
		t.Errorf("3,000 tasks without a key grew tasks_idempotency from %d to %d bytes; want no entry for them", empty, got)
	}
	for i := range 200 {
		task := newTask(a.ID, 1)
		task.IdempotencyKey = fmt.Sprintf("key-%d", i)
		if _, err := s.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	if got := size(); got <= empty {
		t.Errorf("200 tasks with keys left tasks_idempotency at %d bytes: it is not the index that holds the keys", got)
	}
	_, err := s.SQL().Exec(`INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost,
		idempotency_key, fingerprint, engine, run_at, created_at, updated_at)
		VALUES ('dup', $1, 'flux', 'image', 'queued', 'p', '{}', '{}', 1, 'key-7', 'fp', 'sandbox', 1, 1, 1)`, a.ID)
	if err == nil {
		t.Fatal("a second task of the account with key-7 was stored; want a unique violation")
	}
	t.Logf("a second task with key-7: %v", err)
}
