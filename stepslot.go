package gengate

import "context"

// A worker runs a step in one of its process's step slots (serve
// --workers), which bound how many steps work with upstreams at once. A
// step's last write (the record that releases its lease, or the task's
// final state) then waits for the store: its batch in flight, its own
// batch, the commit. The slot need not wait with it: the lease, not the
// slot, keeps every other worker from the task until that write commits.
// So the worker puts a function in the step's context (WithSlotRelease)
// that the service calls just before the step's last write, and the
// worker's next claim can use the slot while the write waits. The worker
// still bounds the steps whose last write is pending (internal/worker).

type slotReleaseKey struct{}

// WithSlotRelease returns ctx carrying release, which the service calls
// (at most once is up to the caller) just before the last write of the
// step it runs under ctx.
func WithSlotRelease(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, slotReleaseKey{}, release)
}

// ReleaseSlot calls the release function of the step that runs under ctx,
// if its context has one (WithSlotRelease). The service calls it; a
// worker's tests call it in place of the service.
func ReleaseSlot(ctx context.Context) {
	if f, ok := ctx.Value(slotReleaseKey{}).(func()); ok {
		f()
	}
}

// saveLast writes a step's record that releases its lease: the step's
// last write, so its slot is released first.
func (s *Service) saveLast(ctx context.Context, t *Task) error {
	ReleaseSlot(ctx)
	return s.Store.SaveStep(ctx, t, true)
}
