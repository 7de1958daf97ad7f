package gengate

import (
	"context"
	"fmt"
	"io"
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
// Errors say what the service may do next:
//   - an *UpstreamError reports an upstream's answer: Busy (come back later;
//     nothing changed), Refused (at Submit: the work was definitely not
//     accepted, so the next route may take it) or Failed (the work failed:
//     the task fails and its credits are refunded);
//   - an *Error with code GENERATION_FAILED or INVALID_REQUEST is a definite
//     failure too (an input the engine cannot use);
//   - any other error is ambiguous: after Submit the task is never sent
//     again on a non-repeatable engine (it may have started paid work): its
//     work is looked for (Finder), or the task goes to review; after Check
//     it is retried later.
//
// An engine reports Busy or Refused at Submit only for answers that prove
// the provider did not take the work, by the rule its provider's own client
// follows (docs/providers.md, "When a create is sent again").
//
// What an engine may do beyond these methods (validate, admit, find, cancel,
// stream inputs, check its registry, hint its latency) is an optional
// ability, listed in abilities.go.
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
	TaskID string
	// Route is the route the task runs on: the engine, the upstream's model
	// id and any extra parameters an operator configured for it.
	Route        Route
	ModelID      string
	Type         string // "image" or "video"
	Prompt       string
	AspectRatio  string
	NumOutputs   int
	OutputFormat string
	// Options holds every validated option of the task with its default
	// filled in, keyed by its API name: aspectRatio, numOutputs and
	// outputFormat (also given in the fields above) and the model's others
	// (duration, resolution, scale, quality, ...). Values are string,
	// int64, float64 or bool.
	Options map[string]any
	// Inputs holds the input files by their API field name ("imageUrl",
	// "mask", "inputs.videoUrl", ...).
	Inputs map[string]Input
	// CreatedAt is when the task was accepted: an engine may pace its
	// polls by the task's age (zero when unknown).
	CreatedAt time.Time
}

// Progress reports where an engine's work stands. Outputs non-empty means
// done; otherwise UpstreamID names the work to Check after RetryAfter.
type Progress struct {
	UpstreamID string
	Outputs    []Output
	RetryAfter time.Duration
	// Report is what the engine learned of unfinished work (progress.go);
	// nil when it learned nothing.
	Report *Report
	// Cost is what the provider charges for the finished work, when the
	// engine can tell (upstreamcost.go); nil when it cannot.
	Cost *UpstreamCost
}

// Output is one finished file: held in memory (Data: the sandbox, builtin
// operations, base64 files in an upstream's JSON answer) or still on its
// way from the upstream (Body: downloads), which the service streams into
// storage without holding it whole.
type Output struct {
	Data []byte
	// Body, when not nil, is the file's content still to be read (Data is
	// then nil). Its reads fail with an *UpstreamError when the upstream
	// connection breaks (Busy) or the file turns out unusable (Failed).
	// Whoever receives a Progress closes the Bodies of its outputs:
	// the service once it has stored them (CloseOutputs otherwise).
	Body io.ReadCloser
	// Size is the file's length when known (Data's, or the Content-Length
	// a download declared: one over the limit is refused before a byte is
	// read); 0 or -1 when not. The service counts the bytes regardless.
	Size        int64
	ContentType string // "image/png", "video/mp4", ...
	Ext         string // "png", "mp4", ... without the dot
}

// Bytes returns the whole file: Data, or Body read to its end and closed.
// For small files and tests; the service streams Bodies instead.
func (o *Output) Bytes() ([]byte, error) {
	if o.Body == nil {
		return o.Data, nil
	}
	defer o.Body.Close()
	data, err := io.ReadAll(o.Body)
	o.Data, o.Body = data, nil
	return data, err
}

// CloseOutputs closes the Body of every output, for an engine or caller
// that gives up on outputs it has opened.
func CloseOutputs(outs []Output) {
	for _, o := range outs {
		if o.Body != nil {
			o.Body.Close()
		}
	}
}

// Input is one fetched and checked input file.
type Input struct {
	Data        []byte
	ContentType string
	// Width and Height are read from an image's header by the fetcher; they
	// are zero in a Job, whose inputs come back from storage as bytes.
	Width, Height int
	// URL, in a Job, is an address the upstream may fetch the file from
	// instead of receiving its bytes: a presigned GET of the stored input,
	// valid for InputURLExpiry, set for inputs of at least
	// Service.InputURLs.MinBytes when the store can presign (S3). Empty
	// otherwise; engines then send the bytes (data: URIs, uploads).
	URL string
	// Large, in a Job, says the input is of at least
	// Service.InputURLs.MinBytes (--input-url-min-bytes), URL or not: an
	// engine whose provider has an upload API of its own (the Gemini
	// API's Files API) sends it there rather than inline.
	Large bool
	// Open, in a Job for an InputStreamer engine, opens a Large input from
	// storage, Size bytes long; Data is then nil (input_stream.go). Use
	// Reader, which serves both.
	Open func(ctx context.Context) (io.ReadCloser, error)
	Size int64
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

// UpstreamKind classifies an upstream's answer.
type UpstreamKind int

// Upstream answers that are not simply progress.
const (
	// Busy: the upstream asked to come back later and, at submit, did not
	// take the work (429, fal's ingress errors; while polling, any 5xx or a
	// lost answer too). Nothing was accepted or changed; the step runs
	// again after RetryAfter.
	Busy UpstreamKind = iota + 1
	// Refused: at submit, the upstream definitely did not accept the work
	// (authentication, quota, a 4xx on the request, connection refused).
	// The next route may take it; with none left the task fails, refunded.
	Refused
	// Failed: the upstream accepted the work and says it failed. The task
	// fails and is refunded; no other route is tried.
	Failed
)

// Failure codes a failed task carries (Task.ErrorCode).
const (
	CodeRejectedInput = "UPSTREAM_REJECTED_INPUT"
	CodeContentPolicy = "CONTENT_POLICY"
	CodeUpstream      = "UPSTREAM_ERROR"
	CodeDeadline      = "DEADLINE_EXCEEDED"
	// CodeRefusedAfterReview: an operator settled the task's review with a
	// refund; it never ran upstream, or its output was not delivered.
	CodeRefusedAfterReview = "REFUSED_AFTER_REVIEW"
)

// UpstreamError is an engine's report of an upstream's answer.
type UpstreamError struct {
	Kind UpstreamKind
	// Code is the failure code the task gets if this ends it:
	// CodeRejectedInput, CodeContentPolicy or CodeUpstream.
	Code string
	// Message is safe to show to the caller: engines clean it of secrets.
	Message string
	// Status is the upstream's HTTP status, 0 when there was no response.
	Status int
	// RetryAfter is when to come back, for Busy (0: the service's backoff).
	RetryAfter time.Duration
}

func (e *UpstreamError) Error() string {
	kind := map[UpstreamKind]string{Busy: "busy", Refused: "refused", Failed: "failed"}[e.Kind]
	return fmt.Sprintf("upstream %s (%d, %s): %s", kind, e.Status, e.Code, e.Message)
}

// InputFault reports whether the failure is the caller's input's fault.
func (e *UpstreamError) InputFault() bool {
	return e.Code == CodeRejectedInput || e.Code == CodeContentPolicy
}
