package sandbox

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// idPrefix starts every upstream id the engine hands out; the rest is the
// Unix time in nanoseconds at which the work counts as done.
const idPrefix = "sbx_"

var (
	_ gengate.Engine        = (*Engine)(nil)
	_ gengate.LatencyHinter = (*Engine)(nil)
)

// Engine is the sandbox engine. It keeps no state between calls apart from
// its settings, so one Engine serves any number of workers.
type Engine struct {
	delay time.Duration
	now   func() time.Time // the clock; tests replace it
	// renders holds a place for each rendering under way: a 1024×1024
	// image is 4 MB of pixels before its encoding, so the steps of every
	// worker slot rendering at once (64 by default) took a quarter of a
	// GB, for no more images a second than as many renders as there are
	// processors.
	renders chan struct{}
}

// New returns a sandbox engine that renders as many outputs at once as the
// process has processors (SetMaxRenders). With a zero delay Submit
// returns the outputs at once; otherwise Submit returns an upstream id and
// Check returns the outputs once delay has passed, as a queued provider
// would.
func New(delay time.Duration) *Engine {
	return &Engine{delay: max(delay, 0), now: time.Now, renders: make(chan struct{}, runtime.NumCPU())}
}

// SetMaxRenders sets how many tasks' outputs the engine renders at once
// (serve --sandbox-renders; at least 1); a step over it waits for a
// place. Call it before the engine is used.
func (e *Engine) SetMaxRenders(n int) { e.renders = make(chan struct{}, max(n, 1)) }

// Name returns "sandbox".
func (e *Engine) Name() string { return "sandbox" }

// Repeatable returns true: the sandbox computes locally and costs nothing.
func (e *Engine) Repeatable() bool { return true }

// Submit renders the job's outputs, or with a delay returns an upstream id
// naming the time they will be ready.
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	if e.delay <= 0 {
		return e.render(ctx, job)
	}
	ready := e.now().Add(e.delay)
	return gengate.Progress{UpstreamID: idPrefix + strconv.FormatInt(ready.UnixNano(), 10), RetryAfter: e.delay}, nil
}

// Check returns the outputs if the time named by upstreamID has come, and
// otherwise how long is left. A malformed id is a definite failure.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	ready, err := parseID(upstreamID)
	if err != nil {
		return gengate.Progress{}, err
	}
	if left := ready.Sub(e.now()); left > 0 {
		return gengate.Progress{UpstreamID: upstreamID, RetryAfter: left}, nil
	}
	return e.render(ctx, job)
}

// parseID reads the ready time out of an upstream id.
func parseID(id string) (time.Time, error) {
	digits, ok := strings.CutPrefix(id, idPrefix)
	if ok {
		if ns, err := strconv.ParseInt(digits, 10, 64); err == nil && ns >= 0 {
			return time.Unix(0, ns), nil
		}
	}
	return time.Time{}, gengate.Errorf(gengate.EFailed, "sandbox: malformed upstream id %q", id)
}

// render makes all of the job's outputs, in one of the engine's places.
func (e *Engine) render(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	select {
	case e.renders <- struct{}{}:
	case <-ctx.Done():
		return gengate.Progress{}, ctx.Err()
	}
	defer func() { <-e.renders }()
	switch job.Type {
	case "image":
		outs, err := renderImages(ctx, job)
		if err != nil {
			return gengate.Progress{}, err
		}
		return gengate.Progress{Outputs: outs}, nil
	case "video":
		out, err := renderVideo(ctx, job)
		if err != nil {
			return gengate.Progress{}, err
		}
		return gengate.Progress{Outputs: []gengate.Output{out}}, nil
	}
	return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "sandbox: unsupported task type %q", job.Type)
}

// renderImages makes job.NumOutputs images (at least one).
func renderImages(ctx context.Context, job gengate.Job) ([]gengate.Output, error) {
	p, err := planImages(job)
	if err != nil {
		return nil, err
	}
	n := max(job.NumOutputs, 1)
	outs := make([]gengate.Output, 0, n)
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := encodeImage(renderImage(job, p, i, n), p.format)
		if err != nil {
			return nil, fmt.Errorf("sandbox: image %d: %w", i+1, err)
		}
		outs = append(outs, gengate.Output{Data: data, ContentType: p.format.contentType, Ext: p.format.ext})
	}
	return outs, nil
}

// TypicalLatency is how long the sandbox takes for any model: its delay,
// whatever the catalog says the real model takes. It sets Retry-After.
func (e *Engine) TypicalLatency(modelID string) time.Duration { return e.delay }
