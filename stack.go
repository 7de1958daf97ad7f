package gengate

// OnOwnStack runs f on a goroutine of its own and returns when f has.
//
// Database calls (SQLite is C translated to Go, with deep frames) grow the
// stack of the goroutine that makes them, and a goroutine keeps its grown
// stack until a garbage collection shrinks it. A synchronous generate call
// sleeps for minutes on its connection's goroutine: running its database
// work through OnOwnStack leaves that goroutine with the small stack of the
// HTTP handler chain, while the large stacks belong to short-lived
// goroutines whose memory is reused at once (docs/notes/waiters.md). The hop costs about a microsecond, against a millisecond of
// database work. A panic in f is raised again in the caller, where
// net/http's recovery of a handler's panic applies as before.
func OnOwnStack(f func()) {
	var panicked any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		f()
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
}
