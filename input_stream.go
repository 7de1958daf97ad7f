package gengate

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// Streaming large inputs. The service reads a task's inputs back from
// storage when it builds a step's Job. An engine that sends files by
// reading them (multipart parts, a provider's upload API) does not need
// them in memory: it says so with InputStreamer, and its Jobs carry each
// Large input as Open and Size, read from storage as the upload goes,
// instead of Data. Small inputs, and every input of the other engines,
// come as Data as before.

// Reader opens the input for reading: its Data, or the stored file when it
// comes as Open. It returns the length to read; the caller closes it.
func (in Input) Reader(ctx context.Context) (io.ReadCloser, int64, error) {
	if in.Open == nil {
		return io.NopCloser(bytes.NewReader(in.Data)), int64(len(in.Data)), nil
	}
	r, err := in.Open(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("open input: %w", err)
	}
	return r, in.Size, nil
}

// ReadAll returns the input's bytes: Data, or the stored file read whole
// (for an engine that must send this one inline after all).
func (in Input) ReadAll(ctx context.Context) ([]byte, error) {
	if in.Open == nil {
		return in.Data, nil
	}
	r, n, err := in.Reader(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data := make([]byte, 0, n)
	buf := bytes.NewBuffer(data)
	if _, err := io.Copy(buf, io.LimitReader(r, n)); err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	return buf.Bytes(), nil
}

// streamedInput returns the stored input key of task t as a streamed
// Input when it is Large, without reading more than its first bytes (to
// name its type); ok is false for a small one, which the caller reads.
func (s *Service) streamedInput(ctx context.Context, t *Task, name, key string) (in Input, ok bool, err error) {
	f, err := s.Blobs.Open(ctx, key)
	if err != nil {
		return Input{}, false, fmt.Errorf("read input %s: %w", name, err)
	}
	defer f.Close()
	size := f.Size()
	if size > int64(^uint(0)>>1) || !s.largeInput(int(size)) {
		return Input{}, false, nil
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return Input{}, false, fmt.Errorf("read input %s: %w", name, err)
	}
	blobs := s.Blobs
	return Input{ContentType: sniff(head[:n]), Size: size, Large: true, URL: s.inputURL(ctx, t, name, key, int(size)),
		Open: func(ctx context.Context) (io.ReadCloser, error) { return blobs.Open(ctx, key) }}, true, nil
}
