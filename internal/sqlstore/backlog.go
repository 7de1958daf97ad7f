package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
)

// Backlog counts the tasks that wait for a worker (queued, or claimed and
// being submitted) in the database a running server uses, from another
// process. It opens a read-only connection of its own and closes it: unlike
// Open it starts no writer and no checkpointer, so a benchmark can ask while
// it measures without competing with the server for the database.
func Backlog(ctx context.Context, url, dataDir string) (int, error) {
	var db *sql.DB
	var err error
	query := `SELECT COUNT(*) FROM tasks WHERE status IN ('queued','submitting')`
	if IsPostgres(url) {
		db, err = sql.Open("pgx", url)
	} else {
		if url == "" {
			url = filepath.Join(dataDir, "gengate.db")
		}
		db, err = openSQLite("file:" + url + "?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	}
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	err = db.QueryRowContext(ctx, query).Scan(&n)
	return n, err
}
