// Package sqltest opens fresh, real gengate databases for tests: SQLite in
// a temporary directory, and PostgreSQL in a schema of its own on the
// server named by GENGATE_TEST_POSTGRES (default: the local server at
// 127.0.0.1:5432, user postgres). When PostgreSQL cannot be reached the
// PostgreSQL variants skip with a message, except under CI (CI=true), where
// they fail: CI always has the server.
package sqltest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// Dialects are the databases every store test runs on.
var Dialects = []string{"sqlite", "postgres"}

// DefaultPostgres is the server tests use unless GENGATE_TEST_POSTGRES says
// otherwise.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// URL returns the --database value for a fresh database of the dialect:
// "" for SQLite (the store goes in dataDir), or a postgres:// URL whose
// search_path is a new schema, dropped when the test ends.
func URL(tb testing.TB, dialect string) string {
	tb.Helper()
	if dialect == "sqlite" {
		return ""
	}
	base := os.Getenv("GENGATE_TEST_POSTGRES")
	if base == "" {
		base = DefaultPostgres
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", base)
	if err == nil {
		err = admin.PingContext(ctx)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL at %s is required under CI: %v", base, err)
		}
		tb.Skipf("PostgreSQL not reachable at %s (set GENGATE_TEST_POSTGRES): %v", base, err)
	}
	schema := "gg_test_" + strings.ReplaceAll(gengate.NewID(), "-", "")[:16]
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// FileTokenKey is the server key every store Open returns seals file
// tokens with, as the processes of one deployment share theirs.
var FileTokenKey = func() *gengate.SecretBox {
	b, err := gengate.NewSecretBox([]byte("sqltest file token key, 32 bytes or more"))
	if err != nil {
		panic(err)
	}
	return b
}()

// Open returns a fresh, migrated store of the dialect, closed when the test
// ends.
func Open(tb testing.TB, dialect string) *sqlstore.DB {
	tb.Helper()
	return OpenWith(tb, dialect)
}

// OpenWith is Open with the store's options.
func OpenWith(tb testing.TB, dialect string, opts ...sqlstore.Option) *sqlstore.DB {
	tb.Helper()
	opts = append([]sqlstore.Option{sqlstore.WithFileTokenKey(FileTokenKey)}, opts...)
	s, err := sqlstore.Open(context.Background(), URL(tb, dialect), tb.TempDir(), opts...)
	if err != nil {
		tb.Fatalf("open %s store: %v", dialect, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
