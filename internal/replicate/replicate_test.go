package replicate

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob/s3test"
	"github.com/gengate/gengate/internal/sqlstore"
)

// TestLitestreamOwnsCheckpoints runs gengate's SQLite store with its
// checkpointer off (sqlstore.WithCheckpointsByOther), as serve
// --replicate does, under a stream of ledger writes while Litestream
// replicates it to versitygw: Litestream's checkpoints keep the WAL
// bounded (it starts over again and again, its file never far past the
// threshold), and a restore of the replica holds every write.
func TestLitestreamOwnsCheckpoints(t *testing.T) {
	ctx := context.Background()
	s3 := s3test.Start(t)
	target, err := ParseURL(s3.Spec("ckpt"), s3.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := sqlstore.Open(ctx, "", dir, sqlstore.WithSQLiteWALMB(1), sqlstore.WithCheckpointsByOther())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Start(ctx, Config{Target: target, DBPath: filepath.Join(dir, DBFile), Interval: 50 * time.Millisecond, WALMB: 1,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	acct := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: time.Now()}
	if err := store.CreateAccount(ctx, acct, 0); err != nil {
		t.Fatal(err)
	}

	// Writers go on until the WAL has started over (its file shrank, or
	// a new header) a few times, or 20,000 writes (about 80 MB of WAL,
	// were it never checkpointed).
	note := strings.Repeat("n", 1000)
	walFile := filepath.Join(dir, DBFile+"-wal")
	var writes, restarts, maxWAL, lastSalt atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for restarts.Load() < 3 && writes.Add(1) <= 20000 {
				if _, err := store.Grant(ctx, acct.ID, 1, note, time.Now()); err != nil {
					t.Error(err)
					return
				}
				if fi, err := os.Stat(walFile); err == nil && fi.Size() > maxWAL.Load() {
					maxWAL.Store(fi.Size())
				}
				if salt := walSalt(walFile); salt != 0 && lastSalt.Swap(salt) != salt {
					restarts.Add(1)
				}
			}
		})
	}
	wg.Wait()
	n := min(writes.Load(), 20000)
	t.Logf("%d writes, the WAL started over %d times, largest WAL file %d KB", n, restarts.Load(), maxWAL.Load()>>10)
	if restarts.Load() < 3 {
		t.Fatalf("the WAL never started over in %d writes (largest %d KB): nothing checkpointed it", n, maxWAL.Load()>>10)
	}
	var ledger int
	if err := store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM ledger`).Scan(&ledger); err != nil {
		t.Fatal(err)
	}
	// Wait for the replica to hold every write (a condition, polled).
	began := time.Now()
	deadline := time.Now().Add(2 * time.Minute)
	for s := r.Status(); !s.ReplicatedThrough.After(began); s = r.Status() {
		if s.State == "failing" || time.Now().After(deadline) {
			t.Fatalf("the replica did not catch up: %+v", s)
		}
		<-time.After(10 * time.Millisecond)
	}
	store.Close()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}

	res, err := Restore(ctx, RestoreConfig{Target: target, Data: filepath.Join(t.TempDir(), "restored")})
	if err != nil {
		t.Fatal(err)
	}
	if res.LedgerEntries != ledger {
		t.Fatalf("restored %d ledger entries, the store had %d", res.LedgerEntries, ledger)
	}
}

// walSalt reads the first salt of a WAL's header, which changes each time
// the WAL starts over; 0 when it cannot be read.
func walSalt(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var hdr [32]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0
	}
	return int64(binary.BigEndian.Uint32(hdr[16:]))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
