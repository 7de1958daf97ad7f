package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// TestStatementCache: a SQLite connection keeps the statements it runs
// prepared and runs them again with new arguments; the same statement
// used again while its rows are still open gets one of its own; a schema
// change under a kept statement is seen.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := s.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	const plus = `SELECT $1 + 1`
	for i := range 50 {
		var got int
		if err := conn.QueryRowContext(ctx, plus, i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("%s with %d: %d, %v", plus, i, got, err)
		}
	}
	kept := func(query string) (in bool, n int) {
		if err := conn.Raw(func(dc any) error {
			cc, ok := dc.(*cachingConn)
			if !ok {
				t.Fatalf("the driver connection is a %T, not a *cachingConn", dc)
			}
			_, in = cc.stmts[query]
			n = len(cc.stmts)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return in, n
	}
	before, n := kept(plus)
	if !before {
		t.Fatalf("%q is not kept prepared (%d statements kept)", plus, n)
	}

	// Nested: the outer rows are open while the same text runs again.
	const three = `SELECT column1 FROM (VALUES (1), (2), (3))`
	read := func() []int {
		rows, err := conn.QueryContext(ctx, three)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	rows, err := conn.QueryContext(ctx, three)
	if err != nil {
		t.Fatal(err)
	}
	var outer []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, v)
		if inner := read(); !slices.Equal(inner, []int{1, 2, 3}) {
			t.Fatalf("inner read while the outer rows are open: %v", inner)
		}
	}
	rows.Close()
	if !slices.Equal(outer, []int{1, 2, 3}) || !slices.Equal(read(), []int{1, 2, 3}) {
		t.Fatalf("outer read %v", outer)
	}

	// A schema change under a kept statement.
	w, err := s.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cols := func(c *sql.Conn) []string {
		rows, err := c.QueryContext(ctx, `SELECT * FROM cache_probe`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		names, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	for _, q := range []string{`CREATE TABLE cache_probe (a INTEGER)`} {
		if _, err := w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if got := cols(w); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("columns %v", got)
	}
	if _, err := w.ExecContext(ctx, `ALTER TABLE cache_probe ADD COLUMN b INTEGER`); err != nil {
		t.Fatal(err)
	}
	if got := cols(w); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("columns after ALTER TABLE: %v", got)
	}
}
