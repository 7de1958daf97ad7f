package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// addTasks inserts n tasks of the account in one statement, ids prefix+i:
// status, due at runAt (Unix ms), finished ones completed.
func addTasks(tb testing.TB, s *sqlstore.DB, accountID, prefix, status string, runAt int64, n int) {
	tb.Helper()
	completed := int64(0)
	if status == "succeeded" || status == "failed" {
		completed = runAt
	}
	_, err := s.SQL().Exec(fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO tasks (id, account_id, model_id, type, status, prompt, options, inputs, cost, fingerprint, engine,
			run_at, created_at, updated_at, completed_at)
		SELECT '%s' || i, '%s', 'flux', 'image', '%s', 'p', '{}', '{}', 1, 'fp', 'sandbox', %d + i, %d, %d, %d FROM n`,
		n, prefix, accountID, status, runAt, runAt, runAt, completed))
	if err != nil {
		tb.Fatalf("insert %d %s tasks: %v", n, status, err)
	}
}

// TestClaimPlan: the claim of due tasks walks the partial index of active
// tasks by due time and stops after the rows it needs, on both databases:
// no temporary B-tree or sort over the active tasks, no scan of the table.
// The table holds tasks of every kind (counted by the planner's statistics
// on PostgreSQL, as autovacuum would; SQLite is left without statistics,
// as gengate leaves it), so that a plan that scans or sorts would have
// something to scan.
func TestClaimPlan(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 100)
			now := t0.UnixMilli()
			addTasks(t, s, a.ID, "done", "succeeded", now-int64(time.Hour/time.Millisecond), 5000)
			addTasks(t, s, a.ID, "wait", "running", now+int64(time.Hour/time.Millisecond), 5000)
			addTasks(t, s, a.ID, "due", "queued", now-1000, 50)
			if s.Postgres() {
				// Autovacuum keeps statistics in a live database; SQLite has
				// none unless someone runs ANALYZE, and gengate does not.
				if _, err := s.SQL().Exec(`ANALYZE`); err != nil {
					t.Fatal(err)
				}
			}
			plan, err := s.ClaimPlan(ctx, t0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("plan:\n%s", plan)
			if !strings.Contains(plan, "tasks_due") {
				t.Errorf("the claim does not use the index tasks_due:\n%s", plan)
			}
			for _, bad := range []string{"TEMP B-TREE", "Sort", "SCAN tasks", "Seq Scan", "tasks_status"} {
				if strings.Contains(plan, bad) {
					t.Errorf("the claim's plan has %q:\n%s", bad, plan)
				}
			}
		})
	}
}
