package sqlstore_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestNoTablesBuiltPerWrite: SQLite codes an IN list of constants as an
// ephemeral table that it builds at every execution of a statement that
// evaluates it; on a task row's way that was the CHECK on status and the
// conditions of the partial indexes, at every creation and every step
// record (3 tables in a task's INSERT, 8 in the step records' UPDATE, 1
// in a lease's extension). Migration 00038 and the store's queries write
// them as chains of = and <>: the statements on a task's way open no
// ephemeral table but the two an UPDATE … FROM … RETURNING needs for its
// rows, and the one of a claim's UPDATE … FROM of its rowids.
func TestNoTablesBuiltPerWrite(t *testing.T) {
	ctx := context.Background()
	s := sqltest.Open(t, "sqlite")
	allowed := map[string]int{"step records": 2, "claim lease": 1, "claim submitting": 1}
	for name, q := range sqlstore.WriteStatements() {
		ops, err := s.Opcodes(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ops) == 0 {
			t.Fatalf("%s: no program", name)
		}
		n := 0
		for _, op := range ops {
			if op == "OpenEphemeral" {
				n++
			}
		}
		if n > allowed[name] {
			t.Errorf("%s opens %d ephemeral tables at every execution; want at most %d", name, n, allowed[name])
		}
	}
}
