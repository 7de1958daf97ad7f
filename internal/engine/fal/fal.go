package fal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// DefaultBaseURL is fal's queue API.
const DefaultBaseURL = "https://queue.fal.run"

// Poll delays; fal's queue gives no Retry-After of its own. An image is
// first read back firstImagePoll after its submit, then after waits that
// double with the task's age up to imageDelay: fal's fastest image models
// answer in well under a second, and fal's own clients read the status at
// once and then every 100 ms (fal_client) or 500 ms (@fal-ai/client). A
// video is read every videoDelay.
const (
	firstImagePoll = 250 * time.Millisecond
	imageDelay     = 2 * time.Second
	videoDelay     = 10 * time.Second
	maxDelay       = 30 * time.Second
)

// outputLifetime asks fal to keep outputs a day: gengate copies them the
// moment a request completes, and a day covers any retry of that step.
const outputLifetime = `{"expiration_duration_seconds": 86400}`

var (
	_ gengate.Engine    = (*Engine)(nil)
	_ gengate.Validator = (*Engine)(nil)
	_ gengate.Canceler  = (*Engine)(nil)

	_ gengate.InputStreamer = (*Engine)(nil)
)

// Config configures the engine: APIKey is the fal key (FAL_KEY), sent as
// "Authorization: Key <key>"; BaseURL defaults to DefaultBaseURL.
type Config = upstream.Config

// Engine runs jobs on fal's queue API. It keeps nothing between calls:
// the upstream id names the endpoint and request, so any Engine value (a
// new process after a crash) can check any request.
type Engine struct {
	client *upstream.Client
	// platform calls fal's Platform API (registry.go).
	platform *upstream.Client
	// prices are the endpoints' list prices last read from the pricing
	// API (cost.go).
	pricesMu sync.Mutex
	prices   map[string]price
	// noPrice holds when the pricing API last gave no price for an
	// endpoint (cost.go: priceRetry).
	noPrice map[string]time.Time
	// now is the clock (nil: time.Now).
	now func() time.Time
}

// New returns a fal engine.
func New(cfg Config) *Engine {
	c := upstream.NewClient("fal", cfg, DefaultBaseURL, "Authorization", "Key ", explain)
	c.NotAccepted = ingressError
	// The Platform API (model registry, prices) is on its own host; a
	// configured base URL (a mirror, a test's fake) serves both.
	pcfg := cfg
	if pcfg.BaseURL == "" || pcfg.BaseURL == DefaultBaseURL {
		pcfg.BaseURL = PlatformURL
	}
	return &Engine{client: c, platform: upstream.NewClient("fal", pcfg, PlatformURL, "Authorization", "Key ", explain)}
}

// ingressError reports whether an error answer to a submit proves fal did
// not take the request: a 429, or a 502, 503 or 504 from fal's ingress,
// which carries no x-fal-request-id (fal's own servers name the request
// they answer for), and is not the timeout a caller set
// (X-Fal-Request-Timeout-Type). These are the answers both of fal's
// clients send again: fal-js (libs/client/src/retry.ts,
// DEFAULT_RETRYABLE_STATUS_CODES 429, 502, 503, 504; commit 381105e,
// 2026-08) and fal_client (client.py _is_ingress_error: 502, 503, 504
// without x-fal-request-id; RETRY_CODES 408, 409, 429). Any other error
// after a submit was sent may have queued the request: it is ambiguous.
func ingressError(status int, hdr http.Header) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return hdr.Get("X-Fal-Request-Id") == "" && hdr.Get("X-Fal-Request-Timeout-Type") == ""
	}
	return false
}

// StreamsInputs says Submit reads a large input from storage only when
// it has no URL to send instead (gengate.InputStreamer): with one (S3
// presigned, or gengate-signed under --public-url) the file is never read.
func (e *Engine) StreamsInputs() bool { return true }

// Name returns "fal".
func (e *Engine) Name() string { return "fal" }

// Repeatable returns false: a fal request is paid work.
func (e *Engine) Repeatable() bool { return false }

// Validate reports whether the routed endpoint can do every option of job.
func (e *Engine) Validate(job gengate.Job) error {
	_, err := plan(job)
	return err
}

// Submit puts the job on fal's queue. The upstream id is
// "<endpoint>|<request_id>".
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	job, err := upstream.InlineInputs(ctx, job) // large inputs without a URL go as data: URIs
	if err != nil {
		return gengate.Progress{}, err
	}
	req, err := plan(job)
	if err != nil {
		return gengate.Progress{}, err
	}
	var out struct {
		RequestID string `json:"request_id"`
	}
	err = e.client.Submit(ctx, upstream.Request{Method: http.MethodPost, Path: req.endpoint, JSON: req.body,
		Header: http.Header{"X-Fal-Object-Lifecycle-Preference": {outputLifetime}}}, &out)
	if err != nil {
		return gengate.Progress{}, err
	}
	if out.RequestID == "" || strings.ContainsAny(out.RequestID, "|/?#") {
		// Accepted, but there is nothing to poll: a person must look.
		return gengate.Progress{}, fmt.Errorf("fal: submit accepted without a usable request_id (%q)", e.client.Clean(out.RequestID))
	}
	return gengate.Progress{UpstreamID: req.endpoint + "|" + out.RequestID, RetryAfter: firstDelay(job)}, nil
}

// firstDelay is the wait before the first status read after a submit:
// firstImagePoll for an image, whatever the task's age (a task that waited
// in gengate's own queue is new to fal: reading it back only after as
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
// unknown); longer while fal reports a queue ahead of it.
func (e *Engine) delay(job gengate.Job, queuePosition int) time.Duration {
	d := videoDelay
	if job.Type != "video" {
		d = e.client.AgeDelay(job.CreatedAt, firstImagePoll, imageDelay)
	}
	return min(d+time.Duration(max(queuePosition, 0))*time.Second, max(maxDelay, d))
}

// parseID splits an upstream id into the status/result path prefix
// ("owner/app/requests/<id>") fal wants: only owner/app of the endpoint.
func parseID(id string) (prefix string, err error) {
	endpoint, reqID, ok := strings.Cut(id, "|")
	parts := strings.Split(endpoint, "/")
	if !ok || reqID == "" || len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", gengate.Errorf(gengate.EFailed, "fal: malformed upstream id %q", id)
	}
	return parts[0] + "/" + parts[1] + "/requests/" + reqID, nil
}

type status struct {
	Status        string `json:"status"`
	QueuePosition int    `json:"queue_position"`
	// Logs come with ?logs=1: the app's log lines so far.
	Logs []struct {
		Message string `json:"message"`
	} `json:"logs"`
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
}

// Check reads the request's status and, once completed, its result,
// downloading every output.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	prefix, err := parseID(upstreamID)
	if err != nil {
		return gengate.Progress{}, err
	}
	var st status
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: prefix + "/status?logs=1"}, &st); err != nil {
		return gengate.Progress{}, err
	}
	switch st.Status {
	case "IN_QUEUE", "IN_PROGRESS":
		return gengate.Progress{UpstreamID: upstreamID, RetryAfter: e.delay(job, st.QueuePosition), Report: st.report(e.client)}, nil
	case "COMPLETED":
	default:
		return gengate.Progress{}, fmt.Errorf("fal: unknown request status %q", e.client.Clean(st.Status))
	}
	res, err := e.result(ctx, prefix, st)
	if err != nil {
		return gengate.Progress{}, err
	}
	outs, err := e.download(ctx, job, res)
	if err != nil {
		return gengate.Progress{}, err
	}
	return gengate.Progress{UpstreamID: upstreamID, Outputs: outs, Cost: e.cost(ctx, job, res)}, nil
}

type file struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

type result struct {
	Images []file `json:"images"`
	Image  *file  `json:"image"`
	Video  *file  `json:"video"`
	Videos []file `json:"videos"`
	NSFW   []bool `json:"has_nsfw_concepts"`
}

// result reads a completed request's result. A completed request whose
// result is an error answer (fal stores the app's error status and body)
// failed for good.
func (e *Engine) result(ctx context.Context, prefix string, st status) (result, error) {
	c := *e.client
	var failStatus int
	var failBody []byte
	c.Explain = func(s int, body []byte) (string, string) {
		failStatus, failBody = s, body
		return explain(s, body)
	}
	var res result
	err := c.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: prefix}, &res)
	if err == nil {
		return res, nil
	}
	if failStatus == 0 || failStatus == http.StatusTooManyRequests || (!falError(failBody) && st.Error == "") {
		return res, err // busy, or not an answer from the app: try again later
	}
	code, msg := explain(failStatus, failBody)
	if failStatus == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "in progress") {
		// The status read ran ahead of the result: come back shortly.
		return res, &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Status: failStatus,
			Message: "fal result not ready yet", RetryAfter: imageDelay}
	}
	if code == "" {
		code, msg = explainStatus(st)
	}
	if msg == "" {
		msg = st.Error
	}
	return res, &gengate.UpstreamError{Kind: gengate.Failed, Code: code, Status: failStatus,
		Message: "fal request failed: " + c.Clean(msg)}
}

// download fetches every output file of a result.
func (e *Engine) download(ctx context.Context, job gengate.Job, res result) ([]gengate.Output, error) {
	var urls []string
	flagged := 0
	for i, f := range res.Images {
		if i < len(res.NSFW) && res.NSFW[i] {
			flagged++ // fal blanks images its safety checker flags
			continue
		}
		urls = append(urls, f.URL)
	}
	for _, f := range append([]*file{res.Image, res.Video}, ptrs(res.Videos)...) {
		if f != nil {
			urls = append(urls, f.URL)
		}
	}
	kind := job.Type
	if kind != "video" {
		kind = "image"
	}
	var outs []gengate.Output
	for _, u := range urls {
		if u == "" {
			continue
		}
		var out gengate.Output
		var err error
		if strings.HasPrefix(u, "data:") {
			out, err = upstream.Base64Output(u, kind)
		} else {
			out, err = e.client.Download(ctx, u, kind)
		}
		if err != nil {
			gengate.CloseOutputs(outs)
			if gone(err) {
				return nil, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
					Message: "fal deleted the request's outputs before they were copied"}
			}
			return nil, err
		}
		outs = append(outs, out)
	}
	if len(outs) == 0 {
		if flagged > 0 {
			return nil, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeContentPolicy,
				Message: "fal's safety checker flagged every output"}
		}
		return nil, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "fal completed the request without outputs"}
	}
	return outs, nil
}

func ptrs(fs []file) []*file {
	out := make([]*file, len(fs))
	for i := range fs {
		out[i] = &fs[i]
	}
	return out
}

// gone reports whether a download failed because the file no longer
// exists. upstream.Download reports other statuses than 429/5xx as a plain
// error whose text names the status.
func gone(err error) bool {
	if _, ok := err.(*gengate.UpstreamError); ok {
		return false
	}
	s := err.Error()
	return strings.HasSuffix(s, "answered 404") || strings.HasSuffix(s, "answered 410")
}

// Cancel asks fal to cancel the request: a queued one is removed, a
// running one is signalled. An already completed request is not an error.
func (e *Engine) Cancel(ctx context.Context, job gengate.Job, upstreamID string) error {
	prefix, err := parseID(upstreamID)
	if err != nil {
		return err
	}
	c := *e.client
	var failStatus int
	c.Explain = func(s int, body []byte) (string, string) {
		failStatus = s
		return explain(s, body)
	}
	err = c.Poll(ctx, upstream.Request{Method: http.MethodPut, Path: prefix + "/cancel"}, nil)
	if err != nil && failStatus == http.StatusBadRequest {
		return nil // ALREADY_COMPLETED
	}
	return err
}

// falError reports whether body is one of fal's error shapes:
// {"detail": "..."} or {"detail": [{loc, msg, type}]}.
func falError(body []byte) bool {
	var v struct {
		Detail json.RawMessage `json:"detail"`
	}
	return json.Unmarshal(body, &v) == nil && len(v.Detail) > 0
}

// explain reads fal's error bodies into a failure code and a message:
// model validation errors {"detail":[{loc,msg,type}]} are the input's
// fault unless their type is a content-policy one; request errors
// {"detail": "...", "error_type": "..."} are the upstream's.
func explain(status int, body []byte) (code, msg string) {
	msg = upstream.Message(body)
	var v struct {
		Detail    json.RawMessage `json:"detail"`
		ErrorType string          `json:"error_type"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", msg
	}
	var list []struct {
		Type string `json:"type"`
		Msg  string `json:"msg"`
	}
	if json.Unmarshal(v.Detail, &list) == nil && len(list) > 0 {
		for _, it := range list {
			if policy(it.Type) || policy(it.Msg) {
				return gengate.CodeContentPolicy, msg
			}
		}
		if status/100 == 4 {
			return gengate.CodeRejectedInput, msg
		}
		return "", msg
	}
	if policy(v.ErrorType) || policy(msg) {
		return gengate.CodeContentPolicy, msg
	}
	return "", msg
}

// explainStatus reads the error fields of a status answer.
func explainStatus(st status) (code, msg string) {
	if policy(st.ErrorType) || policy(st.Error) {
		return gengate.CodeContentPolicy, st.Error
	}
	return gengate.CodeUpstream, st.Error
}

// policy reports whether a fal error type or message is a safety refusal.
func policy(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"content_policy", "content policy", "nsfw", "safety", "moderat", "flagged"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
