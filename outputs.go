package gengate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Storing outputs. An engine hands over each finished file in memory
// (Output.Data) or as a stream still coming from its upstream
// (Output.Body); streams are copied into storage as they arrive
// (Blobs.PutStream), so a 1 GB video takes a copy buffer of memory, not a
// gigabyte, and the size limit is enforced as the bytes pass: a stream
// over it is cut off, the partial file discarded by the store, and the
// task fails, refunded.

// DefaultMaxOutputBytes is the default of Service.MaxOutputBytes (the
// --max-output-bytes flag).
const DefaultMaxOutputBytes = 512 << 20

// partialGrace is how old a write cut short by a crash must be before the
// purge job removes what it left (temporary files, incomplete multipart
// uploads): longer than any output download may run.
const partialGrace = 6 * time.Hour

func (s *Service) maxOutputBytes() int64 {
	if s.MaxOutputBytes > 0 {
		return s.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

// succeed stores the outputs of p and finishes the task as succeeded.
func (s *Service) succeed(ctx context.Context, t *Task, p Progress) error {
	defer CloseOutputs(p.Outputs)
	now := s.now()
	t.Outputs = t.Outputs[:0]
	var stored []string
	for i, o := range p.Outputs {
		key := outputKey(t.ID, i, o.Ext)
		size, err := s.storeOutput(ctx, key, o)
		if err != nil {
			for _, k := range stored {
				if derr := s.Blobs.Delete(ctx, k); derr != nil {
					s.log().WarnContext(ctx, "delete output of a task whose outputs were not all stored", "jobId", t.ID, "key", k, "err", derr)
				}
			}
			return s.outputsNotStored(ctx, t, p, err)
		}
		stored = append(stored, key)
		t.Outputs = append(t.Outputs, Creation{
			ID: NewCreationID(now), AccountID: t.AccountID, TaskID: t.ID, Index: i, Key: key, Token: NewFileToken(now),
			ContentType: o.ContentType, Ext: o.Ext, Size: size, CreatedAt: now,
		})
	}
	t.Status = StatusSucceeded
	t.UpstreamCost = upstreamCost(t, p)
	return s.finish(ctx, t, 0)
}

// outputKey is where output i of a task is stored:
// outputs/<two random characters of the task id>/<task id>-<i>.<ext>.
// Keys are fixed per task and index, so a repeated step overwrites rather
// than adds files. The 256 shared directories spare a directory per task
// (a mkdir and its sync on local storage); the key is recorded in the
// task's creations, so files stored under the older outputs/<task>/<i>.<ext>
// are read where they are.
func outputKey(taskID string, i int, ext string) string {
	return fmt.Sprintf("outputs/%s/%s-%d.%s", outputShard(taskID), taskID, i, ext)
}

// outputShard is the directory of a task's outputs: the last two
// characters of a time-ordered id (NewTaskID: its first ones are the time,
// the same for every task of a day), the first two of an older random one.
func outputShard(taskID string) string {
	switch {
	case len(taskID) == 36 && taskID[14] == '7':
		return taskID[34:]
	case len(taskID) > 2:
		return taskID[:2]
	}
	return taskID
}

// sourceError is an output stream's own failure (the upstream connection
// broke, or the file is over the size limit), told apart from storage's.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// storeOutput writes one output under key and returns its size.
func (s *Service) storeOutput(ctx context.Context, key string, o Output) (int64, error) {
	limit := s.maxOutputBytes()
	if o.Body == nil {
		if int64(len(o.Data)) > limit {
			return 0, &sourceError{tooLargeOutput(limit)}
		}
		return int64(len(o.Data)), s.Blobs.Put(ctx, key, o.Data, o.ContentType)
	}
	if o.Size > limit {
		return 0, &sourceError{tooLargeOutput(limit)} // declared: not a byte read
	}
	src := &limitedOutput{r: o.Body, left: limit, limit: limit}
	n, err := s.Blobs.PutStream(ctx, key, src, o.ContentType)
	if src.err != nil {
		return n, &sourceError{src.err}
	}
	return n, err
}

func tooLargeOutput(limit int64) error {
	return &UpstreamError{Kind: Failed, Code: CodeUpstream,
		Message: fmt.Sprintf("the output is larger than the %d bytes allowed (--max-output-bytes)", limit)}
}

// limitedOutput reads an output stream, failing once more than limit
// bytes have come; err keeps the stream's own error.
type limitedOutput struct {
	r           io.Reader
	left, limit int64
	err         error
}

func (l *limitedOutput) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		l.err = tooLargeOutput(l.limit)
		return 0, l.err
	}
	l.left -= int64(n)
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}

// outputsNotStored acts on an output that could not be stored. A stream
// the upstream broke off is fetched again by a later step (polling the
// upstream work again); one it made unusable (over the size limit, gone)
// fails the task with a refund; a storage failure is retried, or goes to
// review when retrying would submit paid work again.
func (s *Service) outputsNotStored(ctx context.Context, t *Task, p Progress, err error) error {
	var src *sourceError
	if !errors.As(err, &src) {
		if t.Status == StatusSubmitting && !resubmittable(s.Engines[t.Engine]) {
			// Retrying would submit the paid work again; the outputs
			// existed, so an operator can look for them.
			s.log().ErrorContext(ctx, "store output", "jobId", t.ID, "err", err)
			return s.review(ctx, t, ReviewOutputsLost, "the outputs arrived but could not be stored")
		}
		return s.retry(ctx, t, fmt.Errorf("store output: %w", err))
	}
	if ue := upstreamError(err); ue != nil && ue.Kind == Failed {
		return s.fail(ctx, t, ue.Code, ue.Message, ue.InputFault())
	}
	if t.Status == StatusSubmitting {
		if p.UpstreamID == "" {
			// The engine gave no id to fetch the outputs by again.
			if !resubmittable(s.Engines[t.Engine]) {
				s.log().ErrorContext(ctx, "output download broke off", "jobId", t.ID, "err", err)
				return s.review(ctx, t, ReviewOutputsLost, "the outputs arrived but could not be stored")
			}
			return s.retry(ctx, t, fmt.Errorf("store output: %w", err))
		}
		t.Status, t.UpstreamID = StatusRunning, p.UpstreamID
	}
	return s.checked(ctx, t, Progress{}, err)
}

// sweepPartialOutputs removes what writes cut short by a crash left in
// storage, once they are older than any write may take.
func (s *Service) sweepPartialOutputs(ctx context.Context) error {
	sw, ok := s.Blobs.(PartialSweeper)
	if !ok {
		return nil
	}
	n, err := sw.SweepPartial(ctx, s.now().Add(-partialGrace))
	if n > 0 {
		s.log().InfoContext(ctx, "removed files of writes cut short", "count", n)
	}
	return err
}
