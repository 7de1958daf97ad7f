package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestExhaustedPoolRefused: on PostgreSQL with a pool of one connection
// (--db-conns 1), held by someone else for longer than --db-wait, a
// generate is refused with 503 OVERLOADED and Retry-After, and nothing is
// written or charged; once the connection is free again, the same request
// is accepted. No 500 either way.
func TestExhaustedPoolRefused(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqltest.URL(t, "postgres"), t.TempDir(),
		sqlstore.WithPostgresConns(1), sqlstore.WithConnWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := newStack(t, stackOpts{dialect: "postgres", db: db, noWorkers: true})
	acct, key := s.account(100)
	body := flux("pool")
	// The key comes from memory whatever the timing: a cache whose copies
	// stay trusted while the pool is held (the stack's own cache, whose
	// counter read waits for the pool too, would stop trusting them).
	s.svc.Keys = gengate.NewKeyCache(db, time.Hour, 0)
	if err := s.svc.Keys.Check(ctx); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.do(call{Method: "GET", Path: "/api/v1/keys", Key: key}), http.StatusOK)

	held, err := db.SQL().Conn(ctx) // the pool's one connection
	if err != nil {
		t.Fatal(err)
	}
	r := s.generate(key, body, map[string]string{"Prefer": "respond-async", "Idempotency-Key": "pool-1"})
	wantProblem(t, r, http.StatusServiceUnavailable, gengate.EOverloaded)
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	held.Close()

	if n, b := s.taskCount(), s.balance(acct); n != 0 || b != 100 {
		t.Fatalf("after the refusal: %d tasks, balance %d; want 0 and 100", n, b)
	}
	wantAccepted(t, s.generate(key, body, map[string]string{"Prefer": "respond-async", "Idempotency-Key": "pool-1"}))
	if n := s.taskCount(); n != 1 {
		t.Fatalf("%d tasks after the accepted retry; want 1", n)
	}
}

// TestEveryOperationPoolExhausted: on PostgreSQL with the pool's one
// connection held by someone else for longer than --db-wait, every
// documented operation that reads the database answers 503 OVERLOADED with
// Retry-After (in OpenAI's shape on its endpoints), never a 500, and
// changes nothing; the operations that read no database answer as usual.
func TestEveryOperationPoolExhausted(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqltest.URL(t, "postgres"), t.TempDir(),
		sqlstore.WithPostgresConns(1), sqlstore.WithConnWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := newStack(t, stackOpts{dialect: "postgres", db: db, noWorkers: true})
	h := s.holder(100, true)
	id := wantAccepted(t, s.generate(h.key, flux("a cat"), async))
	before, tasks := s.balance(h.account), s.taskCount()

	held, err := db.SQL().Conn(ctx) // the pool's one connection
	if err != nil {
		t.Fatal(err)
	}
	noDatabase := map[string]bool{"/healthz": true, "/readyz": true, "/api/v1/openapi.json": true, "/docs/api": true,
		"/metrics": true, "/api/v1/auth/config": true, "/files/in/{task}/{name}": true}
	for _, op := range documentedOperations(t) {
		c := call{Method: op.method, Path: concrete(op.path, id)}
		if op.method != "GET" {
			c.Body = map[string]any{}
		}
		if op.auth {
			c.Key = h.key
		}
		r := s.do(c)
		if noDatabase[op.path] {
			if r.Status == http.StatusServiceUnavailable && op.path != "/readyz" {
				t.Errorf("%s %s reads no database but answered 503: %s", c.Method, op.path, r.Body)
			}
			continue
		}
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s: no Retry-After", c.Method, op.path)
		}
		if op.openAI {
			wantStatus(t, r, http.StatusServiceUnavailable)
			continue
		}
		wantProblem(t, r, http.StatusServiceUnavailable, gengate.EOverloaded)
	}
	held.Close()
	if b, n := s.balance(h.account), s.taskCount(); b != before || n != tasks {
		t.Errorf("after the refusals: balance %d, %d tasks; want %d and %d", b, n, before, tasks)
	}
	wantStatus(t, s.do(call{Method: "GET", Path: "/api/generation/jobs/" + id, Key: h.key}), http.StatusOK)
}
