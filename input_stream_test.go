package gengate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"testing"

	"github.com/gengate/gengate"
)

// streamer is a test engine that reads its inputs as streams
// (gengate.InputStreamer).
type streamer struct{ *upstream }

func (streamer) StreamsInputs() bool { return true }

// TestLargeInputsStreamToStreamingEngines: an engine that streams inputs
// gets a large one as Open and Size, no Data (the service read only its
// first bytes, to name its type), and Reader serves the stored bytes; a
// small one, and every input of other engines, comes as Data.
func TestLargeInputsStreamToStreamingEngines(t *testing.T) {
	png := pngOutputs(1)[0].Data
	for _, c := range []struct {
		name       string
		streams    bool
		min        int64
		wantStream bool
	}{
		{"streaming engine, large input", true, int64(len(png)), true},
		{"streaming engine, small input", true, int64(len(png)) + 1, false},
		{"other engine, large input", false, int64(len(png)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got gengate.Input
			var read []byte
			up := &upstream{submit: func(job gengate.Job) (gengate.Progress, error) {
				got = job.Inputs["imageUrl"]
				r, n, err := got.Reader(context.Background())
				if err != nil {
					return gengate.Progress{}, err
				}
				defer r.Close()
				read, _ = io.ReadAll(io.LimitReader(r, n))
				return gengate.Progress{Outputs: pngOutputs(1)}, nil
			}}
			d := newDomain(t, "sqlite", up)
			if c.streams {
				d.svc.Engines[up.Name()] = streamer{up}
			}
			d.svc.InputURLs.MinBytes = c.min
			body := `{"type":"image","modelId":"flux-kontext-pro","prompt":"x","imageUrl":"data:image/png;base64,` +
				base64.StdEncoding.EncodeToString(png) + `"}`
			o, err := d.svc.Generate(context.Background(), d.key, []byte(body), "")
			if err != nil {
				t.Fatal(err)
			}
			d.runNext()
			d.wantState(o.Task.ID, gengate.StatusSucceeded, "", 100-o.Task.Cost, 0)
			streamed := got.Open != nil && got.Data == nil && got.Size == int64(len(png))
			if streamed != c.wantStream || got.ContentType != "image/png" {
				t.Errorf("input streamed %v (Data %d bytes, Size %d, %q), want streamed %v", streamed, len(got.Data), got.Size, got.ContentType, c.wantStream)
			}
			if !bytes.Equal(read, png) {
				t.Errorf("Reader gave %d bytes, want the %d stored", len(read), len(png))
			}
		})
	}
}
