package sqlstore_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestStatusQueriesPlan: on SQLite tasks_status holds only the tasks out
// of the active states (migration 00014), and the queries by status still
// walk an index, never the whole table: CountTasks counts the active
// tasks in tasks_due and the others in tasks_status, ListTasks and
// ListReview find needs_review in tasks_status.
func TestStatusQueriesPlan(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "sqlite")
	a := newAccount(t, s, 100)
	now := t0.UnixMilli()
	addTasks(t, s, a.ID, "q", "queued", now, 2000)
	addTasks(t, s, a.ID, "r", "running", now, 2000)
	addTasks(t, s, a.ID, "done", "succeeded", now, 2000)
	addTasks(t, s, a.ID, "rev", "needs_review", now, 3)
	plans, err := s.StatusPlans(ctx, gengate.StatusNeedsReview, gengate.StatusSucceeded, gengate.StatusRunning)
	if err != nil {
		t.Fatal(err)
	}
	tableScan := regexp.MustCompile(`SCAN tasks($|\n)`)
	for name, plan := range plans {
		t.Logf("%s:\n%s", name, plan)
		if tableScan.MatchString(plan) {
			t.Errorf("%s scans the table:\n%s", name, plan)
		}
	}
	for name, index := range map[string]string{"CountTasks": "tasks_due", "ListReview": "tasks_status", "ListTasks needs_review": "tasks_status"} {
		if !regexp.MustCompile(`USING (COVERING )?INDEX ` + index).MatchString(plans[name]) {
			t.Errorf("%s does not use %s:\n%s", name, index, plans[name])
		}
	}

	counts, err := s.CountTasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[gengate.Status]int{gengate.StatusQueued: 2000, gengate.StatusRunning: 2000, gengate.StatusSucceeded: 2000, gengate.StatusNeedsReview: 3}
	if len(counts) != len(want) {
		t.Errorf("CountTasks = %v; want %v", counts, want)
	}
	for st, n := range want {
		if counts[st] != n {
			t.Errorf("CountTasks()[%s] = %d; want %d", st, counts[st], n)
		}
	}
	for st, n := range map[gengate.Status]int{gengate.StatusNeedsReview: 3, gengate.StatusRunning: 10, gengate.StatusSucceeded: 10} {
		list, err := s.ListTasks(ctx, st, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != n {
			t.Errorf("ListTasks(%s) returned %d tasks; want %d", st, len(list), n)
		}
	}
	review, err := s.ListReview(ctx, gengate.TaskCursor{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(review) != 3 {
		t.Errorf("ListReview returned %d tasks; want 3", len(review))
	}
}

// TestStatusIndexSkipsActiveTasks: on PostgreSQL too (migration 00040)
// tasks_status holds only the tasks out of the active states, so the
// rows of tasks on their way upstream (each claim and step record is a
// new row version, never a HOT update) write no entry in it: 3,000 active
// tasks leave it at its empty size, 3,000 finished ones grow it. The
// queries by status still find both kinds (CountTasks, ListTasks).
func TestStatusIndexSkipsActiveTasks(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "postgres")
	a := newAccount(t, s, 100)
	size := func() (n int64) {
		t.Helper()
		if err := s.SQL().QueryRow(`SELECT pg_relation_size('tasks_status')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	empty := size()
	now := t0.UnixMilli()
	addTasks(t, s, a.ID, "q", "queued", now, 1000)
	addTasks(t, s, a.ID, "s", "submitting", now, 1000)
	addTasks(t, s, a.ID, "r", "running", now, 1000)
	if got := size(); got != empty {
		t.Errorf("3,000 active tasks grew tasks_status from %d to %d bytes; want no entry for an active task", empty, got)
	}
	addTasks(t, s, a.ID, "done", "succeeded", now, 3000)
	if got := size(); got <= empty {
		t.Errorf("3,000 finished tasks left tasks_status at %d bytes: the index is not the one queries by status use", got)
	}
	counts, err := s.CountTasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for st, n := range map[gengate.Status]int{gengate.StatusQueued: 1000, gengate.StatusSubmitting: 1000, gengate.StatusRunning: 1000, gengate.StatusSucceeded: 3000} {
		if counts[st] != n {
			t.Errorf("CountTasks()[%s] = %d; want %d", st, counts[st], n)
		}
	}
	for st, n := range map[gengate.Status]int{gengate.StatusQueued: 10, gengate.StatusSucceeded: 10} {
		list, err := s.ListTasks(ctx, st, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != n {
			t.Errorf("ListTasks(%s) returned %d tasks; want %d", st, len(list), n)
		}
	}
}
