// Package sqlstore implements gengate.Store on SQLite (the default: one file
// under --data, pure Go, WAL, one writer connection) and on PostgreSQL (for
// many API and worker processes). Both share one schema shape, one set of
// statements with $N placeholders, and one test suite; the few differences
// (SKIP LOCKED, LISTEN/NOTIFY, identity columns) are in dialect.
//
// The task row is also the queue item: workers claim due tasks with a
// leased, conditional UPDATE, so a task and its place in the queue can
// never disagree. docs/architecture.md says why this is not River.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gengate/gengate"
)

//go:embed migrations
var migrations embed.FS

// DB is a gengate.Store on SQLite or PostgreSQL.
type DB struct {
	db       *sql.DB
	read     *sql.DB       // SQLite: a pool of read-only WAL readers; nil on PostgreSQL
	w        *groupWriter  // SQLite: the one writer, which commits writes in batches (groupcommit.go)
	ckpt     *checkpointer // SQLite: the WAL checkpoints off the writer (checkpoint.go)
	postgres bool
	url      string
	connWait time.Duration      // PostgreSQL: longest a request waits for a connection (connbudget.go)
	create   *pgCreator         // PostgreSQL: gathers task creations into batches (pgcreate.go)
	steps    *pgStepSaver       // PostgreSQL: gathers step records into batches (stepbatch.go)
	finishes *pgFinishSaver     // PostgreSQL: gathers finishes into batches (finishbatch.go)
	work     *workNotifier      // PostgreSQL: wakes the workers after a commit (pgnotify.go)
	files    *gengate.SecretBox // seals file URL tokens (filetokens.go)
	// maxEndpointEvents bounds the events an endpoint keeps (webhooks.go).
	maxEndpointEvents int
	// listenFailures counts Listen's failures; listenEvery, when set (by
	// tests), replaces listenCheck.
	listenFailures atomic.Int64
	listenEvery    time.Duration
	// resealBatch and resealFault, when set (by tests), replace the rows
	// per batch of the sealed records' walks and fail a batch before it is
	// written (serverkey.go).
	resealBatch int
	resealFault func() error
}

var (
	_ gengate.Store = (*DB)(nil)

	_ gengate.StepClaimer   = (*DB)(nil)
	_ gengate.LeasedCreator = (*DB)(nil)
	_ gengate.ProgressStore = (*DB)(nil)
)

// IsPostgres reports whether a --database value names PostgreSQL.
func IsPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Open opens the database and brings its schema up to date. url is a
// postgres:// URL, or empty for SQLite in dataDir/gengate.db.
func Open(ctx context.Context, url, dataDir string, opts ...Option) (*DB, error) {
	o := options{postgresConns: DefaultPostgresConns, sqliteBatch: DefaultSQLiteBatch, connWait: DefaultConnWait, walMB: DefaultSQLiteWALMB,
		batchWait: DefaultBatchWait, sqliteWait: DefaultSQLiteBatchWait,
		maxEndpointEvents: gengate.DefaultMaxWebhookEventsPerEndpoint, batchTimeout: DefaultBatchTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	s := &DB{postgres: IsPostgres(url), url: url, connWait: o.connWait, files: o.fileBox, maxEndpointEvents: o.maxEndpointEvents}
	var err error
	if s.files == nil {
		if s.files, err = processBox(); err != nil {
			return nil, err
		}
	}
	dbFile := "" // the SQLite file in dataDir, whose modes Open sets
	dsn := ""    // SQLite's
	if s.postgres {
		s.db, err = sql.Open("pgx", url)
		if err == nil {
			s.db.SetMaxOpenConns(o.postgresConns)
			s.db.SetMaxIdleConns(o.postgresConns)
		}
	} else {
		if url == "" && o.existing {
			if err := checkSQLiteExists(dataDir); err != nil {
				return nil, err
			}
		}
		if url == "" {
			if err := secureDir(dataDir); err != nil { // the database is the operator's alone
				return nil, err
			}
			url = filepath.Join(dataDir, "gengate.db")
			dbFile = url
			if err := secureDBFiles(dbFile); err != nil {
				return nil, err
			}
		}
		// busy_timeout first, so that every later pragma already waits for
		// a lock held by another process (a CLI command, say). Write
		// transactions take the lock at BEGIN (_txlock=immediate), so two
		// writers never deadlock upgrading a read lock. synchronous(FULL)
		// makes every commit durable: money lives here.
		dsn = "file:" + url + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"
		// The writer never checkpoints on its own: the checkpointer does,
		// off the writer (checkpoint.go); after the WAL starts over, its
		// file is cut back to the limit. Its temporary files are in
		// memory: each write of a batch runs in a SAVEPOINT, whose
		// statement journal (the pages as they were before the write, to
		// roll back to) was otherwise a temporary file opened and written
		// for every write. The journal only serves ROLLBACK TO within the
		// open transaction; a crash is recovered from the WAL, as before.
		s.db, err = openSQLite(dsn + "&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(memory)" +
			fmt.Sprintf("&_pragma=journal_size_limit(%d)", int64(o.walMB)<<20))
		if err == nil {
			s.db.SetMaxOpenConns(1) // one writer; SQLite serializes writes anyway
			// Reads go to their own connections: in WAL mode a reader sees
			// every transaction committed before it began and never waits
			// for the writer, nor the writer for it.
			s.read, err = openSQLite(dsn + "&_pragma=query_only(1)")
			if err == nil {
				s.read.SetMaxOpenConns(ReadConns)
				s.read.SetMaxIdleConns(ReadConns)
			}
		}
	}
	if err != nil {
		if s.db != nil {
			s.Close()
		}
		return nil, err
	}
	if err := s.db.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	if s.postgres && o.existing {
		if err := checkPostgresSchema(ctx, s.db, url); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.migrate(ctx, o.log); err != nil {
		s.Close()
		return nil, err
	}
	if dbFile != "" {
		// The WAL and shared-memory files exist now.
		if err := secureDBFiles(dbFile); err != nil {
			s.Close()
			return nil, err
		}
	}
	if !s.postgres {
		if o.noCheckpoints {
			// s.ckpt stays nil: the writer commits and never checkpoints.
		} else if err := s.startCheckpointer(ctx, dsn, o.walMB); err != nil {
			s.Close()
			return nil, err
		}
		s.w = newGroupWriter(s.db, o.sqliteBatch, o.sqliteWait, o.batchTimeout, s.ckpt)
	} else {
		s.work = newWorkNotifier(s.db, o.batchTimeout)
		s.create = newPGCreator(s.db, o.batchWait, o.batchTimeout, s.work.wake)
		s.steps = newPGStepSaver(s.db, o.batchWait, o.batchTimeout)
		s.finishes = newPGFinishSaver(s.db, o.batchWait, o.batchTimeout)
	}
	if err := s.normalizeEmails(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if o.fileBox != nil { // only under the server's key: a tool's own key would lose them
		var err error
		if !o.noKeyCheck {
			err = s.checkServerKey(ctx)
		}
		if err == nil {
			err = s.sealFileTokens(ctx)
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// startCheckpointer opens the checkpointer's connection and starts it.
func (s *DB) startCheckpointer(ctx context.Context, dsn string, walMB int) error {
	var pageSize int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return err
	}
	db, err := openSQLite(dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	s.ckpt = newCheckpointer(db, (int64(walMB)<<20)/max(pageSize, 512))
	return nil
}

// openSQLite opens a pool of SQLite connections that keep their
// statements prepared (stmtcache.go).
func openSQLite(dsn string) (*sql.DB, error) {
	c, err := newCachingConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// DefaultPostgresConns is the default size of a process's PostgreSQL pool
// (serve --db-conns). A process also holds one connection for LISTEN, and
// one more while it runs a cluster-wide job (Exclusive).
const DefaultPostgresConns = 10

type options struct {
	postgresConns, sqliteBatch int
	walMB                      int                // SQLite: checkpoint.go
	noCheckpoints              bool               // SQLite: checkpoint.go, WithCheckpointsByOther
	connWait                   time.Duration      // connbudget.go
	batchWait                  time.Duration      // PostgreSQL: pgcreate.go
	sqliteWait                 time.Duration      // SQLite: groupcommit.go
	fileBox                    *gengate.SecretBox // filetokens.go
	log                        *slog.Logger       // schema.go
	existing                   bool               // existing.go
	maxEndpointEvents          int                // webhooks.go
	batchTimeout               time.Duration      // groupcommit.go, pgcreate.go, pgnotify.go
	noKeyCheck                 bool               // serverkey.go
}

// DefaultBatchTimeout is the default of serve --db-batch-timeout: the
// longest one shared batch may take (the SQLite writer's batch, a batch
// of task creations on PostgreSQL, a work notification) before it is
// given up and its callers answered with an error. Batches take
// milliseconds; this bounds one stuck on a connection that stopped
// answering, which would otherwise hold every write behind it, and
// shutdown.
const DefaultBatchTimeout = 30 * time.Second

// WithBatchTimeout sets the longest one shared batch may take (at least
// 1ms; DefaultBatchTimeout when not set).
func WithBatchTimeout(d time.Duration) Option {
	return func(o *options) { o.batchTimeout = max(d, time.Millisecond) }
}

// Option changes how Open opens the database.
type Option func(*options)

// WithPostgresConns sets the most connections the process opens to
// PostgreSQL at once (at least 1); requests beyond it wait for one to be
// free. It does not apply to SQLite (one writer, ReadConns readers).
func WithPostgresConns(n int) Option {
	return func(o *options) { o.postgresConns = max(n, 1) }
}

// ReadConns is the size of the pool of SQLite read connections.
const ReadConns = 4

// reader is where reads go: the read pool on SQLite, the one pool on
// PostgreSQL.
func (s *DB) reader() *sql.DB {
	if s.read != nil {
		return s.read
	}
	return s.db
}

// Close closes the database, once the writes already sent are committed.
func (s *DB) Close() error {
	if s.w != nil {
		s.w.close()
	}
	if s.ckpt != nil {
		s.ckpt.close()
	}
	if s.work != nil {
		s.work.close()
	}
	if s.read != nil {
		s.read.Close()
	}
	return s.db.Close()
}

// SQL returns the underlying database, for tests and operator tools.
func (s *DB) SQL() *sql.DB { return s.db }

// Postgres reports whether the store is on PostgreSQL.
func (s *DB) Postgres() bool { return s.postgres }

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// tx runs fn in a transaction, committed when fn returns nil; when fn
// returns an error, nothing it did is kept. On SQLite fn is one write of
// the writer's next batch (groupcommit.go): it runs inside a savepoint of
// the batch's transaction, with a context that is never cancelled, and tx
// returns once the batch has committed. fn must do its statements on the
// ctx it is given, not on one it captured.
func (s *DB) tx(ctx context.Context, fn writeFunc) error {
	if s.w != nil {
		return s.w.do(ctx, fn)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// dbtx is what a statement runs on: the pool, or a transaction.
type dbtx interface {
	querier
	execer
}

// write runs fn, a write of one statement: on SQLite in the writer's next
// batch (like tx), on PostgreSQL on the pool, in its own transaction.
func (s *DB) write(ctx context.Context, fn func(ctx context.Context, q dbtx) error) error {
	if s.w != nil {
		return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, tx) })
	}
	return fn(ctx, s.db)
}

// notify sends a PostgreSQL notification when the transaction commits, so
// that waiting requests and idle workers in other processes hear of it.
func (s *DB) notify(ctx context.Context, tx *sql.Tx, channel, payload string) error {
	if !s.postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", channel, payload)
	return err
}

// Notification channels.
const (
	ChannelTask = "gengate_task" // payload: task id; a task changed
	ChannelWork = "gengate_work" // payload: task id; work is due
)

// Listen calls fn for each notification on PostgreSQL until ctx ends,
// reconnecting after errors. Each failure (a connection, a LISTEN or a
// wait that failed, or a connection that stopped answering) is logged on
// log and counted (ListenFailures): while no one listens, waiting requests
// and idle workers fall back to their rechecks. On SQLite, which has no
// notifications, it returns at once.
func (s *DB) Listen(ctx context.Context, log *slog.Logger, fn func(channel, payload string)) error {
	if !s.postgres {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return nil
		}
		// Logged before it is counted: whoever sees the count has the
		// line in the log.
		log.Error("listening for PostgreSQL notifications failed; waits fall back to their rechecks until it is back",
			"err", err, "failures", s.listenFailures.Load()+1)
		s.listenFailures.Add(1)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

// ListenFailures returns how many times listening for notifications
// failed since the store was opened (/metrics:
// gengate_postgres_listen_failures_total).
func (s *DB) ListenFailures() int64 { return s.listenFailures.Load() }

// listenCheck is how long a listening connection may go without a
// notification before it is asked to answer (within listenDeadline): a
// connection that broke without a word (a peer gone, a network path cut)
// is found and replaced, not waited on for ever.
const (
	listenCheck    = 30 * time.Second
	listenDeadline = 10 * time.Second
)

func (s *DB) listenOnce(ctx context.Context, fn func(channel, payload string)) error {
	dctx, cancel := context.WithTimeout(ctx, listenDeadline)
	conn, err := pgx.Connect(dctx, s.url)
	cancel()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), listenDeadline)
		defer cancel()
		conn.Close(cctx)
	}()
	for _, ch := range []string{ChannelTask, ChannelWork} {
		dctx, cancel := context.WithTimeout(ctx, listenDeadline)
		_, err := conn.Exec(dctx, "LISTEN "+ch)
		cancel()
		if err != nil {
			return fmt.Errorf("LISTEN %s: %w", ch, err)
		}
	}
	// Something may have happened while no one listened.
	fn(ChannelWork, "")
	for {
		wctx, cancel := context.WithTimeout(ctx, s.listenCheck())
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil || wctx.Err() == nil { // ended, or a failure of its own
				return fmt.Errorf("wait for notifications: %w", err)
			}
			// Quiet for a while: is the connection still there?
			dctx, cancel := context.WithTimeout(ctx, min(listenDeadline, s.listenCheck()))
			err = conn.Ping(dctx)
			cancel()
			if err != nil {
				return fmt.Errorf("listening connection does not answer: %w", err)
			}
			continue
		}
		fn(n.Channel, n.Payload)
	}
}

func (s *DB) listenCheck() time.Duration {
	if s.listenEvery > 0 {
		return s.listenEvery
	}
	return listenCheck
}

// isUnique reports whether err is a unique-constraint violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

func notFound(what, id string) error { return gengate.Errorf(gengate.ENotFound, "no %s %s", what, id) }

// Exclusive runs f if no other process of the cluster is running a job of
// the same name, and reports whether it ran. On PostgreSQL it holds a
// session advisory lock for the duration (released if the process dies,
// with its connection); on SQLite, whose processes share one machine and
// one file, it simply runs f: every job run this way is safe to repeat.
func (s *DB) Exclusive(ctx context.Context, name string, f func(context.Context) error) (bool, error) {
	if !s.postgres {
		return true, f(ctx)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext($1))`, "gengate:"+name).Scan(&got); err != nil {
		return false, err
	}
	if !got {
		return false, nil
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, "gengate:"+name)
	return true, f(ctx)
}
