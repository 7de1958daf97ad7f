package gengate

import (
	"context"
	"strings"
	"sync/atomic"
)

// A claim takes a task over when the lease another worker held on it ran
// out before that worker finished its step: the worker was killed, hung,
// or lost the database. The step runs again here, which the task's state
// machine makes safe (a submit whose outcome is unknown is looked for,
// never sent twice), but an operator wants to know: each takeover is
// logged at WARN with the task and the previous owner, and counted
// (gengate_lease_takeovers_total).

// LeaseTakeovers counts the takeovers of this process's claims.
type LeaseTakeovers struct{ n atomic.Int64 }

// Count is the number of takeovers so far.
func (c *LeaseTakeovers) Count() int64 { return c.n.Load() }

// NewLeaseToken is a new claim's lease token for the process owner: the
// Owner of its Service, then a suffix of the claim's own. LeaseOwner reads
// the owner back.
func NewLeaseToken(owner string) string { return owner + ":" + NewID()[:8] }

// LeaseOwner is the process that held a lease token: the Owner of its
// Service (host:pid:id), the token less the claim's own suffix.
func LeaseOwner(token string) string {
	if i := strings.LastIndexByte(token, ':'); i > 0 {
		return token[:i]
	}
	return token
}

// noteTakeovers logs and counts the tasks of a claim that were taken over.
func (s *Service) noteTakeovers(ctx context.Context, tasks []*Task) {
	for _, t := range tasks {
		if t.TakenOver == "" {
			continue
		}
		if s.Takeovers != nil {
			s.Takeovers.n.Add(1)
		}
		s.log().WarnContext(ctx, "lease taken over: the previous worker's lease on this task ran out before its step finished",
			"jobId", t.ID, "status", t.Status, "previousOwner", LeaseOwner(t.TakenOver), "owner", s.Owner, "attempts", t.Attempts)
	}
}
