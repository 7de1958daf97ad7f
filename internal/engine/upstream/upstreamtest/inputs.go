package upstreamtest

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/gengate/gengate"
)

// Streamed returns in as the service hands a large input to an engine
// that streams inputs (gengate.InputStreamer): Open and Size, no Data.
func Streamed(in gengate.Input) gengate.Input {
	data := in.Data
	in.Data, in.Size, in.Large = nil, int64(len(data)), true
	in.Open = func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return in
}

// Unreadable returns in as a streamed input whose stored file cannot be
// opened (storage failing).
func Unreadable(in gengate.Input) gengate.Input {
	in = Streamed(in)
	in.Open = func(context.Context) (io.ReadCloser, error) { return nil, errors.New("storage is down") }
	return in
}
