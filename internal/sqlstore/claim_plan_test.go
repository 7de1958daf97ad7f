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
// no temporary B-tree or sort over the active tasks, no scan of the table;
// on PostgreSQL also in the generic plan of the prepared statement, whose
// update finds the claimed rows by id alone (it once intersected them
// with the whole index of active tasks, at every claim).
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
			// Checked twice on PostgreSQL: before its statistics count
			// these tasks (a database that grew faster than autovacuum
			// looked at it), and after.
			for _, analyzed := range []bool{false, true} {
				if analyzed && !s.Postgres() {
					continue // SQLite has no statistics unless someone runs ANALYZE, and gengate does not
				}
				if analyzed {
					if _, err := s.SQL().Exec(`ANALYZE`); err != nil {
						t.Fatal(err)
					}
				}
				for _, generic := range []bool{false, true} {
					if generic && !s.Postgres() {
						continue // SQLite plans each statement once
					}
					// ClaimSteps' function on PostgreSQL (SQLite's
					// claim is ClaimTasks').
					for _, steps := range []bool{false, true} {
						plan, err := s.ClaimPlan(ctx, t0, generic)
						if steps {
							plan, err = s.ClaimStepsPlan(ctx, t0, generic)
						}
						if err != nil {
							t.Fatal(err)
						}
						t.Logf("plan (analyzed %v, generic %v, steps %v):\n%s", analyzed, generic, steps, plan)
						// The index is walked once, by the selection; the
						// update finds its rows by id.
						if n := strings.Count(plan, "tasks_due"); n != 1 {
							t.Errorf("analyzed %v, generic %v, steps %v: the claim uses the index tasks_due %d times; want once:\n%s", analyzed, generic, steps, n, plan)
						}
						for _, bad := range []string{"TEMP B-TREE", "Sort", "SCAN tasks", "Seq Scan", "tasks_status", "BitmapAnd"} {
							if strings.Contains(plan, bad) {
								t.Errorf("analyzed %v, generic %v, steps %v: the claim's plan has %q:\n%s", analyzed, generic, steps, bad, plan)
							}
						}
					}
				}
			}
		})
	}
}
