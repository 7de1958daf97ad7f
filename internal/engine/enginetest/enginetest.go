// Package enginetest is the conformance test every gengate.Engine runs:
// it drives Submit and Check the way the worker does and checks what comes
// back. Provider engines run it against a fake of their upstream built
// from the provider's documented protocol.
package enginetest

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg" // decoders for the checks
	_ "image/png"
	"testing"
	"time"

	_ "golang.org/x/image/webp"

	"github.com/gengate/gengate"
)

// Case is one job an engine must be able to run.
type Case struct {
	Name string
	Job  gengate.Job
}

// DefaultCases are plain text-to-image and text-to-video jobs.
func DefaultCases() []Case {
	return []Case{
		{"image png 1:1", gengate.Job{TaskID: "t1", ModelID: "flux", Type: "image", Prompt: "a red fox", AspectRatio: "1:1", NumOutputs: 1, OutputFormat: "png", Options: map[string]any{}}},
		{"image jpeg 16:9 x2", gengate.Job{TaskID: "t2", ModelID: "flux", Type: "image", Prompt: "a red fox", AspectRatio: "16:9", NumOutputs: 2, OutputFormat: "jpeg", Options: map[string]any{}}},
		{"video", gengate.Job{TaskID: "t3", ModelID: "kling-2-1", Type: "video", Prompt: "a red fox running", AspectRatio: "16:9", NumOutputs: 1, OutputFormat: "mp4", Options: map[string]any{"duration": int64(2)}}},
	}
}

// asService gives the job's Options what the service puts there: every
// option of the task, aspectRatio, numOutputs and outputFormat included.
func asService(j gengate.Job) gengate.Job {
	opts := map[string]any{}
	for k, v := range j.Options {
		opts[k] = v
	}
	if j.AspectRatio != "" {
		opts["aspectRatio"] = j.AspectRatio
	}
	if j.OutputFormat != "" {
		opts["outputFormat"] = j.OutputFormat
	}
	if j.NumOutputs > 0 {
		opts["numOutputs"] = int64(j.NumOutputs)
	}
	j.Options = opts
	return j
}

// Run checks that eng completes every case: Submit, then Check with the
// upstream id until outputs arrive (advance moves the engine's clock, or
// waits, by the RetryAfter it asked for), and that the outputs are what
// the job asked for.
func Run(t *testing.T, eng gengate.Engine, cases []Case, advance func(time.Duration)) {
	t.Helper()
	if eng.Name() == "" {
		t.Fatal("engine has no name")
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ctx := context.Background()
			c.Job = asService(c.Job)
			if v, ok := eng.(gengate.Validator); ok {
				if err := v.Validate(c.Job); err != nil {
					t.Fatalf("Validate refused the case: %v", err)
				}
			}
			p, err := eng.Submit(ctx, c.Job)
			for i := 0; err == nil && len(p.Outputs) == 0; i++ {
				if p.UpstreamID == "" {
					t.Fatal("Submit/Check returned neither outputs nor an upstream id")
				}
				if i > 100 {
					t.Fatal("no outputs after 100 checks")
				}
				advance(p.RetryAfter)
				p, err = eng.Check(ctx, c.Job, p.UpstreamID)
			}
			if err != nil {
				t.Fatalf("engine error: %v", err)
			}
			want := max(c.Job.NumOutputs, 1)
			if c.Job.Type == "video" {
				want = 1
			}
			if len(p.Outputs) != want {
				t.Fatalf("%d outputs, want %d", len(p.Outputs), want)
			}
			ReadOutputs(t, p.Outputs)
			for i, o := range p.Outputs {
				checkOutput(t, c.Job, i, o)
			}
		})
	}
}

func checkOutput(t *testing.T, job gengate.Job, i int, o gengate.Output) {
	t.Helper()
	if len(o.Data) == 0 || o.Ext == "" {
		t.Fatalf("output %d: empty data or extension", i)
	}
	if job.Type == "video" {
		if o.ContentType != "video/mp4" || len(o.Data) < 12 || string(o.Data[4:8]) != "ftyp" {
			t.Fatalf("output %d: %s, want an MP4 (ftyp box)", i, o.ContentType)
		}
		return
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(o.Data))
	if err != nil {
		t.Fatalf("output %d does not decode: %v", i, err)
	}
	if wantFormat := map[string]string{"png": "png", "jpeg": "jpeg", "webp": "webp"}[job.OutputFormat]; wantFormat != "" && format != wantFormat {
		t.Errorf("output %d is %s, want %s", i, format, wantFormat)
	}
	if o.ContentType != "image/"+format {
		t.Errorf("output %d content type %q, want image/%s", i, o.ContentType, format)
	}
	ratios := map[string]float64{"1:1": 1, "16:9": 16.0 / 9, "9:16": 9.0 / 16}
	if r, ok := ratios[job.AspectRatio]; ok {
		got := float64(cfg.Width) / float64(cfg.Height)
		if got < r*0.97 || got > r*1.03 {
			t.Errorf("output %d is %dx%d, want aspect ratio %s", i, cfg.Width, cfg.Height, job.AspectRatio)
		}
	}
}

// ReadOutputs reads every streamed output (Body) whole into its Data, in
// place, so tests can look at the bytes the service would have stored.
func ReadOutputs(t testing.TB, outs []gengate.Output) {
	t.Helper()
	for i := range outs {
		if _, err := outs[i].Bytes(); err != nil {
			t.Fatalf("read output %d: %v", i, err)
		}
	}
}
