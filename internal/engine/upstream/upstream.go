// Package upstream is what the provider engines (fal, replicate, openai,
// google, comfyui) share: an HTTP client that classifies an upstream's
// answers into the gengate.UpstreamError kinds the service acts on, output
// downloads streamed with type checks, data URIs for inputs, and the
// cleaning of secrets from upstream messages.
//
// The classification is the heart of crash safety: a create that may have
// reached the provider is never sent again unless the provider's own client
// would send it again (docs/providers.md, "When a create is sent again"). A
// submit whose request never left this process (dial failed, connection
// refused) or that got a 4xx answer other than 408 and 429 was definitely
// not accepted: Refused, and the next route may take it. A 429, and what
// the provider's rule (Client.NotAccepted) names, such as fal's ingress
// errors, means nothing was created: Busy, come back later. Every other
// answer after the request was sent (a 5xx, a 408, a timeout, a reset, an
// unreadable 2xx) is ambiguous: a plain error, after which the service
// looks for the work (gengate.Finder) or holds the task for review, and
// never submits it again. Only where the provider's client itself sends a
// create again on such an answer (Client.Resend: openai-go) does Submit
// send it again, in the same call, as that client would. While polling,
// every failure is Busy or ambiguous; the task's deadline bounds them.
package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
)

// Timeouts for one call; the task's step lease is longer than each.
const (
	SubmitTimeout = 60 * time.Second
	PollTimeout   = 30 * time.Second
	// DefaultDownloadTimeout bounds one whole output download, reading
	// into storage included (Config.DownloadTimeout, the
	// --output-download-timeout flag).
	DefaultDownloadTimeout = 5 * time.Minute
	// maxBody caps a JSON answer (base64 images can be large).
	maxBody = 256 << 20
)

// Client sends requests to one provider.
type Client struct {
	// Name is the provider's name, used in messages ("fal").
	Name string
	// BaseURL is prefixed to relative paths.
	BaseURL string
	HTTP    *http.Client
	// Auth sets the credentials on a request. It is called only for
	// requests to BaseURL's scheme, host and port (see Own).
	Auth func(*http.Request)
	// AllowPrivate lets requests to hosts other than the provider's own
	// (output files) go to loopback and private addresses; without it they
	// pass the same address guard as input fetches.
	AllowPrivate bool
	// guard is the guarded transport for other hosts; nil builds one per
	// call.
	guard http.RoundTripper
	// Secrets are removed from every message that leaves the client.
	Secrets []string
	// Explain reads an error answer's body: the failure code
	// (gengate.CodeRejectedInput, CodeContentPolicy, or "" for the default
	// of the status) and a message. Nil reads the usual shapes.
	Explain func(status int, body []byte) (code, message string)
	// NotAccepted reports whether an error answer to a submit proves that
	// the provider did not take the work, so that sending it again (later,
	// or on the next route) starts it at most once: the answers its own
	// client sends again without a second thought. Nil is a 429 only.
	NotAccepted func(status int, hdr http.Header) bool
	// Resend reports whether the provider's own client sends a submit
	// again after this answer although the provider may have taken it
	// (openai-go: 408, 409 and 5xx unless x-should-retry says false); it
	// is sent again in the same Submit at most MaxResends times, after
	// ResendDelay doubling (or the answer's Retry-After, up to a minute).
	// Nil never does: such answers are ambiguous.
	Resend      func(status int, hdr http.Header) bool
	MaxResends  int
	ResendDelay time.Duration
	// Now is the clock for Retry-After dates; nil is time.Now.
	Now func() time.Time
	// DownloadTimeout bounds one whole output download; 0 is
	// DefaultDownloadTimeout.
	DownloadTimeout time.Duration
	// baseOrigin is the origin of originOf, the BaseURL NewClient was
	// given: Own reads BaseURL again only when it has changed since.
	baseOrigin, originOf string
}

// Request is one HTTP request to the provider. Path may be absolute.
type Request struct {
	Method string
	Path   string
	// JSON is marshalled as the body when not nil; otherwise Body with
	// ContentType is sent.
	JSON        any
	Body        []byte
	ContentType string
	// BodyReader, when JSON and Body are nil, is the body, read as it is
	// sent (a file from storage, a multipart Form) rather than copied
	// first; BodyLength is its length, sent as Content-Length (0 or less:
	// unknown, sent chunked).
	BodyReader io.Reader
	BodyLength int64
	Header     http.Header
	// Answer, when not nil, receives the headers of a 2xx answer (the
	// Gemini API's X-Goog-Upload-URL).
	Answer *http.Header
	// Timeout replaces SubmitTimeout or PollTimeout for this request (a
	// synchronous image API may need minutes).
	Timeout time.Duration
}

func timeout(r Request, def time.Duration) time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return def
}

func (c *Client) url(p string) string {
	if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
		return p
	}
	return strings.TrimRight(c.BaseURL, "/") + "/" + strings.TrimLeft(p, "/")
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// do sends req and returns the status, the body and whether the request
// was written to the connection (so the upstream may have seen it).
func (c *Client) do(ctx context.Context, r Request) (status int, hdr http.Header, body []byte, sent bool, err error) {
	var rd io.Reader
	ctype := r.ContentType
	if r.JSON != nil {
		b, err := json.Marshal(r.JSON)
		if err != nil {
			return 0, nil, nil, false, fmt.Errorf("%s: encode request: %w", c.Name, err)
		}
		rd, ctype = bytes.NewReader(b), "application/json"
	} else if r.Body != nil {
		rd = bytes.NewReader(r.Body)
	} else if r.BodyReader != nil {
		rd = io.NopCloser(r.BodyReader) // never rewound: a lost connection is not retried
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.url(r.Path), rd)
	if err != nil {
		return 0, nil, nil, false, fmt.Errorf("%s: %s", c.Name, c.Clean(err.Error()))
	}
	if r.JSON == nil && r.Body == nil && r.BodyReader != nil && r.BodyLength > 0 {
		req.ContentLength = r.BodyLength
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "gengate")
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := c.client().Do(req)
	if err != nil {
		return 0, nil, nil, wrote.Load(), err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, resp.Header, nil, true, err
	}
	return resp.StatusCode, resp.Header, body, true, nil
}

// Submit sends a request that starts paid work and decodes a 2xx answer
// into out. Its errors follow the package rules: *gengate.UpstreamError
// Refused or Busy when the upstream definitely did not accept the work, a
// plain (ambiguous) error when it may have.
func (c *Client) Submit(ctx context.Context, r Request, out any) error {
	for resends := 0; ; resends++ {
		status, hdr, err := c.submitOnce(ctx, r, out)
		if err == nil || c.Resend == nil || resends >= c.MaxResends || !c.Resend(status, hdr) ||
			(r.JSON == nil && r.Body == nil && r.BodyReader != nil) { // a streamed body cannot be sent again
			return err
		}
		wait := c.ResendDelay << resends
		if ra := RetryAfter(hdr.Get("Retry-After"), c.now()); ra > 0 && ra <= time.Minute {
			wait = ra
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// submitOnce sends a submit once: its error, and the status and headers
// of the error answer when there was one.
func (c *Client) submitOnce(ctx context.Context, r Request, out any) (int, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout(r, SubmitTimeout))
	defer cancel()
	status, hdr, body, sent, err := c.do(ctx, r)
	if err != nil {
		return 0, nil, c.submitFailed(sent, err)
	}
	if status/100 == 2 {
		if r.Answer != nil {
			*r.Answer = hdr
		}
		if out != nil {
			if err := json.Unmarshal(body, out); err != nil {
				return status, hdr, fmt.Errorf("%s: submit accepted (%d) but its answer is unreadable: %v", c.Name, status, err)
			}
		}
		return status, hdr, nil
	}
	e := c.answerError(status, hdr, body, true)
	if e.Kind == gengate.Busy && r.Method != http.MethodGet && !c.notAccepted(status, hdr) {
		// Sent, and answered with an error that does not say the work
		// was not taken: ambiguous.
		return status, hdr, fmt.Errorf("%s: %s; it may have started the work, so it is not sent again", c.Name, e.Message)
	}
	return status, hdr, e
}

func (c *Client) notAccepted(status int, hdr http.Header) bool {
	if c.NotAccepted != nil {
		return c.NotAccepted(status, hdr)
	}
	return status == http.StatusTooManyRequests
}

func (c *Client) submitFailed(sent bool, err error) error {
	if !sent {
		return &gengate.UpstreamError{Kind: gengate.Refused, Code: gengate.CodeUpstream,
			Message: c.Name + " could not be reached: " + c.Clean(rootCause(err))}
	}
	return fmt.Errorf("%s: submit sent but no answer read: %s", c.Name, c.Clean(err.Error()))
}

// Poll sends a request that reads the state of work (or cancels it) and
// decodes a 2xx answer into out. Every failure is Busy (429, 5xx, network)
// or a plain error (other statuses, unreadable answers): the service
// retries both, within the task's deadline.
func (c *Client) Poll(ctx context.Context, r Request, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout(r, PollTimeout))
	defer cancel()
	status, hdr, body, _, err := c.do(ctx, r)
	if err != nil {
		return &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream,
			Message: c.Name + " did not answer: " + c.Clean(rootCause(err))}
	}
	if status/100 == 2 {
		if out != nil {
			if err := json.Unmarshal(body, out); err != nil {
				return fmt.Errorf("%s: unreadable answer (%d): %v", c.Name, status, err)
			}
		}
		return nil
	}
	e := c.answerError(status, hdr, body, false)
	if e.Kind == gengate.Busy {
		return e
	}
	return fmt.Errorf("%s: %s", c.Name, e.Error())
}

// answerError classifies a non-2xx answer.
func (c *Client) answerError(status int, hdr http.Header, body []byte, submit bool) *gengate.UpstreamError {
	code, msg := "", ""
	if c.Explain != nil {
		code, msg = c.Explain(status, body)
	}
	if msg == "" {
		msg = Message(body)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &gengate.UpstreamError{Status: status, Code: code,
		Message: fmt.Sprintf("%s answered %d: %s", c.Name, status, c.Clean(msg))}
	switch {
	case status == http.StatusTooManyRequests || status >= 500 || (submit && (status == http.StatusRequestTimeout || c.notAccepted(status, hdr))):
		e.Kind, e.RetryAfter = gengate.Busy, RetryAfter(hdr.Get("Retry-After"), c.now())
	case code == gengate.CodeContentPolicy:
		e.Kind = gengate.Failed
	default:
		e.Kind = gengate.Refused
	}
	if e.Code == "" {
		e.Code = gengate.CodeUpstream
		if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
			e.Code = gengate.CodeRejectedInput
		}
	}
	return e
}

// AgeDelay is the wait before the next status read of a job accepted at
// created, for providers polled on the job's age: the age so far (so the
// waits double), at least first and at most ceiling; ceiling when the age
// is unknown (created is zero).
func (c *Client) AgeDelay(created time.Time, first, ceiling time.Duration) time.Duration {
	if created.IsZero() {
		return ceiling
	}
	return min(ceiling, max(first, c.now().Sub(created)))
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Clean removes the client's secrets from s.
func (c *Client) Clean(s string) string { return Clean(s, c.Secrets...) }

// Clean removes every secret, and anything that looks like a bearer
// token or an API key parameter, from s.
func Clean(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	for _, marker := range []string{"Bearer ", "Token ", "Key ", "key=", "token="} {
		for i := 0; ; {
			j := strings.Index(s[i:], marker)
			if j < 0 {
				break
			}
			start := i + j + len(marker)
			end := start
			for end < len(s) && !strings.ContainsRune(" \t\n\"'&,;)", rune(s[end])) {
				end++
			}
			if end > start {
				s = s[:start] + "[redacted]" + s[end:]
			}
			i = start + len("[redacted]")
			if i >= len(s) {
				break
			}
		}
	}
	if len(s) > 1000 {
		s = s[:1000] + "…"
	}
	return s
}

// Message finds a human message in the usual error bodies: {"error":
// {"message"}}, {"error": "..."}, {"detail": "..."}, {"detail": [{"msg"}]},
// {"title","detail"}, {"message"}. It returns "" when there is none.
func Message(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		Title   string          `json:"title"`
	}
	if json.Unmarshal(body, &v) != nil {
		s := strings.TrimSpace(string(body))
		if len(s) > 300 {
			s = s[:300]
		}
		return s
	}
	if m := rawMessage(v.Error); m != "" {
		return m
	}
	if m := rawMessage(v.Detail); m != "" {
		return m
	}
	if v.Message != "" {
		return v.Message
	}
	return v.Title
}

func rawMessage(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
		Msg     string `json:"msg"`
	}
	if json.Unmarshal(raw, &obj) == nil && (obj.Message != "" || obj.Msg != "") {
		return obj.Message + obj.Msg
	}
	var list []struct {
		Msg     string `json:"msg"`
		Message string `json:"message"`
		Loc     []any  `json:"loc"`
	}
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		parts := make([]string, 0, len(list))
		for _, it := range list {
			m := it.Msg + it.Message
			if len(it.Loc) > 0 {
				m = fmt.Sprint(it.Loc[len(it.Loc)-1]) + ": " + m
			}
			parts = append(parts, m)
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// RetryAfter parses a Retry-After header (delay-seconds or an HTTP-date);
// 0 when absent or unreadable.
func RetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Download opens an output file at url (absolute, or relative to the
// base URL) with the client's credentials when the URL is on the
// provider's own origin (scheme, host and port) and through the address
// guard when it is not (see origin.go), checks by its first bytes that it
// is an image or a video as kind says ("image", "video"), and returns it as
// an Output whose Body streams the rest: the service copies it into
// storage, enforcing its size limit as it goes, and closes it. Failures to
// open are Busy or plain errors, like Poll's; a Body read that fails is a
// Busy *gengate.UpstreamError. The whole download, reading included, is
// bounded by the client's DownloadTimeout (--output-download-timeout):
// past it the download is a Failed UPSTREAM_ERROR, so the task fails and
// is refunded rather than fetching a file again that the upstream serves
// too slowly to be stored in time.
func (c *Client) Download(ctx context.Context, url, kind string) (gengate.Output, error) {
	d := c.DownloadTimeout
	if d <= 0 {
		d = DefaultDownloadTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, d)
	t := &downloadTimer{parent: ctx, ctx: dctx, limit: d}
	o, err := c.download(dctx, cancel, t, url, kind)
	if err != nil {
		cancel()
	}
	return o, err
}

// downloadTimer tells a download's own timeout from its caller's end.
type downloadTimer struct {
	parent, ctx context.Context
	limit       time.Duration
}

// expired returns the Failed error of a download past its timeout, or
// nil when the timeout has not passed (or the caller gave up first).
func (t *downloadTimer) expired(name string) error {
	if t.parent.Err() != nil || !errors.Is(t.ctx.Err(), context.DeadlineExceeded) {
		return nil
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
		Message: fmt.Sprintf("%s output download took longer than %s (--output-download-timeout)", name, t.limit)}
}

func (c *Client) download(ctx context.Context, cancel context.CancelFunc, timer *downloadTimer, url, kind string) (gengate.Output, error) {
	full := c.url(url)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, full, nil)
	if err != nil {
		return gengate.Output{}, fmt.Errorf("%s: output url: %s", c.Name, c.Clean(err.Error()))
	}
	resp, err := c.client().Do(req)
	if fetch.AddrNotAllowed(err) {
		return gengate.Output{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: c.Name + " gave an output URL on a private or loopback address, which is not allowed"}
	}
	if err != nil {
		if e := timer.expired(c.Name); e != nil {
			return gengate.Output{}, e
		}
		return gengate.Output{}, &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream,
			Message: c.Name + " output download failed: " + c.Clean(rootCause(err))}
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		e := &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream, Status: resp.StatusCode,
			Message:    fmt.Sprintf("%s output download answered %d", c.Name, resp.StatusCode),
			RetryAfter: RetryAfter(resp.Header.Get("Retry-After"), c.now())}
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return gengate.Output{}, e
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			// The upstream no longer has the file (past its retention):
			// waiting will not bring it back.
			e.Kind, e.Message = gengate.Failed, e.Message+": the output is no longer there"
			return gengate.Output{}, e
		}
		return gengate.Output{}, errors.New(e.Message)
	}
	body := &downloadBody{r: bufio.NewReaderSize(resp.Body, sniffLen), body: resp.Body, cancel: cancel, timer: timer, c: c}
	head, err := body.r.Peek(sniffLen)
	if err != nil && err != io.EOF {
		resp.Body.Close()
		return gengate.Output{}, body.cut(err)
	}
	ct, ext, err := fileKind(head, kind)
	if err != nil {
		resp.Body.Close()
		return gengate.Output{}, err
	}
	return gengate.Output{Body: body, Size: resp.ContentLength, ContentType: ct, Ext: ext}, nil
}

// sniffLen is how much of a download is read to name its type: what
// http.DetectContentType looks at.
const sniffLen = 512

// downloadBody is a download's Body: read errors become Busy upstream
// errors (the step runs again), except past the download timeout (Failed),
// and Close ends the download's context.
type downloadBody struct {
	r      *bufio.Reader
	body   io.ReadCloser
	cancel context.CancelFunc
	timer  *downloadTimer
	c      *Client
}

func (b *downloadBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = b.cut(err)
	}
	return n, err
}

func (b *downloadBody) cut(err error) error {
	if e := b.timer.expired(b.c.Name); e != nil {
		return e
	}
	return &gengate.UpstreamError{Kind: gengate.Busy, Code: gengate.CodeUpstream,
		Message: b.c.Name + " output download cut short: " + b.c.Clean(rootCause(err))}
}

func (b *downloadBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

// Output checks that data is a file of kind ("image" or "video") by its
// bytes and returns it with its content type and extension. A wrong kind
// is a Failed error: the upstream delivered something unusable.
func Output(data []byte, kind string) (gengate.Output, error) {
	ct, ext, err := fileKind(data, kind)
	if err != nil {
		return gengate.Output{}, err
	}
	return gengate.Output{Data: data, Size: int64(len(data)), ContentType: ct, Ext: ext}, nil
}

// fileKind names the type of a file by its first bytes and checks it is
// of kind.
func fileKind(head []byte, kind string) (ct, ext string, err error) {
	ct = http.DetectContentType(head)
	if len(head) > 12 && string(head[4:8]) == "ftyp" {
		ct = "video/mp4"
	}
	if len(head) > 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" {
		ct = "image/webp"
	}
	ext = map[string]string{"image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp", "image/gif": "gif",
		"video/mp4": "mp4", "video/webm": "webm"}[ct]
	if ext == "" || !strings.HasPrefix(ct, kind+"/") {
		return "", "", &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: fmt.Sprintf("the upstream delivered %s where %s was expected", ct, kind)}
	}
	return ct, ext, nil
}

// Base64Output decodes a base64 (or data: URL) image from an answer body.
func Base64Output(b64, kind string) (gengate.Output, error) {
	if i := strings.Index(b64, ";base64,"); strings.HasPrefix(b64, "data:") && i > 0 {
		b64 = b64[i+len(";base64,"):]
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return gengate.Output{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "the upstream delivered an undecodable base64 file"}
	}
	return Output(data, kind)
}

// DataURI returns in as the URL fal, Replicate and most OpenAI-compatible
// servers accept for input files: its presigned URL when the service gave
// it one (a large input in S3 storage), otherwise a data: URL of its bytes.
func DataURI(in gengate.Input) string {
	if in.URL != "" {
		return in.URL
	}
	ct := in.ContentType
	if ct == "" {
		ct = http.DetectContentType(in.Data)
	}
	return "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(in.Data)
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// NewHTTPClient is the provider engines' default HTTP client: it bounds
// connecting (dial, TLS) but not answering, because each call carries its
// own deadline (SubmitTimeout, PollTimeout, the download timeout or the
// request's Timeout: a synchronous image API may answer after minutes).
// It keeps up to idle idle connections to each provider (0 or less:
// DefaultIdleConnsPerHost).
func NewHTTPClient(idle int) *http.Client {
	if idle <= 0 {
		idle = DefaultIdleConnsPerHost
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: idle,
		ForceAttemptHTTP2:   true,
	}}
}

// DefaultIdleConnsPerHost is how many idle connections NewHTTPClient keeps
// to one provider when not told: serve's default --workers (64), so that
// every step slot can reuse a connection to a provider it calls. serve
// gives its --workers (Config.IdleConns), so the flag bounds both the
// connections in use and those kept idle. With fewer (it was 16), the
// calls over the number were each followed by a close and preceded by a
// new dial: "gengate bench e2e" counted 2,074 connections for 2,000 tasks
// (docs/notes/end-to-end.md).
const DefaultIdleConnsPerHost = 64

// Config is what every provider engine is configured with.
type Config struct {
	// APIKey is the provider's credential; empty sends none.
	APIKey string
	// BaseURL replaces the provider's real one (mirrors, self-hosted
	// servers, tests).
	BaseURL string
	// HTTP is the client for every call; nil is NewHTTPClient(IdleConns).
	HTTP *http.Client
	// IdleConns is the most idle connections kept to the provider for
	// reuse when HTTP is nil (serve: --workers); 0 is
	// DefaultIdleConnsPerHost.
	IdleConns int
	// AllowPrivateOutputs lets output downloads from hosts other than the
	// provider's own reach loopback and private addresses
	// (--allow-private-inputs); the provider's own host is always allowed.
	AllowPrivateOutputs bool
	// DownloadTimeout bounds one whole output download
	// (--output-download-timeout); 0 is DefaultDownloadTimeout.
	DownloadTimeout time.Duration
	// ResendDelay replaces the first wait before a submit is sent again
	// where the provider's client does so (Client.Resend); 0 keeps the
	// client's own (tests shorten it).
	ResendDelay time.Duration
}

// NewClient builds a provider engine's client from cfg: its base URL (def
// when cfg has none), its HTTP client, and its key, sent on every request
// as header: prefix+key when set, and removed from every message.
func NewClient(name string, cfg Config, def, header, prefix string, explain func(status int, body []byte) (code, message string)) *Client {
	if cfg.BaseURL == "" {
		cfg.BaseURL = def
	}
	if cfg.HTTP == nil {
		cfg.HTTP = NewHTTPClient(cfg.IdleConns)
	}
	c := &Client{Name: name, BaseURL: strings.TrimRight(cfg.BaseURL, "/"), HTTP: cfg.HTTP, Explain: explain,
		AllowPrivate: cfg.AllowPrivateOutputs, DownloadTimeout: cfg.DownloadTimeout}
	c.baseOrigin, c.originOf = urlOrigin(c.BaseURL), c.BaseURL
	if !c.AllowPrivate {
		base := cfg.HTTP.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.guard = guardTransport(base, false)
	}
	if key := cfg.APIKey; key != "" {
		c.Auth = func(r *http.Request) { r.Header.Set(header, prefix+key) }
		c.Secrets = []string{key}
	}
	return c
}
