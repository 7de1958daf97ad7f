package sqlstore

// WAL checkpoints off the writer.
//
// In WAL mode every commit appends pages to gengate.db-wal; a checkpoint
// copies them back into gengate.db (and syncs it), after which the WAL can
// start over from its beginning. By default SQLite checkpoints on the
// connection that commits, once the WAL holds 1,000 pages: on the one
// writer, between two batches, with every write waiting. Worse, while a
// reader holds an older snapshot the checkpoint cannot finish, the WAL
// cannot start over, and then every later commit checkpoints again: the
// rounds of "gengate bench submit" fell from 2,552 to 1,824 submits/s as
// the WAL grew, and the writer's p99 followed the checkpoints.
//
// So the writer's connection has wal_autocheckpoint off, and a
// checkpointer with a connection of its own runs PASSIVE checkpoints
// (which never wait for, nor block, a reader or the writer) at most every
// checkpointPause while writes are committed. A checkpoint that runs while
// the writer commits can never finish the WAL, though (the writer appends
// behind it), so once the WAL holds more than the limit (--sqlite-wal-mb)
// the writer itself runs one more PASSIVE checkpoint between two batches:
// the checkpointer has copied nearly everything already, this one copies
// the last pages, and the next batch starts the WAL over (and
// journal_size_limit truncates its file to the limit). Durability is
// unchanged: commits stay synchronous=FULL, and a checkpoint only copies
// pages that are already durable in the WAL.

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSQLiteWALMB is the default size of the WAL, in MiB, past which
// the writer finishes a checkpoint itself so that the WAL starts over
// (serve --sqlite-wal-mb).
const DefaultSQLiteWALMB = 64

// checkpointPause is the least time between two of the checkpointer's
// checkpoints.
const checkpointPause = 100 * time.Millisecond

// WithSQLiteWALMB sets the WAL size, in MiB, past which the SQLite writer
// finishes a checkpoint between two batches (at least 1). It does not
// apply to PostgreSQL.
func WithSQLiteWALMB(mb int) Option {
	return func(o *options) { o.walMB = max(mb, 1) }
}

// WithCheckpointsByOther leaves the WAL's checkpoints to another part of
// the process: the checkpointer is not started and the writer never
// checkpoints (its connection has wal_autocheckpoint off either way).
// serve --replicate gives them to Litestream, which must see every WAL
// frame before a checkpoint lets the WAL start over; its own checkpoints
// copy the WAL up to the end first (internal/replicate). It does not
// apply to PostgreSQL.
func WithCheckpointsByOther() Option {
	return func(o *options) { o.noCheckpoints = true }
}

// checkpointer runs the background checkpoints of a SQLite store.
type checkpointer struct {
	db         *sql.DB // its own connection
	limitPages int64   // the WAL size past which the writer finishes a checkpoint, in pages
	kick       chan struct{}
	quit       chan struct{}
	ended      chan struct{}
	finish     atomic.Bool // the writer should run a checkpoint between two batches
	closeOnce  sync.Once

	// Counts, for tests and the benchmark's reading.
	runs, writerRuns, lastWAL atomic.Int64
}

func newCheckpointer(db *sql.DB, limitPages int64) *checkpointer {
	c := &checkpointer{db: db, limitPages: limitPages, kick: make(chan struct{}, 1),
		quit: make(chan struct{}), ended: make(chan struct{})}
	go c.run()
	return c
}

// committed tells the checkpointer that the writer committed; it never
// waits.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.ended)
	for {
		select {
		case <-c.quit:
			return
		case <-c.kick:
		}
		if wal, _, err := checkpoint(c.db); err == nil {
			c.runs.Add(1)
			c.lastWAL.Store(wal)
			if wal >= c.limitPages {
				c.finish.Store(true)
			}
		}
		select {
		case <-c.quit:
			return
		case <-time.After(checkpointPause):
		}
	}
}

// writerTurn runs on the writer between two batches: when the WAL has
// grown past the limit, a checkpoint that the writer's next batch cannot
// overtake, so that the WAL starts over.
func (c *checkpointer) writerTurn(writer *sql.DB) {
	if !c.finish.Swap(false) {
		return
	}
	if wal, _, err := checkpoint(writer); err == nil {
		c.writerRuns.Add(1)
		c.lastWAL.Store(wal)
	}
}

// close stops the checkpointer; closing again does nothing (DB.Close may
// be called more than once).
func (c *checkpointer) close() {
	c.closeOnce.Do(func() {
		close(c.quit)
		<-c.ended
		c.db.Close()
	})
}

// checkpoint runs a PASSIVE checkpoint on db and returns the pages in the
// WAL and the pages copied back into the database.
func checkpoint(db *sql.DB) (wal, copied int64, err error) {
	var busy int64
	err = db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &wal, &copied)
	return wal, copied, err
}
