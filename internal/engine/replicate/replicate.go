// Package replicate is the engine that runs gengate's models on Replicate
// (https://replicate.com) through its predictions API.
//
// Submit creates one prediction, asynchronously (no "Prefer: wait"): for an
// official model, POST /v1/models/{owner}/{name}/predictions with
// {"input": {...}}; for a route whose upstream names a version
// ("owner/name:version"), POST /v1/predictions with {"version", "input"}.
// The prediction id is the upstream id, so Check needs nothing but the Job
// and that id, even in a new process: GET /v1/predictions/{id}, and when the
// prediction has succeeded, download every output URL (files on
// replicate.delivery are deleted an hour after the prediction) into the
// Progress. Cancel is POST /v1/predictions/{id}/cancel.
//
// Replicate documents no idempotency key, so a create whose answer was lost
// stays ambiguous: the task goes to review rather than to a second create.
//
// Each model's input names and the values it can take live in one table
// (models.go); Validate and Submit share the mapping, so a job Validate
// accepts is one Submit can send. Input files under 1 MB go as data: URIs
// (Replicate recommends them only below that); larger ones as the URL the
// service gave (presigned S3, or gengate-signed under --public-url), or
// else uploaded to Replicate's files API first (files.go).
//
// Sources followed: Replicate's HTTP API reference as summarised in
// replicate/skills (skills/replicate/references/HTTP_API.md, PREDICTIONS.md)
// and https://replicate.com/docs/topics/predictions/create-a-prediction (the
// endpoints, prediction object, states including "aborted" from
// replicate-python PR #460, the {"title","detail","status"} error shape);
// https://replicate.com/docs/topics/predictions/data-retention (one-hour
// output retention, data_removed); and the models' API pages on
// replicate.com (…/versions/…/api) for input names: flux-dev, flux-schnell,
// nano-banana, seedream-4.5, kling-v2.1, veo-3-fast, seedance-1-pro,
// sora-2-pro, wan-2.5-i2v, gen4-turbo. Entries for the other models follow
// the anchors notes (§4) and their families' conventions; see models.go.
package replicate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// DefaultBaseURL is Replicate's API.
const DefaultBaseURL = "https://api.replicate.com/v1"

// Poll delays; a prediction's answer carries no Retry-After. An image is
// first read back firstImagePoll after its submit, then after waits that
// double with the task's age up to imageDelay: Replicate's fastest image
// models answer in well under a second, and its own clients read the
// prediction every 0.5 s (replicate-go and replicate-python's
// poll_interval). A video is read every videoDelay.
const (
	firstImagePoll = 250 * time.Millisecond
	imageDelay     = 2 * time.Second
	videoDelay     = 10 * time.Second
)

var (
	_ gengate.Engine    = (*Engine)(nil)
	_ gengate.Validator = (*Engine)(nil)
	_ gengate.Canceler  = (*Engine)(nil)

	_ gengate.InputStreamer = (*Engine)(nil)
)

// Config configures the engine: APIKey is the Replicate API token
// (REPLICATE_API_TOKEN), sent as a bearer token; BaseURL defaults to
// DefaultBaseURL.
type Config = upstream.Config

// Engine runs jobs on Replicate. It keeps no state between calls.
type Engine struct {
	client *upstream.Client
}

// New returns a Replicate engine.
func New(cfg Config) *Engine {
	return &Engine{client: upstream.NewClient("replicate", cfg, DefaultBaseURL, "Authorization", "Bearer ", explain)}
}

// StreamsInputs says Submit reads a large input from storage only when
// it has no URL to send instead (gengate.InputStreamer): with one (S3
// presigned, or gengate-signed under --public-url) the file is never read.
func (e *Engine) StreamsInputs() bool { return true }

// Name returns "replicate".
func (e *Engine) Name() string { return "replicate" }

// Repeatable returns false: a prediction is paid work.
func (e *Engine) Repeatable() bool { return false }

// Validate reports, before any charge, whether the route's model can do
// every option and input of the job.
func (e *Engine) Validate(job gengate.Job) error {
	return unsupported(mapJob(job, false))
}

func unsupported(m mapping) error {
	if len(m.fields) == 0 {
		return nil
	}
	return &gengate.Error{Code: gengate.EUnsupportedOption,
		Message: "the model's Replicate route cannot do " + m.fields[0].Field, Fields: m.fields}
}

// prediction is Replicate's prediction object, as far as the engine reads it.
type prediction struct {
	ID          string          `json:"id"`
	Status      string          `json:"status"`
	Output      json.RawMessage `json:"output"`
	Error       json.RawMessage `json:"error"`
	DataRemoved bool            `json:"data_removed"`
	// Logs is the model's output so far (progress bars included).
	Logs string `json:"logs"`
	// Metrics.PredictTime is the seconds the model ran, what Replicate
	// bills a model priced by time for (cost.go).
	Metrics struct {
		PredictTime *float64 `json:"predict_time"`
	} `json:"metrics"`
}

// Submit creates the job's prediction.
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	if job.Route.Upstream == "" {
		return gengate.Progress{}, gengate.Errorf(gengate.EInvalid, "replicate: the route names no model")
	}
	job, err := e.placeInputs(ctx, job) // data: URIs under 1 MB, URLs or uploaded files above
	if err != nil {
		return gengate.Progress{}, err
	}
	m := mapJob(job, true)
	if err := unsupported(m); err != nil {
		return gengate.Progress{}, err
	}
	routeInput(m.input, job.Route.Params)
	name, version := upstreamModel(job.Route.Upstream)
	req := upstream.Request{Method: http.MethodPost}
	if version != "" {
		req.Path = "/predictions"
		req.JSON = map[string]any{"version": name + ":" + version, "input": m.input}
	} else {
		owner, mname, ok := strings.Cut(name, "/")
		if !ok || owner == "" || mname == "" {
			return gengate.Progress{}, gengate.Errorf(gengate.EInvalid, "replicate: route model %q is not owner/name", name)
		}
		req.Path = "/models/" + url.PathEscape(owner) + "/" + url.PathEscape(mname) + "/predictions"
		req.JSON = map[string]any{"input": m.input}
	}
	var p prediction
	if err := e.client.Submit(ctx, req, &p); err != nil {
		return gengate.Progress{}, err
	}
	if p.ID == "" {
		return gengate.Progress{}, fmt.Errorf("replicate: prediction created but its answer has no id")
	}
	return gengate.Progress{UpstreamID: p.ID, RetryAfter: firstDelay(job)}, nil
}

// Check reads the prediction and, once it has succeeded, downloads its
// outputs.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	if upstreamID == "" || strings.ContainsAny(upstreamID, "/?#") {
		return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "replicate: malformed upstream id %q", upstreamID)
	}
	var p prediction
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/predictions/" + upstreamID}, &p); err != nil {
		return gengate.Progress{}, err
	}
	switch p.Status {
	case "starting", "processing":
		return gengate.Progress{UpstreamID: upstreamID, RetryAfter: e.delay(job), Report: p.report(e.client)}, nil
	case "succeeded":
	case "failed", "canceled", "aborted":
		return gengate.Progress{}, failure(p, e.client)
	default:
		return gengate.Progress{}, fmt.Errorf("replicate: prediction %s has unknown status %q", upstreamID, p.Status)
	}
	if p.DataRemoved {
		return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "replicate deleted the prediction's outputs (retention period) before they were fetched"}
	}
	urls, err := outputURLs(p.Output)
	if err != nil {
		return gengate.Progress{}, err
	}
	if len(urls) == 0 {
		return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "replicate reported success with no output"}
	}
	outs := make([]gengate.Output, 0, len(urls))
	for _, u := range urls {
		o, err := e.client.Download(ctx, u, job.Type)
		if err != nil {
			gengate.CloseOutputs(outs)
			return gengate.Progress{}, err
		}
		outs = append(outs, o)
	}
	return gengate.Progress{UpstreamID: upstreamID, Outputs: outs, Cost: cost(job, p)}, nil
}

// Cancel asks Replicate to stop the prediction.
func (e *Engine) Cancel(ctx context.Context, job gengate.Job, upstreamID string) error {
	if upstreamID == "" || strings.ContainsAny(upstreamID, "/?#") {
		return gengate.Errorf(gengate.EInvalid, "replicate: malformed upstream id %q", upstreamID)
	}
	return e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/predictions/" + upstreamID + "/cancel"}, nil)
}

// maxDataURI is the size from which an input is not sent as a data: URI:
// Replicate recommends them "only if the file is less than 1MB"
// (replicate.com/docs/topics/predictions/input-files).
const maxDataURI = 1_000_000

// firstDelay is the wait before the first status read after a submit:
// firstImagePoll for an image, whatever the task's age (a task that waited
// in gengate's own queue is new to Replicate: reading it back only after as
// long again, as delay would, held every task of a backlog up to 2 s
// longer than its upstream took), videoDelay for a video.
func firstDelay(job gengate.Job) time.Duration {
	if job.Type == "video" {
		return videoDelay
	}
	return firstImagePoll
}

// delay is the wait before the next status read: for a video videoDelay;
// for an image the task's age so far (so the waits double), at least
// firstImagePoll and at most imageDelay (imageDelay when the age is
// unknown).
func (e *Engine) delay(job gengate.Job) time.Duration {
	if job.Type == "video" {
		return videoDelay
	}
	return e.client.AgeDelay(job.CreatedAt, firstImagePoll, imageDelay)
}

// outputURLs reads a prediction's output: a URL or a list of URLs (other
// shapes, such as a model's {"image": url} object, give their URL values).
func outputURLs(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("replicate: unreadable output: %v", err)
	}
	var urls []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "data:") {
				urls = append(urls, v)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(v[k])
			}
		}
	}
	walk(v)
	return urls, nil
}

// failure turns a failed, canceled or aborted prediction into a Failed
// error with the code its error text points to.
func failure(p prediction, c *upstream.Client) error {
	msg := upstream.Message(append(append([]byte(`{"error":`), orNull(p.Error)...), '}'))
	if msg == "" {
		msg = "prediction " + p.Status
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: classify(msg),
		Message: "replicate: " + c.Clean(msg)}
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// classify reads a failure text: Replicate's safety checkers fail
// predictions with texts like "flagged as sensitive (E005)" or "NSFW
// content detected".
func classify(msg string) string {
	m := strings.ToLower(msg)
	for _, w := range []string{"nsfw", "sensitive", "flagged", "safety", "content policy", "moderation", "e005"} {
		if strings.Contains(m, w) {
			return gengate.CodeContentPolicy
		}
	}
	for _, w := range []string{"invalid input", "input validation", "e006", "cannot identify image", "unsupported image"} {
		if strings.Contains(m, w) {
			return gengate.CodeRejectedInput
		}
	}
	return gengate.CodeUpstream
}

// explain reads Replicate's error answers ({"title","detail","status"}).
func explain(status int, body []byte) (code, message string) {
	var e struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Title != "" || e.Detail != "") {
		message = e.Detail
		if message == "" {
			message = e.Title
		}
	}
	if status/100 == 4 && status != http.StatusTooManyRequests && message != "" && classify(message) == gengate.CodeContentPolicy {
		code = gengate.CodeContentPolicy
	}
	return code, message
}
