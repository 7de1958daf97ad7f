package blob_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/gengate/gengate/internal/blob/s3test"
)

// heldStream says when it is first read, then gives nothing until
// released: a download still coming from an upstream.
type heldStream struct {
	reading chan struct{} // closed at the first Read
	release chan struct{}
	done    bool
}

func newHeldStream() *heldStream {
	return &heldStream{reading: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldStream) Read(p []byte) (int, error) {
	if h.done {
		return 0, io.EOF
	}
	close(h.reading)
	<-h.release
	h.done = true
	return copy(p, "a held output"), io.EOF
}

// countingStream counts its reads.
type countingStream struct{ reads int }

func (c *countingStream) Read(p []byte) (int, error) {
	c.reads++
	return copy(p, "x"), io.EOF
}

// TestS3PartBuffersBound: with SetPartBuffers(2), two streams being stored
// hold both part buffers; a third waits without reading a byte (here its
// context ends first, so it gives up untouched), and once one of the two
// has finished a new stream is stored.
func TestS3PartBuffersBound(t *testing.T) {
	srv := s3test.Start(t)
	s := openS3(t, srv, newBucket())
	s.SetPartBuffers(2)
	ctx := context.Background()
	held := []*heldStream{newHeldStream(), newHeldStream()}
	errs := make(chan error, len(held))
	for i, h := range held {
		go func() {
			_, err := s.PutStream(ctx, "outputs/h/"+string(rune('0'+i))+".png", h, "image/png")
			errs <- err
		}()
		<-h.reading // this stream holds a buffer
	}

	ended, cancel := context.WithCancel(ctx)
	cancel()
	third := &countingStream{}
	if n, err := s.PutStream(ended, "outputs/h/2.png", third, "image/png"); !errors.Is(err, context.Canceled) || n != 0 || third.reads != 0 {
		t.Fatalf("third stream while two hold the buffers: %d bytes, %v, %d reads; want context.Canceled before any read", n, err, third.reads)
	}

	close(held[0].release)
	must(t, <-errs)
	fourth := &countingStream{}
	if n, err := s.PutStream(ctx, "outputs/h/3.png", fourth, "image/png"); err != nil || n != 1 {
		t.Fatalf("stream after one finished: %d bytes, %v", n, err)
	}
	close(held[1].release)
	must(t, <-errs)
	if got, err := s.Get(ctx, "outputs/h/1.png"); err != nil || string(got) != "a held output" {
		t.Fatalf("held output stored as %q, %v", got, err)
	}
}
