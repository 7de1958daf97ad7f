package sqlstore_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// BenchmarkCreateTask measures CreateTask (debit, charge, task row) with
// parallel callers on one account.
func BenchmarkCreateTask(b *testing.B) {
	for _, d := range sqltest.Dialects {
		b.Run(d, func(b *testing.B) {
			s := sqltest.Open(b, d)
			a := newAccount(b, s, 1<<40)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.CreateTask(b.Context(), newTask(a.ID, 1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkCreateTaskAccounts spreads the callers over many accounts, so
// that PostgreSQL's row locks do not serialize them.
func BenchmarkCreateTaskAccounts(b *testing.B) {
	for _, d := range sqltest.Dialects {
		b.Run(d, func(b *testing.B) {
			s := sqltest.Open(b, d)
			accounts := make([]*gengate.Account, 64)
			for i := range accounts {
				accounts[i] = newAccount(b, s, 1<<40)
			}
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				a := accounts[int(next.Add(1))%len(accounts)]
				for pb.Next() {
					if _, err := s.CreateTask(b.Context(), newTask(a.ID, 1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkCreateTaskWithKey is BenchmarkCreateTask with the tasks made by
// an API key with a daily spend limit: the limit's check and count are one
// more UPDATE in the transaction.
func BenchmarkCreateTaskWithKey(b *testing.B) {
	for _, d := range sqltest.Dialects {
		b.Run(d, func(b *testing.B) {
			s := sqltest.Open(b, d)
			a := newAccount(b, s, 1<<40)
			_, k := gengate.NewAPIKey(a.ID, "bench", time.Now())
			k.SpendLimit = 1 << 40
			if err := s.CreateAPIKey(b.Context(), k); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t := newTask(a.ID, 1)
					t.KeyID = k.ID
					if _, err := s.CreateTask(b.Context(), t); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkClaimTask measures the claim of a due task with 10 active tasks
// and with 100,000 (99,990 of them waiting on an upstream, not due): the
// claim walks the due-time index, so both cost about the same. The same
// ten due tasks are claimed in turn, each claim's short lease over by the
// next one.
//
//	go test -run x -bench BenchmarkClaimTask ./internal/sqlstore/
func BenchmarkClaimTask(b *testing.B) {
	for _, d := range sqltest.Dialects {
		for _, active := range []int{10, 100_000} {
			b.Run(fmt.Sprintf("%s/active=%d", d, active), func(b *testing.B) {
				s := sqltest.Open(b, d)
				a := newAccount(b, s, 100)
				now := t0.UnixMilli()
				if active > 10 {
					addTasks(b, s, a.ID, "wait", "running", now+int64(time.Hour/time.Millisecond), active-10)
				}
				addTasks(b, s, a.ID, "due", "queued", now-1000, 10)
				if s.Postgres() {
					if _, err := s.SQL().Exec(`ANALYZE`); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for i := range b.N {
					c, err := s.ClaimTask(b.Context(), "", "w", t0.Add(time.Duration(i)*2*time.Millisecond), time.Millisecond)
					if err != nil || c == nil {
						b.Fatalf("ClaimTask = %v, %v", c, err)
					}
				}
			})
		}
	}
}

// BenchmarkCreateTask16 is BenchmarkCreateTask with 16 concurrent callers
// whatever the number of CPUs (the clients of `gengate bench submit`): on
// SQLite their writes share batches (group commit).
func BenchmarkCreateTask16(b *testing.B) {
	for _, d := range sqltest.Dialects {
		b.Run(d, func(b *testing.B) {
			s := sqltest.Open(b, d)
			a := newAccount(b, s, 1<<40)
			b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.CreateTask(b.Context(), newTask(a.ID, 1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
			if batches, items := s.CreateBatches(); batches > 0 {
				b.ReportMetric(float64(items)/float64(batches), "tasks/batch")
			}
		})
	}
}

// BenchmarkFinishTask16 finishes claimed tasks, each with one output and
// its upstream cost, from 16 concurrent callers (a busy server's
// workers): on SQLite their finishes share the writer's batches and are
// written together (finishbatch.go). The tasks are created and claimed
// before the timer starts.
func BenchmarkFinishTask16(b *testing.B) {
	for _, d := range sqltest.Dialects {
		b.Run(d, func(b *testing.B) {
			ctx := b.Context()
			s := sqltest.Open(b, d)
			a := newAccount(b, s, 1<<40)
			claims := make(chan *gengate.Task, b.N)
			for range b.N {
				task := newTask(a.ID, 1)
				task.LeaseToken, task.LeaseUntil = gengate.NewToken(), t0.Add(time.Hour) // created claimed (gengate.Handoff)
				if _, err := s.CreateTask(ctx, task); err != nil {
					b.Fatal(err)
				}
				task.Status, task.UpdatedAt, task.CompletedAt = gengate.StatusSucceeded, t0, t0
				task.UpstreamCost = &gengate.UpstreamCost{Known: true, MicroUSD: 3000, Basis: "bench"}
				task.Outputs = []gengate.Creation{newOutput(task, 0, "0.png", 1, t0)}
				claims <- task
			}
			close(claims)
			b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.FinishTask(ctx, <-claims, 0); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "finishes/s")
		})
	}
}
