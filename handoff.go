package gengate

// A new task handed straight to a step slot of this process.
//
// A task is normally created queued; a worker's claim then writes it
// again (leased, and moved to submitting, the checkpoint before its
// submit) and reads it back. When this process has a free step slot and
// its store can write a lease with a new row (LeasedCreator), the task is
// created already in that claimed state instead, and the slot runs its
// first step at once: the same row a claim would have left, one write and
// one read less per task. The 202 still shows the task as created,
// queued: nothing has been sent upstream yet.
//
// The rules of a claimed task hold from the creation's commit on: the
// lease is this process's (Owner), so a crash before the submit leaves a
// task in submitting whose lease runs out, and the next claim treats it
// as any submit cut short (never sent again where the engine cannot take
// a repeated submit). Only a plain task is handed over: no webhook (a
// prediction's start event is written by a claim) and not held for
// review.

// Handoff is this process's step slots, as task creation sees them
// (internal/worker implements it).
type Handoff interface {
	// Reserve holds a free step slot for one task, or reports false.
	Reserve() bool
	// Release gives back a slot Reserve held, unused.
	Release()
	// Start runs the first step of t, created claimed, in the slot
	// Reserve held.
	Start(t *Task)
}

// claimAtCreation reports whether t, about to be created, may be created
// claimed, and then holds a slot for it.
func (s *Service) claimAtCreation(t *Task) bool {
	if s.Handoff == nil || t.Status != StatusQueued || t.WebhookURL != "" {
		return false
	}
	if lc, ok := s.Store.(LeasedCreator); !ok || !lc.CreatesLeased() {
		return false
	}
	return s.Handoff.Reserve()
}

// claimed is t as its creation writes it when it is handed to a slot: in
// submitting under this process's lease, its first claim counted.
func (s *Service) claimed(t *Task) *Task {
	c := *t
	c.Status, c.LeaseToken, c.LeaseUntil, c.Attempts = StatusSubmitting, NewLeaseToken(s.Owner), s.now().Add(s.lease()), 1
	return &c
}

// handOver starts the first step of the task created claimed as stored,
// or gives its slot back when the creation did not make it.
func (s *Service) handOver(stored *Task, made bool) {
	if !made {
		s.Handoff.Release()
		return
	}
	// The task as a claim returns it: its status before the claim, and
	// the checkpoint already written.
	w := *stored
	w.Status, w.Checkpointed = StatusQueued, true
	s.Handoff.Start(&w)
}
