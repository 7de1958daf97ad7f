package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// workNotifier tells every process's workers, on PostgreSQL, that work may
// be due, after the write that made it due has committed, and without a
// notification per task.
//
// A NOTIFY sent inside a write's transaction costs more than its round
// trip: PostgreSQL serializes the commits of notifying transactions on one
// lock held until the commit is on disk, so every creation or released
// step that notified waited for the previous one's flush, and PostgreSQL's
// own group commit could not gather them. So writes that only mean "work
// is due" (a task created, a step released) wake the notifier instead,
// once their transaction committed; it sends one pg_notify, from a
// transaction that writes nothing (no flush), for every burst of wakes:
// while one is being sent, further wakes are folded into the next. Workers
// also look for due work on a timer, so a lost wake (the process died
// between the commit and the notification) delays a step by at most the
// poll interval; it never loses it. A notification takes at most timeout
// (--db-batch-timeout): one that hangs on a connection that stopped
// answering is given up (a lost wake), and close ends the one in flight
// at once, so neither the next wakes nor shutdown wait on it.
type workNotifier struct {
	db      *sql.DB
	timeout time.Duration
	wakes   chan struct{} // one pending wake at most
	quit    chan struct{}
	ended   chan struct{}
	stop    sync.Once
	failed  atomic.Int64 // notifications that failed or timed out
}

func newWorkNotifier(db *sql.DB, timeout time.Duration) *workNotifier {
	n := &workNotifier{db: db, timeout: timeout, wakes: make(chan struct{}, 1), quit: make(chan struct{}), ended: make(chan struct{})}
	go n.run()
	return n
}

// wake asks for a notification; it never blocks.
func (n *workNotifier) wake() {
	select {
	case n.wakes <- struct{}{}:
	default: // one is pending already: it covers this write too
	}
}

func (n *workNotifier) run() {
	defer close(n.ended)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // close ends the notification in flight
		select {
		case <-n.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-n.quit:
			return
		case <-n.wakes:
		}
		// Errors are left to the workers' timer.
		nctx, done := context.WithTimeout(ctx, n.timeout)
		if _, err := n.db.ExecContext(nctx, `SELECT pg_notify($1, '')`, ChannelWork); err != nil {
			n.failed.Add(1)
		}
		done()
	}
}

// close stops the notifier; wakes after it are dropped. It may be called
// more than once.
func (n *workNotifier) close() {
	n.stop.Do(func() { close(n.quit) })
	<-n.ended
}
