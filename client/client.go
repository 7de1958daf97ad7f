// Package client is a Go client of the gengate HTTP API.
//
// It handles what every caller otherwise writes by hand:
//
//   - authentication: the API key as Authorization: Bearer;
//   - idempotency: every generate call carries an Idempotency-Key, generated
//     per call unless given, and reused when the call is retried after a
//     network error, a 429 or a 503, so a retry never pays twice;
//   - Prefer: respond-async or wait=N, per call;
//   - 202 Accepted: polling the task's statusUrl as its Retry-After says,
//     until it finishes or the context ends;
//   - 409 review and every other refusal as an *Error value carrying the
//     problem's code, HTTP status, field errors and extensions;
//   - uploads (POST /api/v1/files) and downloads of output files.
//
// A typical call:
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("GENGATE_KEY"))
//	job, err := c.Generate(ctx, client.Request{ModelID: "flux", Prompt: "a lighthouse"})
//	var e *client.Error
//	switch {
//	case errors.As(err, &e) && e.Code == client.CodeInsufficientCredits:
//		// top up
//	case err != nil:
//		return err
//	}
//	for _, url := range job.Outputs() { ... }
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Error codes a caller may switch on (docs/api.md lists them all).
const (
	CodeInvalid             = "INVALID_REQUEST"
	CodeUnsupportedOption   = "UNSUPPORTED_MODEL_OPTION"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeInsufficientCredits = "INSUFFICIENT_CREDITS"
	CodeNotFound            = "NOT_FOUND"
	CodeNeedsReview         = "GENERATION_NEEDS_REVIEW"
	CodeKeyReused           = "IDEMPOTENCY_KEY_REUSED"
	CodeRateLimited         = "RATE_LIMITED"
	CodeFailed              = "GENERATION_FAILED"
	CodeTooLarge            = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMedia    = "UNSUPPORTED_MEDIA_TYPE"
	CodeInternal            = "INTERNAL"
)

// ErrCancelUnsupported is returned by Cancel when the server has no cancel
// endpoint.
var ErrCancelUnsupported = errors.New("gengate: this server does not support canceling tasks yet")

// Error is a refusal or failure the API answered: an RFC 9457 problem.
type Error struct {
	// Status is the HTTP status, Code the problem's stable code.
	Status  int
	Code    string
	Message string
	// Fields names each bad field of an invalid request.
	Fields []FieldError
	// RequestID identifies the request in the server's logs.
	RequestID string
	// JobID names the task of a GENERATION_FAILED or GENERATION_NEEDS_REVIEW
	// answer, or the original task of IDEMPOTENCY_KEY_REUSED.
	JobID string
	// Reason is a failed task's reason (CONTENT_POLICY, DEADLINE_EXCEEDED, ...).
	Reason string
	// RetryAfter is the Retry-After of a 429 or 503, zero otherwise.
	RetryAfter time.Duration
	// Extra holds the problem's other members (remainingCredits,
	// requiredCredits, refunded, ...).
	Extra map[string]any
}

// FieldError is one bad field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("gengate: %d %s: %s", e.Status, e.Code, e.Message)
	if len(e.Fields) > 0 && !strings.Contains(e.Message, e.Fields[0].Field) {
		s += fmt.Sprintf(" (%s: %s)", e.Fields[0].Field, e.Fields[0].Message)
	}
	return s
}

// Client calls one gengate server. It is safe for concurrent use.
type Client struct {
	base string
	key  string
	http *http.Client
	// retries is how many times a call is retried after a network error,
	// a 429 or a 503.
	retries int
	// maxPoll caps the wait between two polls.
	maxPoll time.Duration

	modelsMu sync.Mutex
	models   map[string]Model
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: one with no overall timeout,
// since a synchronous generate may wait minutes; bound calls with contexts).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries sets how many times a call is retried after a network error,
// a 429 or a 503 (default 3). Generate calls are retried with the same
// Idempotency-Key.
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(n, 0) } }

// WithMaxPollInterval caps the wait between two polls of a task (default
// 30 s; the server's Retry-After is followed below it).
func WithMaxPollInterval(d time.Duration) Option { return func(c *Client) { c.maxPoll = d } }

// New returns a client of the server at baseURL (e.g.
// "http://127.0.0.1:8080") with an API key.
func New(baseURL, key string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: key, http: &http.Client{}, retries: 3, maxPoll: 30 * time.Second}
	for _, o := range opts {
		o(c)
	}
	return c
}

// newKey returns a fresh Idempotency-Key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "gengate-go-" + hex.EncodeToString(b[:])
}

// call is one API request.
type call struct {
	method, path string
	body         []byte
	contentType  string
	header       http.Header
}

// do sends c, retrying network errors, 429 and 503 answers with backoff
// (or their Retry-After), and returns the final response read whole.
func (cl *Client) do(ctx context.Context, c call) (*http.Response, []byte, error) {
	for attempt := 0; ; attempt++ {
		resp, body, err := cl.once(ctx, c)
		retry := err != nil && ctx.Err() == nil
		var wait time.Duration
		if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			retry = true
			wait = retryAfter(resp.Header)
		}
		if !retry || attempt >= cl.retries {
			return resp, body, err
		}
		if wait == 0 {
			wait = time.Duration(math.Pow(2, float64(attempt))) * 250 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func (cl *Client) once(ctx context.Context, c call) (*http.Response, []byte, error) {
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	u := c.path
	if strings.HasPrefix(u, "/") {
		u = cl.base + u
	}
	req, err := http.NewRequestWithContext(ctx, c.method, u, body)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if cl.key != "" {
		req.Header.Set("Authorization", "Bearer "+cl.key)
	}
	req.Header.Set("User-Agent", "gengate-go-client/1")
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, data, nil
}

// retryAfter reads a Retry-After in seconds, zero when absent.
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// apiError reads a problem body into an *Error.
func apiError(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header), Extra: map[string]any{}}
	var raw map[string]any
	if json.Unmarshal(body, &raw) != nil {
		e.Code, e.Message = CodeInternal, strings.TrimSpace(string(body))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return e
	}
	for k, v := range raw {
		s, _ := v.(string)
		switch k {
		case "code":
			e.Code = s
		case "detail":
			e.Message = s
		case "requestId":
			e.RequestID = s
		case "jobId":
			e.JobID = s
		case "reason":
			e.Reason = s
		case "errors":
			b, _ := json.Marshal(v)
			_ = json.Unmarshal(b, &e.Fields)
		case "type", "title", "status":
		default:
			e.Extra[k] = v
		}
	}
	return e
}

// Request is a generation request. Type is filled in from the model list
// when empty.
type Request struct {
	Type    string
	ModelID string
	Prompt  string
	// Inputs maps input fields to file URLs: "imageUrl", "mask", ... and
	// "inputs.videoUrl" for the nested ones. URLs from Upload work here.
	Inputs map[string]string
	// Options holds model options: "aspectRatio": "16:9", "numOutputs": 2.
	Options map[string]any
}

// CallOptions change one generate call.
type CallOptions struct {
	// IdempotencyKey is sent as Idempotency-Key; empty generates one for
	// the call (reused on its retries).
	IdempotencyKey string
	// Async asks for an immediate 202 (Prefer: respond-async).
	Async bool
	// Wait, when above zero, caps the server's synchronous wait (Prefer:
	// wait=N, whole seconds).
	Wait time.Duration
	// Progress, when set, is called with the job each time it is polled.
	Progress func(*Job)
}

// Job is a task as the API shows it.
type Job struct {
	ID string `json:"jobId"`
	// Status is processing (not finished), or finished: succeeded,
	// failed, needs_review (held for an operator) or canceled.
	Status    string   `json:"status"`
	StatusURL string   `json:"statusUrl"`
	Type      string   `json:"type,omitempty"`
	ModelID   string   `json:"modelId,omitempty"`
	Cost      int      `json:"cost,omitempty"`
	Images    []string `json:"images,omitempty"`
	Video     string   `json:"video,omitempty"`
	// RemainingCredits is the balance after the call, when the answer
	// carries it.
	RemainingCredits *int      `json:"remainingCredits,omitempty"`
	CreatedAt        time.Time `json:"createdAt,omitzero"`
	UpdatedAt        time.Time `json:"updatedAt,omitzero"`
	CompletedAt      time.Time `json:"completedAt,omitzero"`
	// Error explains a failed task or one in review (GET answers).
	Error *JobError `json:"error,omitempty"`
	// Route is the engine and upstream model working on the task, once
	// one took it (GET answers).
	Route *Route `json:"route,omitempty"`
	// Progress is what the engine last learned of the unfinished work,
	// when it reported anything (GET answers).
	Progress *Progress `json:"progress,omitempty"`
	// RetryAfter is the server's advice on when to ask again.
	RetryAfter time.Duration `json:"-"`
	// Raw is the answer's JSON body.
	Raw json.RawMessage `json:"-"`
}

// Route is the route member of a task record.
type Route struct {
	Engine   string `json:"engine"`
	Upstream string `json:"upstream,omitempty"`
}

// Progress is the progress member of a task record: the upstream's queue
// position, its status word, a percentage where it gives one, and its
// latest log lines.
type Progress struct {
	// QueuePosition is the number of requests ahead upstream; nil when
	// unknown or no longer queued.
	QueuePosition *int `json:"queuePosition,omitempty"`
	// UpstreamStatus is the upstream's own status ("IN_QUEUE").
	UpstreamStatus string `json:"upstreamStatus,omitempty"`
	// Percent is 0–100, nil when the upstream gives none.
	Percent   *float64  `json:"percent,omitempty"`
	Logs      []string  `json:"logs,omitempty"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// JobError is the error member of a task record.
type JobError struct {
	Code            string `json:"code"`
	Message         string `json:"message"`
	Reason          string `json:"reason,omitempty"`
	Refunded        bool   `json:"refunded,omitempty"`
	CreditsRefunded int    `json:"creditsRefunded,omitempty"`
}

// Done reports whether the job has finished (in any state).
func (j *Job) Done() bool { return j.Status != "processing" }

// Outputs returns the job's output URLs: its images, or its video.
func (j *Job) Outputs() []string {
	if j.Video != "" {
		return []string{j.Video}
	}
	return j.Images
}

func parseJob(resp *http.Response, body []byte) (*Job, error) {
	j := &Job{}
	if err := json.Unmarshal(body, j); err != nil {
		return nil, fmt.Errorf("gengate: unreadable answer (%d): %w", resp.StatusCode, err)
	}
	j.Raw = append(json.RawMessage(nil), body...)
	j.RetryAfter = retryAfter(resp.Header)
	if j.Status == "" && resp.StatusCode == http.StatusOK {
		j.Status = "succeeded"
	}
	if j.StatusURL == "" && j.ID != "" {
		j.StatusURL = "/api/generation/jobs/" + j.ID
	}
	return j, nil
}

// body builds the JSON generate body of r.
func (cl *Client) body(ctx context.Context, r Request) ([]byte, error) {
	if r.Type == "" {
		m, err := cl.Model(ctx, r.ModelID)
		if err != nil {
			return nil, err
		}
		r.Type = m.Type
	}
	b := map[string]any{"type": r.Type, "modelId": r.ModelID}
	if r.Prompt != "" {
		b["prompt"] = r.Prompt
	}
	for k, v := range r.Options {
		b[k] = v
	}
	nested := map[string]any{}
	for k, v := range r.Inputs {
		if name, ok := strings.CutPrefix(k, "inputs."); ok {
			nested[name] = v
		} else {
			b[k] = v
		}
	}
	if len(nested) > 0 {
		b["inputs"] = nested
	}
	return json.Marshal(b)
}

// Submit sends a generate call and returns the job as the server answered:
// finished (Status "succeeded") or processing (a 202; see Wait). A task in
// review or failed is an *Error (GENERATION_NEEDS_REVIEW, GENERATION_FAILED)
// carrying its JobID.
func (cl *Client) Submit(ctx context.Context, r Request, o CallOptions) (*Job, error) {
	body, err := cl.body(ctx, r)
	if err != nil {
		return nil, err
	}
	key := o.IdempotencyKey
	if key == "" {
		key = newKey()
	}
	h := http.Header{"Idempotency-Key": {key}}
	switch {
	case o.Async:
		h.Set("Prefer", "respond-async")
	case o.Wait > 0:
		h.Set("Prefer", "wait="+strconv.Itoa(int(math.Ceil(o.Wait.Seconds()))))
	}
	resp, data, err := cl.do(ctx, call{method: "POST", path: "/api/v1/generate", body: body, contentType: "application/json", header: h})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return nil, apiError(resp, data)
	}
	return parseJob(resp, data)
}

// Generate sends a generate call and, if the server answers 202, polls the
// task until it finishes. It returns the succeeded job, or an *Error.
func (cl *Client) Generate(ctx context.Context, r Request, opts ...CallOptions) (*Job, error) {
	var o CallOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Async = false
	j, err := cl.Submit(ctx, r, o)
	if err != nil {
		return j, err
	}
	if j.Done() {
		// A synchronous answer carries the outputs and the balance only:
		// the task's record gives the rest (type, model, cost, times).
		full, ferr := cl.Job(ctx, j.ID)
		if ferr != nil {
			return j, nil // the generation succeeded; its record can be read later
		}
		full.RemainingCredits = j.RemainingCredits
		return full, jobError(full)
	}
	if o.Progress != nil {
		o.Progress(j)
	}
	return cl.Wait(ctx, j.ID, o.Progress)
}

// Job reads a task record (GET on its statusUrl).
func (cl *Client) Job(ctx context.Context, id string) (*Job, error) {
	resp, data, err := cl.do(ctx, call{method: "GET", path: "/api/generation/jobs/" + url.PathEscape(id)})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, apiError(resp, data)
	}
	return parseJob(resp, data)
}

// Wait polls a task, as its Retry-After says, until it finishes or ctx
// ends; progress (optional) sees each poll. A succeeded task is returned;
// a failed one, or one in review, is an *Error with the task's code and
// JobID.
func (cl *Client) Wait(ctx context.Context, id string, progress func(*Job)) (*Job, error) {
	for {
		j, err := cl.Job(ctx, id)
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(j)
		}
		if j.Done() {
			return j, jobError(j)
		}
		wait := min(max(j.RetryAfter, time.Second), cl.maxPoll)
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// jobError is the *Error of a finished task that did not succeed.
func jobError(j *Job) error {
	if j.Status == "succeeded" {
		return nil
	}
	e := &Error{Status: http.StatusOK, Code: CodeFailed, JobID: j.ID, Message: "the generation " + j.Status, Extra: map[string]any{}}
	if j.Error != nil {
		e.Code, e.Message, e.Reason = j.Error.Code, j.Error.Message, j.Error.Reason
		e.Extra["refunded"], e.Extra["creditsRefunded"] = j.Error.Refunded, j.Error.CreditsRefunded
	}
	return e
}

// Cancel asks the server to cancel a task (POST .../cancel) and returns
// the task as it then is; docs/api.md says what is refunded when. A server
// without the cancel endpoint answers ErrCancelUnsupported.
func (cl *Client) Cancel(ctx context.Context, id string) (*Job, error) {
	if _, err := cl.Job(ctx, id); err != nil {
		return nil, err // an unknown task is NOT_FOUND, whatever the server supports
	}
	resp, data, err := cl.do(ctx, call{method: "POST", path: "/api/generation/jobs/" + url.PathEscape(id) + "/cancel"})
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return nil, ErrCancelUnsupported
	case resp.StatusCode >= 300:
		return nil, apiError(resp, data)
	}
	return parseJob(resp, data)
}
