package gengate

import (
	"context"
	"fmt"
)

// The engine's view of a task: its settings and its inputs read back
// from storage.

// job builds the engine's view of a task, reading its inputs back: whole,
// or, for an InputStreamer engine, Large ones as streams (input_stream.go).
func (s *Service) job(ctx context.Context, t *Task) (Job, error) {
	j := s.baseJob(t)
	st, ok := s.Engines[t.Engine].(InputStreamer)
	streams := ok && st.StreamsInputs()
	for name, key := range t.Inputs {
		if streams {
			in, ok, err := s.streamedInput(ctx, t, name, key)
			if err != nil {
				return j, err
			}
			if ok {
				j.Inputs[name] = in
				continue
			}
		}
		data, err := s.Blobs.Get(ctx, key)
		if err != nil {
			return j, fmt.Errorf("read input %s: %w", name, err)
		}
		j.Inputs[name] = Input{Data: data, ContentType: sniff(data), URL: s.inputURL(ctx, t, name, key, len(data)),
			Large: s.largeInput(len(data))}
	}
	return j, nil
}

// baseJob is the engine's view of a task without its input files.
func (s *Service) baseJob(t *Task) Job {
	j := Job{TaskID: t.ID, ModelID: t.ModelID, Type: t.Type, Prompt: t.Prompt, Route: t.Route,
		Options: t.Options, Inputs: map[string]Input{}, NumOutputs: 1, CreatedAt: t.CreatedAt}
	if j.Route.Engine == "" {
		j.Route = Route{Engine: t.Engine, Upstream: t.ModelID}
	}
	j.AspectRatio, _ = t.Options["aspectRatio"].(string)
	j.OutputFormat, _ = t.Options["outputFormat"].(string)
	if n, ok := toFloat(t.Options["numOutputs"]); ok && n > 0 {
		j.NumOutputs = int(n)
	}
	return j
}

// sniff names the type of a stored input file (checked by the fetcher
// before it was stored) by its first bytes.
func sniff(data []byte) string {
	switch {
	case len(data) > 8 && string(data[4:8]) == "ftyp":
		return "video/mp4"
	case len(data) > 4 && string(data[:4]) == "\x1a\x45\xdf\xa3":
		return "video/webm"
	case len(data) > 8 && string(data[1:4]) == "PNG":
		return "image/png"
	case len(data) > 3 && data[0] == 0xff && data[1] == 0xd8:
		return "image/jpeg"
	case len(data) > 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	case len(data) > 6 && string(data[0:3]) == "GIF":
		return "image/gif"
	}
	return "application/octet-stream"
}
