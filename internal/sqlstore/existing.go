package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// The operator commands (keys, accounts, credits, review) open the
// database a server uses; they must not make a new, empty one where the
// operator mistyped --data or forgot --database, and print a key that
// works nowhere. WithExisting makes Open refuse a database that no
// gengate has made: a SQLite file that does not exist (nothing is
// created, not even the directory), or a PostgreSQL database (or schema)
// without gengate's tables.

// NoDatabaseError is a database that does not exist (or holds no gengate
// schema) where WithExisting asked for one. Where names what was looked at.
type NoDatabaseError struct {
	Where string
}

func (e *NoDatabaseError) Error() string {
	return "no gengate database at " + e.Where
}

// WithExisting makes Open refuse to create a database.
func WithExisting() Option {
	return func(o *options) { o.existing = true }
}

// checkSQLiteExists refuses a SQLite database that has not been made.
func checkSQLiteExists(dataDir string) error {
	path := filepath.Join(dataDir, "gengate.db")
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return &NoDatabaseError{Where: abs}
	} else if err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	return nil
}

// checkPostgresSchema refuses a PostgreSQL database (in its search_path)
// that no gengate migrated.
func checkPostgresSchema(ctx context.Context, db *sql.DB, url string) error {
	var name sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('goose_db_version')::text`).Scan(&name); err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	if !name.Valid {
		return &NoDatabaseError{Where: redactURL(url) + " (the database has no gengate tables)"}
	}
	return nil
}

// redactURL hides the password of a postgres:// URL.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the --database URL"
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	}
	return p.Redacted()
}
