package gengate

import (
	"context"
	"strings"
	"time"
)

// Retention: finished task records and their idempotency keys, expired
// sessions and uploads, and files nobody needs any more are deleted.

// Purge deletes task records and their idempotency keys once Retention has
// passed since they completed. Creations are kept. One process of the
// cluster runs it at a time (Store.Exclusive).
func (s *Service) Purge(ctx context.Context) (int, error) {
	r := s.Retention
	if r == 0 {
		r = DefaultRetention
	}
	n := 0
	_, err := s.Store.Exclusive(ctx, "purge", func(ctx context.Context) error {
		var err error
		if n, err = s.Store.PurgeTasks(ctx, s.now().Add(-r)); err != nil {
			return err
		}
		if err := s.sweepInputs(ctx); err != nil {
			return err
		}
		if err := s.sweepPartialOutputs(ctx); err != nil { // outputs.go
			return err
		}
		if err := s.Store.PurgeSessions(ctx, s.now()); err != nil { // signin.go
			return err
		}
		_, err = s.purgeUploads(ctx)
		return err
	})
	return n, err
}

// sweepInputs deletes input files that no active or reviewed task needs:
// those of a request that crashed between storing its inputs and creating
// its task. Inputs of tasks that finish are deleted as they finish.
func (s *Service) sweepInputs(ctx context.Context) error {
	lister, ok := s.Blobs.(BlobLister)
	if !ok {
		return nil
	}
	// An hour's grace covers requests still between the two steps.
	keys, err := lister.List(ctx, "inputs/", s.now().Add(-time.Hour))
	if err != nil {
		return err
	}
	for _, key := range keys {
		taskID, _, _ := strings.Cut(strings.TrimPrefix(key, "inputs/"), "/")
		t, err := s.Store.FindTask(ctx, taskID)
		if err == nil && !t.Status.Done() {
			continue
		}
		if err != nil && ErrorCode(err) != ENotFound {
			return err
		}
		if err := s.Blobs.Delete(ctx, key); err != nil {
			return err
		}
		s.log().InfoContext(ctx, "deleted orphaned input", "key", key)
	}
	return nil
}
