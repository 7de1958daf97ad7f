package google

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// VertexConfig configures the Vertex AI engine.
type VertexConfig struct {
	// Project is the Google Cloud project id; Location its region
	// ("us-central1") or "global".
	Project  string
	Location string
	// CredentialsFile is a service account key (JSON); "" uses
	// Application Default Credentials.
	CredentialsFile string
	// BaseURL replaces https://{location}-aiplatform.googleapis.com/v1
	// (https://aiplatform.googleapis.com/v1 for "global"); StorageURL
	// replaces https://storage.googleapis.com, where videos written to a
	// route's storageUri are read. Both for tests and proxies.
	BaseURL    string
	StorageURL string
	// HTTP is the client for every call, token fetches included; nil is
	// upstream.NewHTTPClient(IdleConns).
	HTTP *http.Client
	// IdleConns is upstream.Config's: the most idle connections kept.
	IdleConns int
	// AllowPrivateOutputs is --allow-private-inputs (upstream.Config).
	AllowPrivateOutputs bool
	// DownloadTimeout is --output-download-timeout (upstream.Config).
	DownloadTimeout time.Duration
}

// DefaultStorageURL is Cloud Storage's JSON API.
const DefaultStorageURL = "https://storage.googleapis.com"

// VertexBaseURL is Vertex AI's endpoint for location.
func VertexBaseURL(location string) string {
	if location == "global" {
		return "https://aiplatform.googleapis.com/v1"
	}
	return "https://" + location + "-aiplatform.googleapis.com/v1"
}

var (
	_ gengate.Engine    = (*Vertex)(nil)
	_ gengate.Validator = (*Vertex)(nil)
	_ gengate.Canceler  = (*Vertex)(nil)
)

// Vertex runs gengate's Google models on Vertex AI: Gemini image models
// by generateContent, Imagen by predict and Veo by predictLongRunning and
// fetchPredictOperation, under
// /projects/{project}/locations/{location}/publishers/google/models/{model}.
// The request bodies are the Gemini API's (models.go maps a job once for
// both), with what only Vertex AI takes; the answers are read by the same
// code, except Veo's operation, whose videos are response.videos[] (inline
// bytesBase64Encoded, or gcsUri when the route sets storageUri).
type Vertex struct {
	name     string
	core     *Engine // its client is Vertex AI's; the answer readers are shared
	storage  *upstream.Client
	resource string // projects/{project}/locations/{location}
	tokens   *tokens
	current  atomic.Pointer[string] // the access token last fetched
}

var (
	// A project id, or a domain-scoped one ("example.com:my-project").
	projectID  = regexp.MustCompile(`^[a-z][a-z0-9.:-]{4,99}$`)
	locationID = regexp.MustCompile(`^[a-z][a-z0-9-]{1,40}$`)
)

// NewVertex returns a Vertex AI engine named name (the provider's name in
// the configuration, "vertex" by default). It reads the credentials file
// now; Application Default Credentials are looked up on first use.
func NewVertex(name string, cfg VertexConfig) (*Vertex, error) {
	switch {
	case !projectID.MatchString(cfg.Project):
		return nil, fmt.Errorf("project %q is not a Google Cloud project id", cfg.Project)
	case !locationID.MatchString(cfg.Location):
		return nil, fmt.Errorf("location %q is not a Google Cloud location (us-central1, europe-west4, global, …)", cfg.Location)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = VertexBaseURL(cfg.Location)
	}
	if cfg.StorageURL == "" {
		cfg.StorageURL = DefaultStorageURL
	}
	if cfg.HTTP == nil {
		cfg.HTTP = upstream.NewHTTPClient(cfg.IdleConns)
	}
	toks, err := newTokens(cfg.CredentialsFile, cfg.HTTP)
	if err != nil {
		return nil, err
	}
	v := &Vertex{name: name, tokens: toks,
		resource: "projects/" + cfg.Project + "/locations/" + cfg.Location}
	auth := func(r *http.Request) {
		if t := v.current.Load(); t != nil {
			r.Header.Set("Authorization", "Bearer "+*t)
		}
	}
	up := upstream.Config{BaseURL: cfg.BaseURL, HTTP: cfg.HTTP, AllowPrivateOutputs: cfg.AllowPrivateOutputs,
		DownloadTimeout: cfg.DownloadTimeout}
	c := upstream.NewClient(name, up, cfg.BaseURL, "", "", explain)
	c.Auth = auth
	v.core = &Engine{client: c}
	up.BaseURL = cfg.StorageURL
	v.storage = upstream.NewClient(name+" storage", up, cfg.StorageURL, "", "", explain)
	v.storage.Auth = auth
	return v, nil
}

// Name returns the provider's name.
func (v *Vertex) Name() string { return v.name }

// Repeatable returns false: every call is paid work.
func (v *Vertex) Repeatable() bool { return false }

// Validate reports, before any charge, whether the route's model can do
// every option and input of the job on Vertex AI.
func (v *Vertex) Validate(job gengate.Job) error {
	if err := plan(job, false, vertexAI, nil).err(modelName(job)); err != nil {
		return err
	}
	return inlineLimits(job)
}

// VertexInlineMax is the largest input file the Gemini image models on
// Vertex AI take inline: "Maximum file size per file for inline data …:
// 7 MB" (docs.cloud.google.com/vertex-ai/generative-ai/docs/multimodal/
// image-understanding, Gemini 3 Pro Image and the 2.5 models, read
// 2026-11-23), taken as 7 MiB. Larger files need a gs:// fileData URI
// (30 MB), and gengate has no Cloud Storage bucket for inputs: they are
// refused before any charge. Imagen and Veo take inline bytes
// (bytesBase64Encoded) up to gengate's own input limits.
const VertexInlineMax = 7 << 20

// inlineLimits refuses, once the inputs are fetched (their bytes are
// there), an input a Gemini image model on Vertex AI cannot take inline.
func inlineLimits(job gengate.Job) error {
	if sp, _ := specFor(job.Route.Upstream, job.Type); sp.method != generateContent {
		return nil
	}
	var fields []gengate.FieldError
	for _, field := range sortedKeys(job.Inputs) {
		in := job.Inputs[field]
		n := len(in.Data)
		if in.Data == nil && in.Size > 0 { // read by handle (one of the server's own files)
			n = int(min(in.Size, 1<<40))
		}
		if n > VertexInlineMax {
			fields = append(fields, gengate.FieldError{Field: field, Code: gengate.InputTooLarge,
				Message: fmt.Sprintf("%s on Vertex AI takes input files of at most %d bytes inline; this one has %d", modelName(job), VertexInlineMax, n)})
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &gengate.Error{Code: gengate.EInvalid, Message: "input " + fields[0].Field + ": " + fields[0].Message, Fields: fields}
}

// authorize fetches an access token (cached until shortly before it
// expires) for the next call.
func (v *Vertex) authorize(ctx context.Context, submit bool) error {
	t, err := v.tokens.token(ctx, submit)
	if err != nil {
		return err
	}
	v.current.Store(&t)
	return nil
}

// refused drops the cached token when Vertex AI answered err with 401
// (the token was revoked or expired early), and returns err. Polls report
// a 401 as a plain error that carries the answer's text.
func (v *Vertex) refused(err error) error {
	var ue *gengate.UpstreamError
	if (errors.As(err, &ue) && ue.Status == http.StatusUnauthorized) || (err != nil && strings.Contains(err.Error(), " answered 401: ")) {
		v.tokens.drop()
	}
	return err
}

// modelPath returns the path of a method of the route's model.
func (v *Vertex) modelPath(job gengate.Job, m method) (string, error) {
	id := strings.TrimPrefix(job.Route.Upstream, "publishers/google/models/")
	if id == "" || strings.ContainsAny(id, "/?#: ") {
		return "", gengate.Errorf(gengate.EInvalid, "vertex: route model %q is not a Vertex AI publisher model id", job.Route.Upstream)
	}
	return "/" + v.resource + "/publishers/google/models/" + url.PathEscape(id) + ":" + m.String(), nil
}

// Submit sends the job: Gemini image models and Imagen answer with the
// images, Veo with an operation that Check follows.
func (v *Vertex) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	if err := inlineLimits(job); err != nil {
		return gengate.Progress{}, err
	}
	r := plan(job, true, vertexAI, nil)
	if err := r.err(modelName(job)); err != nil {
		return gengate.Progress{}, err
	}
	path, err := v.modelPath(job, r.method)
	if err != nil {
		return gengate.Progress{}, err
	}
	if err := v.authorize(ctx, true); err != nil {
		return gengate.Progress{}, err
	}
	c := v.core.client
	req := upstream.Request{Method: http.MethodPost, Path: path, JSON: r.body}
	switch r.method {
	case generateContent:
		req.Timeout = syncTimeout
		var ans contentAnswer
		if err := c.Submit(ctx, req, &ans); err != nil {
			return gengate.Progress{}, v.refused(err)
		}
		return v.core.contentOutputs(ans, r.format)
	case predict:
		req.Timeout = syncTimeout
		var ans predictAnswer
		if err := c.Submit(ctx, req, &ans); err != nil {
			return gengate.Progress{}, v.refused(err)
		}
		return v.core.predictOutputs(ans, r.format)
	}
	var op vertexOperation
	if err := c.Submit(ctx, req, &op); err != nil {
		return gengate.Progress{}, v.refused(err)
	}
	if !v.ownOperation(op.Name) {
		return gengate.Progress{}, fmt.Errorf("vertex: operation started but its answer names none of this project's (%q)", c.Clean(op.Name))
	}
	if op.Done {
		return v.finish(ctx, op)
	}
	return gengate.Progress{UpstreamID: op.Name, RetryAfter: videoDelay}, nil
}

// ownOperation reports whether id is a Veo operation of this engine's
// project and location:
// "projects/{p}/locations/{l}/publishers/google/models/{m}/operations/{id}".
func (v *Vertex) ownOperation(id string) bool {
	rest, ok := strings.CutPrefix(id, v.resource+"/publishers/google/models/")
	return ok && validOperation(id) && strings.Count(rest, "/") == 2 && strings.Contains(rest, "/operations/")
}

// Check reads the Veo operation (POST {model}:fetchPredictOperation, as
// Vertex AI serves publisher model operations) and, once it is done,
// delivers its videos.
func (v *Vertex) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	if !v.ownOperation(upstreamID) {
		return gengate.Progress{}, gengate.Errorf(gengate.EFailed, "vertex: malformed upstream id %q", upstreamID)
	}
	if err := v.authorize(ctx, false); err != nil {
		return gengate.Progress{}, err
	}
	model, _, _ := strings.Cut(upstreamID, "/operations/")
	var op vertexOperation
	req := upstream.Request{Method: http.MethodPost, Path: "/" + model + ":fetchPredictOperation",
		JSON: map[string]any{"operationName": upstreamID}}
	if err := v.core.client.Poll(ctx, req, &op); err != nil {
		return gengate.Progress{}, v.refused(err)
	}
	if !op.Done {
		return gengate.Progress{UpstreamID: upstreamID, RetryAfter: videoDelay}, nil
	}
	op.Name = upstreamID
	return v.finish(ctx, op)
}

// Cancel asks Vertex AI to stop the operation (POST {name}:cancel, the
// google.longrunning cancel; best effort).
func (v *Vertex) Cancel(ctx context.Context, job gengate.Job, upstreamID string) error {
	if !v.ownOperation(upstreamID) {
		return gengate.Errorf(gengate.EInvalid, "vertex: malformed upstream id %q", upstreamID)
	}
	if err := v.authorize(ctx, false); err != nil {
		return err
	}
	return v.refused(v.core.client.Poll(ctx, upstream.Request{Method: http.MethodPost, Path: "/" + upstreamID + ":cancel", JSON: map[string]any{}}, nil))
}

// vertexOperation is a Veo operation as fetchPredictOperation answers it
// (go-genai generateVideosOperationFromVertex: response.videos[] with
// gcsUri or bytesBase64Encoded, and mimeType).
type vertexOperation struct {
	Name     string   `json:"name"`
	Done     bool     `json:"done"`
	Error    *opError `json:"error"`
	Response struct {
		Videos []struct {
			GCSURI   string `json:"gcsUri"`
			Bytes    string `json:"bytesBase64Encoded"`
			MimeType string `json:"mimeType"`
		} `json:"videos"`
		RaiMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
		RaiMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
	} `json:"response"`
}

// finish reads a done operation: its error, or its videos.
func (v *Vertex) finish(ctx context.Context, op vertexOperation) (gengate.Progress, error) {
	if op.Error != nil {
		return gengate.Progress{}, v.core.opFailure(*op.Error)
	}
	res := op.Response
	return v.core.videos(op.Name, len(res.Videos), func(i int) (gengate.Output, bool, error) {
		s := res.Videos[i]
		switch {
		case s.Bytes != "":
			o, err := upstream.Base64Output(s.Bytes, "video")
			return o, true, err
		case s.GCSURI != "":
			o, err := v.download(ctx, s.GCSURI)
			return o, true, err
		}
		return gengate.Output{}, false, nil
	}, res.RaiMediaFilteredCount, res.RaiMediaFilteredReasons)
}

// download reads a video Vertex AI wrote to Cloud Storage (a route's
// storageUri): GET /storage/v1/b/{bucket}/o/{object}?alt=media with the
// same access token.
func (v *Vertex) download(ctx context.Context, gcsURI string) (gengate.Output, error) {
	bucket, object, ok := strings.Cut(strings.TrimPrefix(gcsURI, "gs://"), "/")
	if !strings.HasPrefix(gcsURI, "gs://") || !ok || bucket == "" || object == "" {
		return gengate.Output{}, &gengate.UpstreamError{Kind: gengate.Failed, Code: gengate.CodeUpstream,
			Message: "vertex: the video's location is not a gs:// URI: " + v.core.client.Clean(gcsURI)}
	}
	if err := v.authorize(ctx, false); err != nil {
		return gengate.Output{}, err
	}
	u := "/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + url.PathEscape(object) + "?alt=media"
	o, err := v.storage.Download(ctx, u, "video")
	return o, v.core.gone(v.refused(err))
}
