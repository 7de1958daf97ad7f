package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gengate/gengate/internal/sqlstore"
)

const migrateHelp = `usage: gengate migrate-data --from SOURCE --to DESTINATION [--dry-run]

Copies an installation's database rows to another database: accounts, API
keys (their hashes; keys are never stored), the ledger, tasks with their
idempotency keys, and creations with their URL tokens. SOURCE and
DESTINATION are each a postgres:// URL or a SQLite data directory (the
--data of gengate serve, where gengate.db lives), so that an installation
can move from the embedded SQLite to PostgreSQL, or back.

Stop every gengate process on the source first. The destination must be
empty (do not start gengate serve on it before: its first start creates an
account); migrate-data never merges two installations. The copy is one
transaction, verified before it commits (row counts, and every account's
balance against its ledger): on any error nothing is written. Leases are
not copied: workers on the destination pick up the tasks that were active.

Output files are NOT copied: only database rows. Move the files under the
old storage (default <data>/files) to the new one, or start the new
processes with --storage pointing at the same place. Give the new
processes the old server key too (--webhook-key, or a copy of
<data>/webhook.key): file URL tokens and webhook secrets are sealed
under it.

--from and --to are never read from the environment. Opening a database
brings its schema up to date, as every gengate command does.

flags:`

// migrateEnd is one side of migrate-data: a PostgreSQL URL or a SQLite
// data directory.
type migrateEnd struct {
	flag     string // "--from" or "--to"
	url      string // postgres:// URL, or "" for SQLite
	dir      string // SQLite data directory
	postgres bool
}

func parseMigrateEnd(flagName, v string) (migrateEnd, error) {
	e := migrateEnd{flag: flagName}
	switch {
	case v == "":
		return e, fmt.Errorf("%s is required: a postgres:// URL or a SQLite data directory", flagName)
	case sqlstore.IsPostgres(v):
		e.url, e.postgres = v, true
		return e, nil
	case strings.Contains(v, "://"):
		return e, fmt.Errorf("%s %s: want a postgres:// URL or a SQLite data directory", flagName, v)
	}
	dir := v
	if st, err := os.Stat(v); err == nil && !st.IsDir() {
		if filepath.Base(v) != "gengate.db" {
			return e, fmt.Errorf("%s %s is a file: give the data directory where gengate.db lives", flagName, v)
		}
		dir = filepath.Dir(v)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return e, fmt.Errorf("%s: %w", flagName, err)
	}
	e.dir = abs
	return e, nil
}

func (e migrateEnd) dbFile() string { return filepath.Join(e.dir, "gengate.db") }

// exists reports whether a SQLite end's database file is there (a
// PostgreSQL end always counts as there).
func (e migrateEnd) exists() bool {
	if e.postgres {
		return true
	}
	_, err := os.Stat(e.dbFile())
	return err == nil
}

func (e migrateEnd) String() string {
	if e.postgres {
		if u, err := url.Parse(e.url); err == nil {
			return "PostgreSQL " + u.Redacted()
		}
		return "PostgreSQL (unparsable URL)"
	}
	return "SQLite " + e.dbFile()
}

func (e migrateEnd) open(ctx context.Context) (*sqlstore.DB, error) {
	s, err := sqlstore.Open(ctx, e.url, e.dir)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", e.flag, e, err)
	}
	return s, nil
}

func migrateData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var from, to string
	var dryRun bool
	f := newFlags("migrate-data", getenv, stderr)
	f.StringVar(&from, "from", "", "source: postgres:// URL or SQLite data directory")
	f.StringVar(&to, "to", "", "destination, empty: postgres:// URL or SQLite data directory (created if missing)")
	f.BoolVar(&dryRun, "dry-run", false, "count the source's rows and check the destination is empty; write no rows")
	f.Usage = func() {
		fmt.Fprintln(f.Output(), migrateHelp)
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	src, err := parseMigrateEnd("--from", from)
	if err != nil {
		return err
	}
	dst, err := parseMigrateEnd("--to", to)
	if err != nil {
		return err
	}
	if src.postgres == dst.postgres && src.url == dst.url && src.dir == dst.dir {
		return errors.New("--from and --to name the same database")
	}
	if !src.exists() {
		// Opening it would create an empty database, and copy nothing.
		return fmt.Errorf("--from %s: no gengate database there (want the --data directory of gengate serve)", src.dir)
	}

	fmt.Fprintf(stdout, "from: %s\nto:   %s\n", src, dst)
	source, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer source.Close()

	if dryRun {
		fmt.Fprintln(stdout, "dry run: no rows are written")
		stats, err := source.CountRows(ctx)
		if err != nil {
			return fmt.Errorf("count the source's rows: %w", err)
		}
		printCounts(stdout, stats)
		if !dst.exists() {
			fmt.Fprintf(stdout, "%d rows would be copied into a new database at %s\n", stats.Total(), dst.dbFile())
			return nil
		}
		target, err := dst.open(ctx)
		if err != nil {
			return err
		}
		defer target.Close()
		have, err := target.CountRows(ctx)
		if err != nil {
			return fmt.Errorf("count the destination's rows: %w", err)
		}
		if have.Total() > 0 {
			return fmt.Errorf("%w: it holds %d accounts and %d rows in all; a real run would be refused",
				sqlstore.ErrDestinationNotEmpty, have.Rows("accounts"), have.Total())
		}
		fmt.Fprintf(stdout, "%d rows would be copied; the destination is empty\n", stats.Total())
		return nil
	}

	target, err := dst.open(ctx)
	if err != nil {
		return err
	}
	defer target.Close()
	stats, err := source.CopyTo(ctx, target)
	if err != nil {
		return fmt.Errorf("nothing copied: %w", err)
	}
	printCounts(stdout, stats)
	fmt.Fprintf(stdout, "copied %d rows in one transaction, verified: row counts match, and every account's balance is the sum of its ledger entries\n",
		stats.Total())
	if stats.Active > 0 {
		fmt.Fprintf(stdout, "%d active tasks (queued, submitting or running) will be taken up by workers on the destination\n", stats.Active)
	}
	if stats.Leased > 0 {
		fmt.Fprintf(stdout, "warning: %d tasks were held by a worker on the source during the copy: stop every gengate process on the source "+
			"(whatever it does from now on is not in the copy), then run migrate-data again into a fresh destination if it changed anything\n",
			stats.Leased)
	}
	if err := carryServerKey(src, dst, stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout, filesReminder(src, dst))
	return nil
}

// carryServerKey copies the source's <data>/webhook.key into a SQLite
// destination directory that has none: the copied rows are sealed under
// it (docs/server-key.md). Elsewhere (PostgreSQL, or a key given by
// --webhook-key) migrate-data says to give the key, and a process started
// without it stops at start.
func carryServerKey(src, dst migrateEnd, stdout io.Writer) error {
	if src.postgres || dst.postgres {
		return nil
	}
	from, to := filepath.Join(src.dir, webhookKeyFile), filepath.Join(dst.dir, webhookKeyFile)
	key, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the source's processes were given --webhook-key
	}
	if err != nil {
		return fmt.Errorf("server key: %w", err)
	}
	if _, err := os.Stat(to); err == nil {
		fmt.Fprintf(stdout, "server key: %s exists already and was left as it is; it must be the same as %s\n", to, from)
		return nil
	}
	if err := os.WriteFile(to, key, 0o600); err != nil {
		return fmt.Errorf("server key: %w", err)
	}
	fmt.Fprintf(stdout, "server key: copied %s to %s (0600): the copied rows are sealed under it\n", from, to)
	return nil
}

func printCounts(w io.Writer, stats sqlstore.CopyStats) {
	fmt.Fprintf(w, "%-12s %8s\n", "TABLE", "ROWS")
	for _, t := range stats.Tables {
		fmt.Fprintf(w, "%-12s %8d\n", t.Table, t.Rows)
	}
}

// filesReminder says where the output files are, since migrate-data copies
// no blobs.
func filesReminder(src, dst migrateEnd) string {
	old := "under the old processes' --storage (default: their --data directory's files/)"
	if !src.postgres {
		old = "in " + filepath.Join(src.dir, "files") + " (unless the old server ran with --storage)"
	}
	dest := "the new processes' --storage (default: their --data directory's files/)"
	if !dst.postgres {
		dest = filepath.Join(dst.dir, "files") + " (or the new server's --storage)"
	}
	return "Output files were NOT copied (migrate-data copies database rows only). They are " + old + ".\n" +
		"Move them to " + dest + ", or start the new processes with --storage pointing at the same place; " +
		"until then the creations' URLs find no file.\n" +
		"Give the new processes the old server key (--webhook-key, or a copy of the old <data>/webhook.key): " +
		"file URL tokens and webhook secrets are sealed under it."
}
