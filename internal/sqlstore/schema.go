package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// The schema's version is the number of its latest migration, the same
// on SQLite and PostgreSQL (a migration one of them does not need is
// left out of its directory, and the numbers stay shared). A binary
// knows the versions up to its own latest; it migrates an older database
// up to it, one migration at a time, each logged as it runs, and refuses
// a database already past it: the newer binary that migrated it may have
// changed what rows mean (file tokens sealed instead of kept, say), and
// an older one serving it would hand out answers that are wrong.

// SchemaVersion is the latest schema version this binary knows.
func SchemaVersion() int64 {
	var v int64
	for _, dir := range []string{"migrations/sqlite", "migrations/postgres"} {
		entries, _ := fs.ReadDir(migrations, dir)
		for _, e := range entries {
			if n, ok := migrationNumber(e.Name()); ok && n > v {
				v = n
			}
		}
	}
	return v
}

func migrationNumber(name string) (int64, bool) {
	if path.Ext(name) != ".sql" {
		return 0, false
	}
	num, _, _ := strings.Cut(name, "_")
	n, err := strconv.ParseInt(num, 10, 64)
	return n, err == nil
}

// NewerSchemaError is a database whose schema a newer binary migrated.
type NewerSchemaError struct {
	Database, Known int64
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the database's schema is at version %d, newer than this binary knows (%d): "+
		"it was upgraded by a newer gengate; run that version or a later one (docs/upgrading.md)", e.Database, e.Known)
}

// WithLog logs each migration as it runs (and nothing when none is due).
func WithLog(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

func (s *DB) migrate(ctx context.Context, log *slog.Logger) error {
	dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
	var opts []goose.ProviderOption
	if s.postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
		// Processes starting together take turns: each migration runs
		// once, under the session lock.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, s.db, sub, opts...)
	if err != nil {
		return err
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: read the schema's version: %w", err)
	}
	known := SchemaVersion()
	if current > known {
		return &NewerSchemaError{Database: current, Known: known}
	}
	if current < known && log != nil {
		log.Info("schema migrations due", "from", current, "to", known)
	}
	for {
		start := time.Now()
		r, err := p.UpByOne(ctx)
		if errors.Is(err, goose.ErrNoNextVersion) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if log != nil && r != nil && r.Source != nil {
			log.Info("schema migration applied", "version", r.Source.Version, "migration", path.Base(r.Source.Path),
				"ms", time.Since(start).Milliseconds())
		}
	}
}
