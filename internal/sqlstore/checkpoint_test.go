package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestCheckpointsOffTheWriter: the writer's connection never checkpoints
// on its own (wal_autocheckpoint 0), the checkpointer does on its own
// connection, and under a steady stream of writes the WAL still starts
// over once it has passed --sqlite-wal-mb (the writer finishes a
// checkpoint between two batches), so its file stays near the limit.
func TestCheckpointsOffTheWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, "", dir, WithSQLiteWALMB(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var auto int
	if err := s.SQL().QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("the writer's wal_autocheckpoint is %d (%v), want 0", auto, err)
	}
	acct := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: time.Now()}
	if err := s.CreateAccount(ctx, acct, 0); err != nil {
		t.Fatal(err)
	}
	// 16 writers with a long note each, until the writer has finished
	// two checkpoints (the WAL started over at least twice), or give up
	// after 40,000 writes (about 150 MB of WAL, were it never to start over).
	note := strings.Repeat("n", 1000)
	var writes atomic.Int64
	var wg sync.WaitGroup
	var maxWAL atomic.Int64
	walFile := filepath.Join(dir, "gengate.db-wal")
	for range 16 {
		wg.Go(func() {
			for s.ckpt.writerRuns.Load() < 2 && writes.Add(1) <= 40000 {
				if _, err := s.Grant(ctx, acct.ID, 1, note, time.Now()); err != nil {
					t.Error(err)
					return
				}
				if fi, err := os.Stat(walFile); err == nil && fi.Size() > maxWAL.Load() {
					maxWAL.Store(fi.Size())
				}
			}
		})
	}
	wg.Wait()
	runs, writerRuns := s.ckpt.runs.Load(), s.ckpt.writerRuns.Load()
	t.Logf("%d writes: %d background checkpoints, %d finished by the writer, largest WAL file %d KB",
		min(writes.Load(), 40000), runs, writerRuns, maxWAL.Load()>>10)
	if runs == 0 {
		t.Errorf("no background checkpoint ran")
	}
	if writerRuns < 2 {
		t.Fatalf("the writer finished %d checkpoints in 40,000 writes with a 1 MiB WAL limit", writerRuns)
	}
	if maxWAL.Load() > 16<<20 {
		t.Errorf("the WAL file grew to %d MB with a 1 MiB limit", maxWAL.Load()>>20)
	}
}
