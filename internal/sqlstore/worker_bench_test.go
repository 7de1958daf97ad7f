package sqlstore_test

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// BenchmarkWorkerWrites measures the store's writes on a task's way
// through the workers, as `gengate bench e2e` makes them: the claim that
// checkpoints the submit, the submit's result (running, released due at
// once), the claim of the poll, and the finish with one creation. 16
// goroutines share the claims like the step slots of one process; the
// tasks are created before the clock starts. It reports the process's CPU
// per task (cpu-ms/task) beside the wall time, and on SQLite the writer's
// time per task (COMMIT included), writes and commits per task.
//
//	go test -run x -bench WorkerWrites -benchtime 4000x ./internal/sqlstore/
func BenchmarkWorkerWrites(b *testing.B) {
	for _, d := range sqltest.Dialects {
		b.Run(d, func(b *testing.B) {
			ctx := b.Context()
			s := sqltest.Open(b, d)
			a := newAccount(b, s, 1<<40)
			var made sync.WaitGroup
			var next atomic.Int64
			for range 16 {
				made.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if _, err := s.CreateTask(ctx, newTask(a.ID, 1)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			made.Wait()
			var finished atomic.Int64
			var before syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			batches0, jobs0, busy0 := s.WriterWork()
			written0 := bytesWritten(b)
			b.ResetTimer()
			var slots sync.WaitGroup
			for g := range 16 {
				slots.Go(func() {
					owner := "w" + string(rune('a'+g))
					for finished.Load() < int64(b.N) {
						now := time.Now()
						claimed, err := s.ClaimSteps(ctx, owner, now, time.Minute, 4)
						if err != nil {
							b.Error(err)
							return
						}
						if len(claimed) == 0 {
							time.Sleep(100 * time.Microsecond)
							continue
						}
						for _, t := range claimed {
							now := time.Now()
							t.UpdatedAt = now
							if t.Status == gengate.StatusQueued { // the submit's result
								t.Status, t.UpstreamID, t.RunAt = gengate.StatusRunning, "up-"+t.ID, now
								err = s.SaveStep(ctx, t, true)
							} else { // the poll found the outputs
								t.Status, t.CompletedAt = gengate.StatusSucceeded, now
								t.Outputs = []gengate.Creation{{ID: gengate.NewCreationID(now), AccountID: t.AccountID, TaskID: t.ID,
									Key: "outputs/" + t.ID[len(t.ID)-2:] + "/" + t.ID + "-0.png", Token: gengate.NewFileToken(now),
									ContentType: "image/png", Ext: "png", Size: 100, CreatedAt: now}}
								if err = s.FinishTask(ctx, t, 0); err == nil {
									finished.Add(1)
								}
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					}
				})
			}
			slots.Wait()
			b.StopTimer()
			var after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(syscall.TimevalToNsec(after.Utime) - syscall.TimevalToNsec(before.Utime) +
				syscall.TimevalToNsec(after.Stime) - syscall.TimevalToNsec(before.Stime))
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/task")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
			b.ReportMetric(float64(bytesWritten(b)-written0)/1024/float64(b.N), "written-KiB/task")
			if batches, jobs, busy := s.WriterWork(); batches > batches0 {
				b.ReportMetric(float64(busy-busy0)/float64(time.Millisecond)/float64(b.N), "writer-ms/task")
				b.ReportMetric(float64(jobs-jobs0)/float64(b.N), "writes/task")
				b.ReportMetric(float64(batches-batches0)/float64(b.N), "commits/task")
			}
		})
	}
}

// bytesWritten is what the process has written with write system calls
// so far (wchar of /proc/self/io: on SQLite the WAL's frames, and the
// checkpoints' copies into the database), or 0 where there is no such
// file.
func bytesWritten(tb testing.TB) int64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
