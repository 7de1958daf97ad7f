package gengate

import (
	"context"
	"time"
)

// Large inputs by URL. fal and Replicate take an input file either inline
// (a data: URI in the JSON body, a third larger than the file) or as a URL
// they fetch. Past a few megabytes the URL is the better way: the request
// stays small, and the upstream fetches the file itself. gengate hands out
// a presigned GET of the stored input when the store can make one (S3:
// the bucket's own signed URL, no gengate endpoint or key involved);
// with local files it keeps sending data: URIs (docs/architecture.md).

// DefaultInputURLMinBytes is the default of Service.InputURLMinBytes (the
// --input-url-min-bytes flag).
const DefaultInputURLMinBytes = 4 << 20

// InputURLExpiry is how long a presigned input URL stays valid: long
// enough for an upstream's queue to reach the task, short of S3's 7-day
// ceiling.
const InputURLExpiry = 24 * time.Hour

// presigner is an optional Blobs ability: a URL anyone can GET a stored
// file with until it expires (internal/blob.S3).
type presigner interface {
	PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error)
}

// inputURL returns the presigned URL of a stored input of size bytes, or
// "" when it is small, URLs are off, or the store cannot make one.
func (s *Service) inputURL(ctx context.Context, t *Task, key string, size int) string {
	min := s.InputURLMinBytes
	if min == 0 {
		min = DefaultInputURLMinBytes
	}
	p, ok := s.Blobs.(presigner)
	if min < 0 || int64(size) < min || !ok {
		return ""
	}
	u, err := p.PresignGet(ctx, key, InputURLExpiry)
	if err != nil {
		// The bytes still go inline.
		s.log().WarnContext(ctx, "presign input", "jobId", t.ID, "err", err)
		return ""
	}
	return u
}
