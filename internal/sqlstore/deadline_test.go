package sqlstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// stallProxy is a TCP proxy on loopback to PostgreSQL that can stop
// passing bytes on every connection, old and new, without closing any:
// a connection that stopped answering (a peer gone without a word, a
// network path cut), as the client sees it.
type stallProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
	gone   chan struct{} // closed when the test ends: frozen pipes give up
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, gone: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go p.pipe(u, c)
			go p.pipe(c, u)
		}
	}()
	t.Cleanup(func() {
		close(p.gone)
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *stallProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		p.mu.Lock()
		frozen := p.frozen
		p.mu.Unlock()
		if frozen {
			<-p.gone // hold the bytes: the other end waits for ever
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			src.Close()
			return
		}
	}
}

func (p *stallProxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// proxiedPostgres opens a fresh PostgreSQL store whose connections all go
// through a stall proxy.
func proxiedPostgres(t *testing.T, opts ...sqlstore.Option) (*sqlstore.DB, *stallProxy) {
	t.Helper()
	u, err := url.Parse(sqltest.URL(t, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	p := newStallProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	opts = append([]sqlstore.Option{sqlstore.WithFileTokenKey(sqltest.FileTokenKey)}, opts...)
	s, err := sqlstore.Open(context.Background(), u.String(), t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// within fails the test unless fn returns within d, and returns its error.
func within(t *testing.T, what string, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s still waiting after %s", what, d)
		return nil
	}
}

// syncBuffer is a log sink several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)

// TestPostgresBatchDeadline: with every PostgreSQL connection stalled, a
// task creation's batch is given up at --db-batch-timeout (the caller gets
// an error, as for a broken connection), a work notification in flight
// does not hold Close, and Close returns.
func TestPostgresBatchDeadline(t *testing.T) {
	s, p := proxiedPostgres(t, sqlstore.WithBatchTimeout(300*time.Millisecond))
	a := newAccount(t, s, 10)
	mustCreate(t, s, newTask(a.ID, 1)) // the batch path works through the proxy
	p.freeze()
	err := within(t, "a creation on a stalled connection", 20*time.Second, func() error {
		_, err := s.CreateTask(context.Background(), newTask(a.ID, 1))
		return err
	})
	if err == nil {
		t.Fatal("CreateTask on a stalled connection succeeded")
	}
	t.Logf("creation on a stalled connection: %v", err)
	s.WakeWorkers()
	within(t, "Close with a stalled notification", 20*time.Second, s.Close)
}

// TestSQLiteBatchDeadline: a write whose statement does not end (an
// endless recursive query) is interrupted at --db-batch-timeout: its
// caller gets an error, nothing of it is written, and the writer goes on
// with the next batch; Close returns.
func TestSQLiteBatchDeadline(t *testing.T) {
	ctx := context.Background()
	s := sqltest.OpenWith(t, "sqlite", sqlstore.WithBatchTimeout(300*time.Millisecond))
	a := newAccount(t, s, 10)
	err := within(t, "an endless write", 20*time.Second, func() error {
		return s.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 5 WHERE id = $1`, a.ID); err != nil {
				return err
			}
			var n int64
			return tx.QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c`).Scan(&n)
		})
	})
	if err == nil {
		t.Fatal("the endless write succeeded")
	}
	t.Logf("endless write: %v", err)
	if b := balance(t, s, a.ID); b != 10 {
		t.Errorf("balance %d after the interrupted write; want 10 (nothing of it written)", b)
	}
	b := newAccount(t, s, 3) // the writer takes the next batch
	if got := balance(t, s, b.ID); got != 3 {
		t.Errorf("balance %d; want 3", got)
	}
	within(t, "Close", 20*time.Second, s.Close)
}

// TestListenFailuresLogged: when the listening connection stops
// answering, Listen finds it at its next check, logs the failure and
// counts it (ListenFailures), and keeps trying.
func TestListenFailuresLogged(t *testing.T) {
	s, p := proxiedPostgres(t)
	t.Cleanup(func() { s.Close() })
	s.SetListenCheck(200 * time.Millisecond)
	var logged syncBuffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Listen(ctx, log, func(string, string) {
			select {
			case heard <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	within(t, "the first listen", 20*time.Second, func() error { <-heard; return nil })
	if n := s.ListenFailures(); n != 0 {
		t.Fatalf("%d failures while listening worked", n)
	}
	p.freeze()
	within(t, "the stalled listen counted", 20*time.Second, func() error {
		for s.ListenFailures() == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	})
	if !strings.Contains(logged.String(), "listening for PostgreSQL notifications failed") {
		t.Errorf("the failure is not in the log: %q", logged.String())
	}
}
