package sqlstore

// Where a write's time goes on SQLite.
//
// The writer (groupcommit.go) times each write through its stages, so
// that the tail of a request's latency can be taken apart on a running
// server (/metrics, gengate_sqlite_write_seconds) rather than guessed:
//
//   - queue: from the caller's send to the writer taking the write (the
//     writer was busy with earlier batches);
//   - gather: from being taken to the batch's BEGIN (the writer gathering
//     the writes that arrive together, --sqlite-batch-wait);
//   - exec: the batch's statements, from BEGIN to COMMIT;
//   - commit: the COMMIT itself: the WAL frames written and, with
//     synchronous=FULL, the fsync;
//   - total: from the send to the caller having its answer (the four
//     above, and the wake of the caller's goroutine).
//
// The counts are a few atomic additions per write; they cost nothing a
// request would notice. docs/notes/sqlite-writer.md ("What a submit's time is made of")
// reads them.

import (
	"math"
	"sync/atomic"
	"time"
)

// Write stages, in the order a write goes through them.
const (
	StageQueue = iota
	StageGather
	StageExec
	StageCommit
	StageTotal
	numStages
)

// StageNames name the stages, by index.
var StageNames = [numStages]string{"queue", "gather", "exec", "commit", "total"}

// StageBounds are the upper bounds of the histograms' buckets (the last
// bucket, past them, is unbounded): from 50µs up by a factor of √2 to
// about 0.4 s (…, 6.4 ms, 9.05 ms, 12.8 ms, …: fine enough to tell a p99
// under 10 ms from one over).
var StageBounds = func() []time.Duration {
	b := make([]time.Duration, numBounds)
	for i := range b {
		b[i] = (time.Duration(float64(50*time.Microsecond) * math.Pow(math.Sqrt2, float64(i)))).Round(time.Microsecond)
	}
	return b
}()

const numBounds = 27

// histogram counts durations in the buckets of StageBounds.
type histogram struct {
	counts [numBounds + 1]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

func (h *histogram) observe(d time.Duration) {
	i := 0
	for i < len(StageBounds) && d > StageBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

// writeStages are the writer's histograms.
type writeStages struct {
	stages [numStages]histogram
}

// StageHistogram is one stage's histogram: Counts[i] writes took at most
// StageBounds[i] (and more than the bound before); the last count is of
// those that took longer than every bound.
type StageHistogram struct {
	Stage  string
	Counts []uint64
	Sum    time.Duration
}

// WriteStages returns the SQLite writer's stage histograms since Open (nil
// on PostgreSQL); its batches are WriterWork's.
func (s *DB) WriteStages() (stages []StageHistogram) {
	if s.w == nil {
		return nil
	}
	for i := range s.w.stages.stages {
		h := &s.w.stages.stages[i]
		sh := StageHistogram{Stage: StageNames[i], Counts: make([]uint64, len(h.counts)), Sum: time.Duration(h.sum.Load())}
		for j := range h.counts {
			sh.Counts[j] = h.counts[j].Load()
		}
		stages = append(stages, sh)
	}
	return stages
}
