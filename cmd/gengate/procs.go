package main

// How many threads run Go code at once (GOMAXPROCS).
//
// Go's default is one per processor the process may use. On SQLite that
// leaves the server short: the writer's COMMIT and every stored output end
// in fsync(2), a system call that blocks its thread for a millisecond or
// more, and the Go runtime lends that thread's processor to other
// goroutines only once its monitor notices (it looks less often the
// quieter it has been). Meanwhile the goroutines the writer has just
// answered, and the steps waiting to run, queue behind a processor that
// runs nothing: in a trace of bench e2e they waited 7 ms on average to run
// after their write committed. With twice as many Ps as processors,
// another P runs them at once: bench e2e 548 and 552 → 823 and 734
// tasks/s on a two-core machine, server CPU per task no higher
// (docs/notes/end-to-end.md). On PostgreSQL the fsyncs are the database's
// own, and more Ps only contend with its backends for the same cores
// (bench submit 2,025 and 2,132 → 1,911 and 1,792 submits/s): there the
// default stays.

import (
	"runtime"
	"strconv"

	"github.com/gengate/gengate/internal/sqlstore"
)

// startProcs is Go's GOMAXPROCS when the process started: the processors
// it may use (its CPU quota counted), or the GOMAXPROCS environment
// variable's value.
var startProcs = runtime.GOMAXPROCS(0)

// setProcs sets GOMAXPROCS for serve: --procs when given; else the
// GOMAXPROCS environment variable's, when set (Go's own rule); else twice
// the processors on SQLite and the processors on PostgreSQL. It returns
// the processors the process may use and the GOMAXPROCS it set.
func setProcs(cfg *Config, getenv func(string) string) (cpus, procs int) {
	cpus = startProcs
	env, err := strconv.Atoi(getenv("GOMAXPROCS"))
	switch {
	case cfg.Procs > 0:
		procs = cfg.Procs
	case err == nil && env > 0, sqlstore.IsPostgres(cfg.Database):
		procs = cpus // with the variable set, the runtime read it at start
	default:
		procs = 2 * cpus
	}
	runtime.GOMAXPROCS(procs)
	return cpus, procs
}
