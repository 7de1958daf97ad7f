package google

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// DefaultBaseURL is the Gemini API.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// Timing: the delay before each poll of a Veo operation (the Gemini API
// gives no hint), and the bound on one synchronous image call.
const (
	videoDelay = 10 * time.Second
	// syncTimeout bounds one generateContent or predict call: Gemini 3 Pro
	// Image at 4K, with its thinking, takes a minute or more.
	syncTimeout = 5 * time.Minute
)

var (
	_ gengate.Engine    = (*Engine)(nil)
	_ gengate.Validator = (*Engine)(nil)
	_ gengate.Canceler  = (*Engine)(nil)

	_ gengate.InputStreamer = (*Engine)(nil)
)

// Config configures the engine: APIKey is the Gemini API key
// (GEMINI_API_KEY), sent as x-goog-api-key; BaseURL defaults to
// DefaultBaseURL.
type Config = upstream.Config

// Engine runs jobs on the Gemini API. It keeps no state between calls.
type Engine struct {
	client *upstream.Client
}

// New returns a Google engine.
func New(cfg Config) *Engine {
	return &Engine{client: upstream.NewClient("google", cfg, DefaultBaseURL, "x-goog-api-key", "", explain)}
}

// StreamsInputs says Submit reads large inputs from storage as it uploads
// them to the Files API (gengate.InputStreamer; Veo's, which go inline,
// are read whole).
func (e *Engine) StreamsInputs() bool { return true }

// Name returns "google".
func (e *Engine) Name() string { return "google" }

// Repeatable returns false: every call is paid work.
func (e *Engine) Repeatable() bool { return false }

// Validate reports, before any charge, whether the route's model can do
// every option and input of the job.
func (e *Engine) Validate(job gengate.Job) error {
	return plan(job, false, geminiAPI, nil).err(modelName(job))
}

func modelName(job gengate.Job) string {
	if job.Route.Upstream == "" {
		return "the model"
	}
	return job.Route.Upstream
}

// modelPath returns the method's path for the route's model.
func modelPath(job gengate.Job, m method) (string, error) {
	id := strings.TrimPrefix(job.Route.Upstream, "models/")
	if id == "" || strings.ContainsAny(id, "/?#: ") {
		return "", gengate.Errorf(gengate.EInvalid, "google: route model %q is not a Gemini API model id", job.Route.Upstream)
	}
	return "/models/" + url.PathEscape(id) + ":" + m.String(), nil
}

// Submit sends the job: Gemini image models and Imagen answer with the
// images, Veo with an operation that Check follows.
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	if err := plan(job, false, geminiAPI, nil).err(modelName(job)); err != nil {
		return gengate.Progress{}, err
	}
	job, files, err := e.uploadLarge(ctx, job) // files.go
	if err != nil {
		return gengate.Progress{}, err
	}
	r := plan(job, true, geminiAPI, files)
	if err := r.err(modelName(job)); err != nil {
		return gengate.Progress{}, err
	}
	path, err := modelPath(job, r.method)
	if err != nil {
		return gengate.Progress{}, err
	}
	req := upstream.Request{Method: http.MethodPost, Path: path, JSON: r.body}
	switch r.method {
	case generateContent:
		req.Timeout = syncTimeout
		var ans contentAnswer
		if err := e.client.Submit(ctx, req, &ans); err != nil {
			return gengate.Progress{}, err
		}
		return e.contentOutputs(ans, r.format)
	case predict:
		req.Timeout = syncTimeout
		var ans predictAnswer
		if err := e.client.Submit(ctx, req, &ans); err != nil {
			return gengate.Progress{}, err
		}
		return e.predictOutputs(ans, r.format)
	}
	var op operation
	if err := e.client.Submit(ctx, req, &op); err != nil {
		return gengate.Progress{}, err
	}
	if !validOperation(op.Name) {
		return gengate.Progress{}, fmt.Errorf("google: operation started but its answer names none (%q)", e.client.Clean(op.Name))
	}
	if op.Done {
		return e.finish(ctx, op)
	}
	return gengate.Progress{UpstreamID: op.Name, RetryAfter: videoDelay}, nil
}

// Check reads the Veo operation and, once it is done, downloads its videos.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	if !validOperation(upstreamID) {
		return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "google: malformed upstream id %q", upstreamID)
	}
	var op operation
	if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/" + upstreamID}, &op); err != nil {
		return gengate.Progress{}, err
	}
	if !op.Done {
		return gengate.Progress{UpstreamID: upstreamID, RetryAfter: videoDelay}, nil
	}
	op.Name = upstreamID
	return e.finish(ctx, op)
}

// Cancel asks the Gemini API to stop the operation (best effort: a Veo
// operation may run to its end regardless).
func (e *Engine) Cancel(ctx context.Context, job gengate.Job, upstreamID string) error {
	if !validOperation(upstreamID) {
		return gengate.Errorf(gengate.EInvalid, "google: malformed upstream id %q", upstreamID)
	}
	return e.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/" + upstreamID + ":cancel", JSON: map[string]any{}}, nil)
}

// validOperation reports whether id is a Gemini API operation name
// ("models/veo-3.1-generate-preview/operations/abc123"), safe to put in a
// path.
func validOperation(id string) bool {
	if !strings.Contains(id, "operations/") || strings.Contains(id, "..") || strings.HasPrefix(id, "/") {
		return false
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._/", c)
		if !ok {
			return false
		}
	}
	return true
}

// contentAnswer is a GenerateContentResponse, as far as the engine reads it.
type contentAnswer struct {
	Candidates []struct {
		Content struct {
			Parts []part `json:"parts"`
		} `json:"content"`
		FinishReason  string `json:"finishReason"`
		FinishMessage string `json:"finishMessage"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type part struct {
	Text    string `json:"text"`
	Thought bool   `json:"thought"`
	// The REST API answers in camelCase; inline_data is read too, as some
	// proxies re-encode answers in the protobuf field names.
	InlineData      *blob `json:"inlineData"`
	InlineDataSnake *blob `json:"inline_data"`
}

// Finish and block reasons that mean a safety or policy refusal.
var policyReasons = map[string]bool{
	"SAFETY": true, "PROHIBITED_CONTENT": true, "BLOCKLIST": true, "SPII": true, "RECITATION": true,
	"IMAGE_SAFETY": true, "IMAGE_PROHIBITED_CONTENT": true, "IMAGE_RECITATION": true,
}

// contentOutputs reads the images of a generateContent answer. Thought
// parts (Gemini 3 Pro Image's interim drafts) are skipped.
func (e *Engine) contentOutputs(ans contentAnswer, format string) (gengate.Progress, error) {
	if pf := ans.PromptFeedback; pf != nil && pf.BlockReason != "" {
		msg := "google blocked the prompt (" + pf.BlockReason + ")"
		if pf.BlockReasonMessage != "" {
			msg += ": " + pf.BlockReasonMessage
		}
		return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeContentPolicy, Message: e.client.Clean(msg)}
	}
	var outs []gengate.Output
	var texts, reasons []string
	policy := false
	for _, c := range ans.Candidates {
		for _, p := range c.Content.Parts {
			b := p.InlineData
			if b == nil {
				b = p.InlineDataSnake
			}
			switch {
			case p.Thought:
			case b != nil && b.Data != "":
				o, err := upstream.Base64Output(b.Data, "image")
				if err != nil {
					return gengate.Progress{}, err
				}
				if o, err = convert(o, format); err != nil {
					return gengate.Progress{}, err
				}
				outs = append(outs, o)
			case p.Text != "":
				texts = append(texts, p.Text)
			}
		}
		if c.FinishReason != "" && c.FinishReason != "STOP" {
			reasons = append(reasons, c.FinishReason)
			policy = policy || policyReasons[c.FinishReason]
		}
		if c.FinishMessage != "" {
			texts = append(texts, c.FinishMessage)
		}
	}
	if len(outs) > 0 {
		return gengate.Progress{Outputs: outs}, nil
	}
	msg := "google answered with no image"
	if len(reasons) > 0 {
		msg += " (" + strings.Join(reasons, ", ") + ")"
	}
	if len(texts) > 0 {
		msg += ": " + strings.Join(texts, " ")
	}
	code := gengate.CodeUpstream
	if policy {
		code = gengate.CodeContentPolicy
	}
	return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: code, Message: e.client.Clean(msg)}
}

// predictAnswer is Imagen's predict answer. Filtered images are left out,
// or reported with raiFilteredReason when includeRaiReason is set (the
// engine sets it).
type predictAnswer struct {
	Predictions []struct {
		BytesBase64Encoded string `json:"bytesBase64Encoded"`
		MimeType           string `json:"mimeType"`
		RaiFilteredReason  string `json:"raiFilteredReason"`
	} `json:"predictions"`
}

func (e *Engine) predictOutputs(ans predictAnswer, format string) (gengate.Progress, error) {
	var outs []gengate.Output
	var filtered []string
	for _, p := range ans.Predictions {
		switch {
		case p.BytesBase64Encoded != "":
			o, err := upstream.Base64Output(p.BytesBase64Encoded, "image")
			if err != nil {
				return gengate.Progress{}, err
			}
			if o, err = convert(o, format); err != nil {
				return gengate.Progress{}, err
			}
			outs = append(outs, o)
		case p.RaiFilteredReason != "":
			filtered = append(filtered, p.RaiFilteredReason)
		}
	}
	switch {
	case len(outs) > 0:
		return gengate.Progress{Outputs: outs}, nil
	case len(filtered) > 0:
		return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeContentPolicy,
			Message: e.client.Clean("google filtered every image: " + strings.Join(filtered, "; "))}
	}
	return gengate.Progress{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
		Message: "google answered with no image and no reason"}
}

// operation is a google.longrunning.Operation carrying a Veo answer.
type operation struct {
	Name     string   `json:"name"`
	Done     bool     `json:"done"`
	Error    *opError `json:"error"`
	Response struct {
		GenerateVideoResponse struct {
			GeneratedSamples []struct {
				Video struct {
					URI          string `json:"uri"`
					EncodedVideo string `json:"encodedVideo"`
					Bytes        string `json:"bytesBase64Encoded"`
				} `json:"video"`
			} `json:"generatedSamples"`
			RaiMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
			RaiMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
		} `json:"generateVideoResponse"`
	} `json:"response"`
}

// opError is a done operation's error (google.rpc.Status).
type opError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// google.rpc.Code values an operation's error may carry.
const (
	rpcCancelled       = 1
	rpcInvalidArgument = 3
)

// finish reads a done operation: its error, or its videos, downloaded.
func (e *Engine) finish(ctx context.Context, op operation) (gengate.Progress, error) {
	if op.Error != nil {
		return gengate.Progress{}, e.opFailure(*op.Error)
	}
	res := op.Response.GenerateVideoResponse
	return e.videos(op.Name, len(res.GeneratedSamples), func(i int) (gengate.Output, bool, error) {
		v := res.GeneratedSamples[i].Video
		switch {
		case v.URI != "":
			o, err := e.client.Download(ctx, v.URI, "video")
			return o, true, e.gone(err)
		case v.EncodedVideo != "" || v.Bytes != "":
			o, err := upstream.Base64Output(v.EncodedVideo+v.Bytes, "video")
			return o, true, err
		}
		return gengate.Output{}, false, nil
	}, res.RaiMediaFilteredCount, res.RaiMediaFilteredReasons)
}

// videos reads the n videos of the done operation name, on the Gemini API
// or Vertex AI: read gives sample i's output, or false when it holds
// none. On an error the outputs already opened are closed; with no video
// at all, the answer is noVideo's (filtered, or none).
func (e *Engine) videos(name string, n int, read func(i int) (gengate.Output, bool, error), filtered int, reasons []string) (gengate.Progress, error) {
	var outs []gengate.Output
	for i := range n {
		o, ok, err := read(i)
		if err != nil {
			gengate.CloseOutputs(outs)
			return gengate.Progress{}, err
		}
		if ok {
			outs = append(outs, o)
		}
	}
	if len(outs) > 0 {
		return gengate.Progress{UpstreamID: name, Outputs: outs}, nil
	}
	return gengate.Progress{}, e.noVideo(filtered, reasons)
}

// opFailure is the failure of an operation done with an error: a safety
// text is CONTENT_POLICY, INVALID_ARGUMENT the input's fault.
func (e *Engine) opFailure(oe opError) error {
	code := classify(oe.Message)
	if code == gengate.CodeUpstream && oe.Code == rpcInvalidArgument {
		code = gengate.CodeRejectedInput
	}
	msg := oe.Message
	if msg == "" {
		msg = fmt.Sprintf("error code %d", oe.Code)
	}
	if oe.Code == rpcCancelled {
		msg = "the operation was cancelled: " + msg
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: code, Message: e.client.Name + ": " + e.client.Clean(msg)}
}

// noVideo is the failure of an operation done with no video: filtered
// (CONTENT_POLICY) when the answer counts filtered videos.
func (e *Engine) noVideo(filtered int, reasons []string) error {
	if filtered > 0 || len(reasons) > 0 {
		msg := e.client.Name + " filtered the video"
		if len(reasons) > 0 {
			msg += ": " + strings.Join(reasons, "; ")
		}
		return &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeContentPolicy, Message: e.client.Clean(msg)}
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
		Message: e.client.Name + " reported the operation done with no video"}
}

// gone turns a download's definite error (a 4xx answer: the file has
// expired, as Gemini API files do after two days) into a failure; Busy and
// Failed errors pass.
func (e *Engine) gone(err error) error {
	var ue *gengate.UpstreamError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	return &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
		Message: e.client.Clean(err.Error()) + " (the video is no longer available)"}
}

// convert re-encodes an image delivered as PNG or JPEG into the format the
// job asked for, when they differ: the Gemini API's generateContent has no
// output format setting.
func convert(o gengate.Output, format string) (gengate.Output, error) {
	if format == "" || o.Ext == format {
		return o, nil
	}
	img, _, err := image.Decode(bytes.NewReader(o.Data))
	if err != nil {
		return o, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: fmt.Sprintf("google delivered a %s image that does not decode: %v", o.Ext, err)}
	}
	var b bytes.Buffer
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 92})
	default:
		return o, nil // validation refuses other formats
	}
	if err != nil {
		return o, fmt.Errorf("google: re-encode image as %s: %w", format, err)
	}
	return gengate.Output{Data: b.Bytes(), ContentType: "image/" + format, Ext: format}, nil
}

// apiError is the Gemini API's error answer (google.rpc.Status).
type apiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	} `json:"error"`
}

// explain reads an error answer: a bad or missing API key, a location or
// billing precondition or a missing model is the service's problem
// (UPSTREAM_ERROR, refused); an INVALID_ARGUMENT is the input's, and a
// CONTENT_POLICY when its message is a safety refusal.
func explain(status int, body []byte) (code, message string) {
	var e apiError
	if json.Unmarshal(body, &e) != nil || (e.Error.Message == "" && e.Error.Status == "") {
		return "", ""
	}
	message = e.Error.Message
	if e.Error.Status != "" {
		message = e.Error.Status + ": " + message
	}
	for _, d := range e.Error.Details {
		if d.Reason == "API_KEY_INVALID" || d.Reason == "API_KEY_SERVICE_BLOCKED" {
			return gengate.CodeUpstream, message
		}
	}
	switch e.Error.Status {
	case "INVALID_ARGUMENT":
		if strings.Contains(strings.ToLower(e.Error.Message), "api key") {
			return gengate.CodeUpstream, message
		}
		if classify(e.Error.Message) == gengate.CodeContentPolicy {
			return gengate.CodeContentPolicy, message
		}
		return gengate.CodeRejectedInput, message
	case "UNAUTHENTICATED", "PERMISSION_DENIED", "FAILED_PRECONDITION", "NOT_FOUND":
		return gengate.CodeUpstream, message
	}
	return "", message
}

// classify reads a failure text for a safety refusal: Google's texts speak
// of "Responsible AI practices", "safety" filters, "prohibited" or
// "sensitive" content and "usage guidelines".
func classify(msg string) string {
	m := strings.ToLower(msg)
	for _, w := range []string{"responsible ai", "safety", "prohibited", "sensitive", "usage guidelines", "content policy", "blocked"} {
		if strings.Contains(m, w) {
			return gengate.CodeContentPolicy
		}
	}
	return gengate.CodeUpstream
}
