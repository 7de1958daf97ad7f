package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestMigrationsLoggedAndNewerSchemaRefused: a fresh database logs each
// migration as it runs, up to SchemaVersion; a database a newer binary
// migrated (its version table past SchemaVersion) is refused, naming both
// versions, on both databases.
func TestMigrationsLoggedAndNewerSchemaRefused(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			s, err := sqlstore.Open(ctx, url, dir, sqlstore.WithLog(log))
			if err != nil {
				t.Fatal(err)
			}
			known := sqlstore.SchemaVersion()
			applied := strings.Count(logs.String(), `"msg":"schema migration applied"`)
			if applied < 10 || !strings.Contains(logs.String(), `"version":`+itoa(known)+`,`) {
				t.Errorf("%d migrations logged, the last (%d) missing?\n%s", applied, known, logs.String())
			}
			// A newer binary's migration, as goose records one.
			if _, err := s.SQL().ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, known+1); err != nil {
				t.Fatal(err)
			}
			s.Close()
			logs.Reset()
			_, err = sqlstore.Open(ctx, url, dir, sqlstore.WithLog(log))
			var newer *sqlstore.NewerSchemaError
			if !errors.As(err, &newer) || newer.Database != known+1 || newer.Known != known {
				t.Fatalf("open on a newer schema: %v, want NewerSchemaError %d > %d", err, known+1, known)
			}
			if !strings.Contains(err.Error(), itoa(known+1)) || !strings.Contains(err.Error(), itoa(known)) {
				t.Errorf("the error names not both versions: %v", err)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
