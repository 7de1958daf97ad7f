package sqlstore

import "time"

// WriterWork returns the SQLite writer's batches, the writes in them and
// the time it spent running them, COMMIT and its fsync included
// (groupcommit.go); all zero on PostgreSQL, which has no single writer.
// busy over the time elapsed is how saturated the writer is: near 1,
// every write of the process waits for it (gengate_sqlite_writer_busy_seconds_total in
// /metrics, and `gengate bench e2e`).
func (s *DB) WriterWork() (batches, writes int64, busy time.Duration) {
	if s.w == nil {
		return 0, 0, 0
	}
	return s.w.batches.Load(), s.w.writes.Load(), time.Duration(s.w.busy.Load())
}
