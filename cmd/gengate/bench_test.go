package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// BenchmarkWorkers measures end-to-end throughput of the scale-out shape:
// one API process and 1, 2 or 4 worker processes (--workers 4 each) on one
// PostgreSQL database, the sandbox engine with no delay. An iteration is
// one task: b.N tasks are submitted asynchronously through the API by 16
// concurrent clients, and the clock stops when the database counts b.N
// succeeded tasks. docs/notes/scale-out.md has the numbers.
//
//	go test -run x -bench BenchmarkWorkers -benchtime 400x ./cmd/gengate/
func BenchmarkWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			dbURL := sqltest.URL(b, "postgres")
			data := b.TempDir() // shared by the processes: the sandbox's outputs are local files
			common := []string{"--database", dbURL, "--data", data, "--sandbox-delay", "0"}
			apiProc, err := startChild(b, nil, append(common, "--role", "api", "--addr", "127.0.0.1:0")...)
			if err != nil {
				b.Fatal(err)
			}
			// The first-start account has 1000 credits; a flux image costs 2.
			if err := run(context.Background(), []string{"credits", "grant", "--account", apiProc.account, "--credits", "10000000",
				"--database", dbURL, "--data", b.TempDir()}, noEnv, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
			for range n {
				if _, err := startChild(b, nil, append(common, "--role", "worker", "--workers", "4")...); err != nil {
					b.Fatal(err)
				}
			}
			store, err := sqlstore.Open(context.Background(), dbURL, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			succeeded := func() int {
				var c int
				if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM tasks WHERE status = 'succeeded'`).Scan(&c); err != nil {
					b.Fatal(err)
				}
				return c
			}
			before := succeeded()
			b.ResetTimer()
			start := time.Now()
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Value
			for range 16 {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						body := map[string]any{"type": "image", "modelId": "flux", "prompt": fmt.Sprintf("bench %d", i)}
						r, err := api(apiProc.base, "POST", "/api/v1/generate", apiProc.key, body, map[string]string{"Prefer": "respond-async"})
						if err == nil && r.status != http.StatusAccepted {
							err = fmt.Errorf("status %d: %s", r.status, r.body)
						}
						if err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Minute)
			for succeeded()-before < b.N {
				if time.Now().After(deadline) {
					b.Fatalf("only %d of %d tasks succeeded after 5 minutes", succeeded()-before, b.N)
				}
				time.Sleep(10 * time.Millisecond)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
		})
	}
}
