package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// First poll delays: image answers come with the submit; a URL download
// retried later is quick; videos take minutes.
const (
	imageRetry = 2 * time.Second
	videoRetry = 10 * time.Second
)

// Upstream id prefixes: what Check is asked to look at.
const (
	videoPrefix = "video:"
	urlsPrefix  = "urls:"
)

var (
	_ gengate.Engine    = (*Engine)(nil)
	_ gengate.Validator = (*Engine)(nil)
	_ gengate.Canceler  = (*Engine)(nil)

	_ gengate.InputStreamer = (*Engine)(nil)
)

// Config configures an engine: APIKey is sent as a bearer token
// (compatible servers may need none); BaseURL defaults to DefaultBaseURL
// for New and is required by NewCompatible.
type Config = upstream.Config

// Engine runs image and video jobs on OpenAI, or image jobs on a server
// that speaks OpenAI's Images API. It keeps nothing between calls: Check
// works from the job and the upstream id alone.
type Engine struct {
	name       string
	compatible bool
	client     *upstream.Client
	now        func() time.Time
}

// New returns the engine for OpenAI itself, named "openai".
func New(cfg Config) *Engine {
	return newEngine("openai", false, cfg, DefaultBaseURL)
}

// NewCompatible returns an engine named name for a server that speaks
// OpenAI's Images API at cfg.BaseURL (which it needs; without one every
// submit is refused). Such servers may answer with `url` items instead of
// `b64_json`; both are handled.
func NewCompatible(name string, cfg Config) *Engine {
	return newEngine(name, true, cfg, "")
}

func newEngine(name string, compatible bool, cfg Config, def string) *Engine {
	c := upstream.NewClient(name, cfg, def, "Authorization", "Bearer ", explain)
	if !compatible {
		c.Resend, c.MaxResends, c.ResendDelay = openaiResends, 2, 500*time.Millisecond
		if cfg.ResendDelay > 0 {
			c.ResendDelay = cfg.ResendDelay
		}
	}
	return &Engine{name: name, compatible: compatible, client: c, now: time.Now}
}

// openaiResends is openai-go's rule for sending a request again
// (internal/requestconfig/requestconfig.go shouldRetry, commit 4e5a07a,
// 2026-08-21; MaxRetries 2, delays from 0.5 s): an x-should-retry header
// decides when present; otherwise 408, 409, 429 and every 5xx are sent
// again. gengate follows it for OpenAI's own API only, and sends every
// attempt with the same Idempotency-Key; a lost answer (no status) is not
// sent again here, though openai-go would.
func openaiResends(status int, hdr http.Header) bool {
	if status == 0 {
		return false
	}
	switch hdr.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// StreamsInputs says Submit reads large inputs from storage as it sends
// them (gengate.InputStreamer).
func (e *Engine) StreamsInputs() bool { return true }

// Name returns "openai", or the compatible server's configured name.
func (e *Engine) Name() string { return e.name }

// Repeatable returns false: a submit starts paid work.
func (e *Engine) Repeatable() bool { return false }

// Validate says whether the routed upstream can do every option and input
// of job, with an UNSUPPORTED_MODEL_OPTION error naming the first it
// cannot.
func (e *Engine) Validate(job gengate.Job) error {
	_, err := e.plan(job)
	return err
}

// Submit starts the job: images come back in the answer, videos as an
// upstream id to Check.
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	r, err := e.plan(job)
	if err != nil {
		return gengate.Progress{}, err
	}
	if r.video {
		return e.submitVideo(ctx, job, r)
	}
	return e.submitImages(ctx, job, r)
}

// Check reads the state of a video, or downloads image outputs an earlier
// step could not.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	switch {
	case strings.HasPrefix(upstreamID, videoPrefix):
		return e.checkVideo(ctx, upstreamID)
	case strings.HasPrefix(upstreamID, urlsPrefix):
		var urls []string
		if err := json.Unmarshal([]byte(upstreamID[len(urlsPrefix):]), &urls); err != nil || len(urls) == 0 {
			return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "%s: malformed upstream id", e.name)
		}
		return e.downloadImages(ctx, urls)
	}
	return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "%s: malformed upstream id %q", e.name, upstreamID)
}

// Cancel deletes a video, the closest the Videos API has to a cancel.
// Image jobs finish inside their submit: there is nothing to cancel.
func (e *Engine) Cancel(ctx context.Context, job gengate.Job, upstreamID string) error {
	id, ok := strings.CutPrefix(upstreamID, videoPrefix)
	if !ok {
		return nil
	}
	return e.client.Poll(ctx, upstream.Request{Method: http.MethodDelete, Path: "/videos/" + url.PathEscape(id)}, nil)
}

// imagesAnswer is the Images API's answer.
type imagesAnswer struct {
	Data []struct {
		B64JSON string `json:"b64_json"`
		URL     string `json:"url"`
	} `json:"data"`
	Usage *usage `json:"usage"`
}

// SyncImageTimeout bounds one synchronous Images API call.
const SyncImageTimeout = 5 * time.Minute

func (e *Engine) submitImages(ctx context.Context, job gengate.Job, r *request) (gengate.Progress, error) {
	// GPT image calls answer synchronously and may take minutes; the
	// service renews the task lease meanwhile.
	req := upstream.Request{Method: http.MethodPost, Path: "/images/generations", Header: e.createHeader(job), Timeout: SyncImageTimeout}
	if r.image != "" {
		imageField := "image[]"
		if e.compatible {
			imageField = "image"
		}
		files := []file{{imageField, job.Inputs[r.image]}}
		if r.mask != "" {
			files = append(files, file{"mask", job.Inputs[r.mask]})
		}
		req.Path = "/images/edits"
		var done func()
		var err error
		if req, done, err = multipartBody(ctx, req, r.fields, files); err != nil {
			return gengate.Progress{}, err
		}
		defer done()
	} else {
		req.JSON = r.fields
	}
	var ans imagesAnswer
	if err := e.submit(ctx, req, &ans); err != nil {
		return gengate.Progress{}, err
	}
	var outs []gengate.Output
	var urls []string
	for _, d := range ans.Data {
		switch {
		case d.B64JSON != "" || strings.HasPrefix(d.URL, "data:"):
			// Some compatible servers put a data: URL in "url".
			src := d.B64JSON
			if src == "" {
				src = d.URL
			}
			o, err := upstream.Base64Output(src, "image")
			if err != nil {
				return gengate.Progress{}, err
			}
			outs = append(outs, o)
		case d.URL != "":
			urls = append(urls, d.URL)
		}
	}
	upstreamID := ""
	if len(urls) > 0 {
		p, err := e.downloadImages(ctx, urls)
		var ue *gengate.UpstreamError
		switch {
		case err == nil && len(outs) == 0:
			// Should storing the streamed files fail, the service checks
			// this id: a later step downloads them again.
			b, _ := json.Marshal(urls)
			upstreamID, outs = urlsPrefix+string(b), p.Outputs
		case err == nil:
			outs = append(outs, p.Outputs...)
		case len(outs) > 0:
			// Deliver the inline images: fewer than asked, but done.
		case errors.As(err, &ue) && ue.Kind == gengate.Failed:
			return gengate.Progress{}, err
		default:
			// The work is done and paid for: fetch its files in a later
			// step rather than let the service see a failed submit.
			b, _ := json.Marshal(urls)
			return gengate.Progress{UpstreamID: urlsPrefix + string(b), RetryAfter: imageRetry}, nil
		}
	}
	if len(outs) == 0 {
		return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: e.name + " answered with no images"}
	}
	return gengate.Progress{UpstreamID: upstreamID, Outputs: outs, Cost: e.cost(job, ans.Usage)}, nil
}

// downloadImages fetches every image URL. Busy answers come back as they
// are (Check is called again); a file that is gone is a failure.
func (e *Engine) downloadImages(ctx context.Context, urls []string) (gengate.Progress, error) {
	outs := make([]gengate.Output, 0, len(urls))
	for _, u := range urls {
		o, err := e.client.Download(ctx, u, "image")
		if err != nil {
			gengate.CloseOutputs(outs)
			return gengate.Progress{}, e.gone(err)
		}
		outs = append(outs, o)
	}
	return gengate.Progress{Outputs: outs}, nil
}

// gone turns a download's definite error (a 4xx answer: the file has
// expired or was never there) into a failure; Busy and Failed errors pass.
func (e *Engine) gone(err error) error {
	var ue *gengate.UpstreamError
	if errors.As(err, &ue) {
		return err
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
		Message: e.client.Clean(err.Error()) + " (the output is no longer available)"}
}

// video is the Videos API's video object.
type video struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Progress  int    `json:"progress"`
	ExpiresAt int64  `json:"expires_at"`
	Error     *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (e *Engine) submitVideo(ctx context.Context, job gengate.Job, r *request) (gengate.Progress, error) {
	req := upstream.Request{Method: http.MethodPost, Path: "/videos", Header: e.createHeader(job)}
	if r.image != "" {
		var done func()
		var err error
		if req, done, err = multipartBody(ctx, req, r.fields, []file{{"input_reference", job.Inputs[r.image]}}); err != nil {
			return gengate.Progress{}, err
		}
		defer done()
	} else {
		req.JSON = r.fields
	}
	var v video
	if err := e.submit(ctx, req, &v); err != nil {
		return gengate.Progress{}, err
	}
	if v.ID == "" {
		return gengate.Progress{}, fmt.Errorf("%s: video accepted but its answer has no id", e.name)
	}
	if v.Status == "failed" {
		return gengate.Progress{}, e.videoFailed(v)
	}
	return gengate.Progress{UpstreamID: videoPrefix + v.ID, RetryAfter: videoRetry}, nil
}

func (e *Engine) checkVideo(ctx context.Context, upstreamID string) (gengate.Progress, error) {
	id := strings.TrimPrefix(upstreamID, videoPrefix)
	var v video
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/videos/" + url.PathEscape(id)}, &v); err != nil {
		return gengate.Progress{}, err
	}
	switch v.Status {
	case "queued", "in_progress", "":
		wait := videoRetry
		if v.Progress >= 80 {
			wait = videoRetry / 2
		}
		pct := float64(v.Progress) // the video object's own 0–100
		return gengate.Progress{UpstreamID: upstreamID, RetryAfter: wait,
			Report: &gengate.Report{Status: v.Status, Percent: &pct}}, nil
	case "completed":
		if v.ExpiresAt > 0 && e.now().Unix() > v.ExpiresAt {
			return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
				Message: e.name + ": the video expired before it was downloaded"}
		}
		o, err := e.client.Download(ctx, "/videos/"+url.PathEscape(id)+"/content", "video")
		if err != nil {
			return gengate.Progress{}, e.gone(err)
		}
		return gengate.Progress{Outputs: []gengate.Output{o}}, nil
	case "failed":
		return gengate.Progress{}, e.videoFailed(v)
	}
	return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
		Message: fmt.Sprintf("%s: the video is %s", e.name, e.client.Clean(v.Status))}
}

func (e *Engine) videoFailed(v video) error {
	code, msg := "", ""
	if v.Error != nil {
		code, msg = v.Error.Code, v.Error.Message
	}
	if msg == "" {
		msg = "the video failed"
	}
	c := gengate.CodeUpstream
	if safety(code, msg) {
		c = gengate.CodeContentPolicy
	} else if code == "invalid_request" || code == "invalid_input" || code == "invalid_value" {
		c = gengate.CodeRejectedInput
	}
	if code != "" {
		msg = code + ": " + msg
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: c, Message: e.name + ": " + e.client.Clean(msg)}
}

// createHeader is the header of a create request.
func (e *Engine) createHeader(job gengate.Job) http.Header {
	h := http.Header{}
	if job.TaskID != "" {
		h.Set("Idempotency-Key", "gengate-"+job.TaskID)
	}
	return h
}

// submit is Client.Submit with OpenAI's one exception to the rules: a 429
// for an exhausted quota will not pass by waiting, so it is Refused.
func (e *Engine) submit(ctx context.Context, r upstream.Request, out any) error {
	c := *e.client
	quota := false
	c.Explain = func(status int, body []byte) (string, string) {
		code, msg := explain(status, body)
		quota = status == http.StatusTooManyRequests && quotaExhausted(body)
		return code, msg
	}
	err := c.Submit(ctx, r, out)
	var ue *gengate.UpstreamError
	if quota && errors.As(err, &ue) && ue.Kind == gengate.Busy {
		ue.Kind, ue.RetryAfter = gengate.Refused, 0
	}
	return err
}

// apiError is OpenAI's error body.
type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   string `json:"param"`
		Code    any    `json:"code"` // a string, sometimes a number or null
	} `json:"error"`
}

func readError(body []byte) (apiError, bool) {
	var a apiError
	if json.Unmarshal(body, &a) != nil || (a.Error.Message == "" && a.Error.Type == "") {
		return a, false
	}
	return a, true
}

func (a apiError) code() string {
	if s, ok := a.Error.Code.(string); ok {
		return s
	}
	return ""
}

// explain reads OpenAI's error body for the upstream client.
func explain(status int, body []byte) (code, message string) {
	a, ok := readError(body)
	if !ok {
		return "", ""
	}
	msg := a.Error.Message
	if msg == "" {
		msg = a.Error.Type
	}
	switch c := a.code(); {
	case safety(c, msg):
		return gengate.CodeContentPolicy, msg
	case c == "insufficient_quota" || c == "billing_hard_limit_reached" || a.Error.Type == "insufficient_quota",
		c == "invalid_api_key", status == http.StatusUnauthorized, status == http.StatusForbidden:
		// Not the caller's input.
		return gengate.CodeUpstream, msg
	}
	return "", msg
}

func quotaExhausted(body []byte) bool {
	a, ok := readError(body)
	return ok && (a.code() == "insufficient_quota" || a.Error.Type == "insufficient_quota")
}

// safety reports whether an error code or message is a moderation refusal.
func safety(code, msg string) bool {
	switch code {
	case "content_policy_violation", "moderation_blocked", "content_filter":
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "safety system") || strings.Contains(m, "moderation")
}

// file is one file part of a multipart request.
type file struct {
	field string
	in    gengate.Input
}

// multipartBody sets req's body to fields and files as
// multipart/form-data. Values that are not strings, numbers or booleans
// are sent as JSON. The files are read from the inputs (their bytes, or
// the stored file of a large one) as the request is sent (upstream.Form),
// not copied into a buffer first; done closes them once it is sent.
func multipartBody(ctx context.Context, req upstream.Request, fields map[string]any, files []file) (_ upstream.Request, done func(), err error) {
	var open []io.Closer
	done = func() {
		for _, c := range open {
			c.Close()
		}
	}
	defer func() {
		if err != nil {
			done()
		}
	}()
	form := upstream.NewForm()
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		var s string
		switch v := fields[k].(type) {
		case string:
			s = v
		case int, int64, float64, bool:
			s = fmt.Sprint(v)
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return req, done, fmt.Errorf("encode field %s: %w", k, err)
			}
			s = string(b)
		}
		form.Field(k, s)
	}
	for _, f := range files {
		ct := f.in.ContentType
		if ct == "" {
			ct = http.DetectContentType(f.in.Data)
		}
		ext := map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}[ct]
		if ext == "" {
			ext = "bin"
		}
		r, n, err := upstream.InputReader(ctx, f.in)
		if err != nil {
			return req, done, err
		}
		open = append(open, r)
		form.File(f.field, strings.Trim(f.field, "[]")+"."+ext, ct, r, n)
	}
	return form.Request(req), done, nil
}
