package gengate

import (
	"context"
	"time"
)

// Engine produces the outputs of a task. Engines are the edge of gengate: the
// sandbox, the built-in CPU image operations and one adapter per upstream
// provider each implement it in their own package under internal/engine.
//
// Work happens in short steps so that a crash loses at most one step. Submit
// starts the work; when it finishes at once it returns the outputs, otherwise
// it returns an upstream id that Check is later called with, as many times as
// needed, until outputs arrive or the work fails.
//
// An error that is an *Error with code GENERATION_FAILED is a definite
// failure: the task fails and its credits are refunded. Any other error is
// ambiguous: after Submit it sends a non-repeatable engine's task to review,
// after Check it is retried later.
type Engine interface {
	// Name is the engine's name as shown in the model listing ("sandbox").
	Name() string
	// Repeatable reports whether Submit may simply be called again when a
	// crash left it unknown whether an earlier call started work. Engines that
	// compute locally say yes; paid upstream calls say no.
	Repeatable() bool
	Submit(ctx context.Context, job Job) (Progress, error)
	Check(ctx context.Context, job Job, upstreamID string) (Progress, error)
}

// Job is what an engine is asked to do: one task's validated settings and
// its fetched, checked input files.
type Job struct {
	TaskID       string
	ModelID      string
	Type         string // "image" or "video"
	Prompt       string
	AspectRatio  string
	NumOutputs   int
	OutputFormat string
	// Options holds the model's other validated options with their defaults
	// filled in (duration, resolution, scale, quality, ...), keyed by their
	// API names. Values are string, int64, float64 or bool.
	Options map[string]any
	// Inputs holds the input files by their API field name ("imageUrl",
	// "mask", "inputs.videoUrl", ...).
	Inputs map[string]Input
}

// Progress reports where an engine's work stands. Outputs non-empty means
// done; otherwise UpstreamID names the work to Check after RetryAfter.
type Progress struct {
	UpstreamID string
	Outputs    []Output
	RetryAfter time.Duration
}

// Output is one finished file.
type Output struct {
	Data        []byte
	ContentType string // "image/png", "video/mp4", ...
	Ext         string // "png", "mp4", ... without the dot
}

// Input is one fetched and checked input file.
type Input struct {
	Data        []byte
	ContentType string
	// Width and Height are read from an image's header by the fetcher; they
	// are zero in a Job, whose inputs come back from storage as bytes.
	Width, Height int
}

// InputKind says what an input field must hold.
type InputKind string

// Input kinds.
const (
	KindText  InputKind = "text"
	KindImage InputKind = "image"
	KindVideo InputKind = "video"
)

// Fetcher fetches an input file named by an http(s) or data: URL and checks
// it is of the given kind. Its errors are *Error values with a field code
// (INPUT_ADDRESS_NOT_ALLOWED, INPUT_TOO_LARGE, ...) in Code.
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string, kind InputKind) (Input, error)
}
