package httpapi

// OpenAI-compatible images: POST /v1/images/generations (JSON) and
// POST /v1/images/edits (multipart), so that code written for OpenAI's SDKs
// runs against gengate by changing its base URL and key. The request is
// mapped onto a gengate generate body (model → modelId, n → numOutputs,
// size → the nearest aspectRatio, output_format → outputFormat, image and
// mask files → the model's image inputs) and runs as a gengate task: same
// credits, same Idempotency-Key semantics. Answers and errors have OpenAI's
// shapes; docs/api.md has the mapping.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// openAIImageRequest holds the OpenAI image parameters gengate maps, and
// the others the request sent (Extra): those that name one of the model's
// own options (scale, seed, ...; by gengate's name or its snake_case
// spelling), sent as the SDKs send extra fields (openai-go's
// option.WithJSONSet, extra form fields for edits), are passed to the
// model; the rest (style, background, moderation, user, ...) are accepted
// and ignored.
type openAIImageRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	ResponseFormat string `json:"response_format"`
	OutputFormat   string `json:"output_format"`
	Quality        string `json:"quality"`
	// Extra are the other parameters: JSON values for a generation,
	// strings for an edit's form fields.
	Extra map[string]any `json:"-"`
}

// openAIMapped are the parameters openAIBody maps itself; no model option
// is taken from them.
var openAIMapped = map[string]bool{"model": true, "prompt": true, "n": true, "size": true, "response_format": true,
	"output_format": true, "quality": true, "image": true, "image[]": true, "mask": true}

// modelOptions adds to body the extra parameters of req that name the
// model's own options, by gengate's name or its snake_case spelling (a
// form field's string read as the option's kind), and returns the name
// each was sent as, for errors.
func modelOptions(m *gengate.Model, req openAIImageRequest, body map[string]any) (map[string]string, *openAIError) {
	sent := map[string]string{}
	snake := snakeNames(m)
	for _, k := range sortedNames(req.Extra) {
		if openAIMapped[k] {
			continue
		}
		name := k
		if f, ok := snake[k]; ok {
			name = f
		}
		f, ok := m.Field(name)
		if _, set := body[name]; !ok || set || name == "prompt" || f.Kind == string(gengate.KindImage) || f.Kind == string(gengate.KindVideo) {
			continue
		}
		v := req.Extra[k]
		if str, isForm := v.(string); isForm && f.Kind != gengate.KindEnum && f.Kind != string(gengate.KindText) {
			var err error
			switch f.Kind {
			case gengate.KindInt:
				v, err = strconv.ParseInt(strings.TrimSpace(str), 10, 64)
			case gengate.KindNumber:
				v, err = strconv.ParseFloat(strings.TrimSpace(str), 64)
			case gengate.KindBool:
				v, err = strconv.ParseBool(strings.TrimSpace(str))
			}
			if err != nil {
				return nil, invalidParam(k, fmt.Sprintf("%s must be a %s", k, f.Kind))
			}
		}
		body[name], sent[name] = v, k
	}
	return sent, nil
}

// openAIError is an error in OpenAI's shape and status.
type openAIError struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
	// Retry says whether a retry may help: the x-should-retry header that
	// OpenAI's SDKs obey, so that they do not retry a final answer.
	Retry bool
}

func invalidParam(param, msg string) *openAIError {
	return &openAIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_value", Param: param, Message: msg}
}

func (a *api) writeOpenAIError(w http.ResponseWriter, e *openAIError) {
	w.Header().Set("x-should-retry", strconv.FormatBool(e.Retry))
	body := map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": nil}
	if e.Param != "" {
		body["param"] = e.Param
	}
	if e.Code != "" {
		body["code"] = e.Code
	}
	writeJSON(w, e.Status, map[string]any{"error": body})
}

// openAIParams maps gengate field names back to OpenAI parameter names.
var openAIParams = map[string]string{
	"modelId": "model", "prompt": "prompt", "numOutputs": "n", "aspectRatio": "size",
	"outputFormat": "output_format", "quality": "quality", "mask": "mask", "Idempotency-Key": "Idempotency-Key",
}

// fromGengate turns a gengate error into OpenAI's shape.
func (a *api) fromGengate(r *http.Request, err error) *openAIError {
	var e *gengate.Error
	if !errors.As(err, &e) {
		a.log.ErrorContext(r.Context(), "internal error", "err", err, "requestId", requestID(r))
		return &openAIError{Status: 500, Type: "server_error", Code: "internal_error", Retry: true,
			Message: "internal error; the request id " + requestID(r) + " identifies it in the logs"}
	}
	status := statusOf[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	o := &openAIError{Status: status, Type: "invalid_request_error", Code: strings.ToLower(e.Code), Message: e.Message}
	if len(e.Fields) > 0 {
		f := e.Fields[0]
		o.Param = openAIParams[f.Field]
		if o.Param == "" {
			o.Param = "image" // the model's image inputs
		}
		if strings.HasPrefix(f.Code, "INPUT_") {
			o.Code = strings.ToLower(f.Code)
		}
	}
	switch e.Code {
	case gengate.EUnauthorized:
		o.Code = "invalid_api_key"
	case gengate.EInsufficient:
		// OpenAI answers an exhausted quota with 429 insufficient_quota.
		o.Status, o.Type, o.Code = http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota"
	case gengate.ERateLimited:
		o.Type, o.Code, o.Retry = "requests", "rate_limit_exceeded", true
	case gengate.EKeyInUse:
		o.Retry = true
	case gengate.EInternal:
		o.Type, o.Retry = "server_error", true
	}
	return o
}

// openAIAuth authenticates like the rest of the API (Bearer key) but
// refuses in OpenAI's shape.
func (a *api) openAIAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret := r.Header.Get("X-API-Key")
		if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			secret = strings.TrimSpace(token)
		}
		key, err := a.svc.Authenticate(r.Context(), secret)
		if err != nil {
			a.writeOpenAIError(w, a.fromGengate(r, err))
			return
		}
		if a.limiter != nil {
			if d := a.limiter.wait(key.ID, time.Now()); d > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
				a.writeOpenAIError(w, a.fromGengate(r, gengate.Errorf(gengate.ERateLimited, "too many requests for this API key; retry after %s", d.Round(time.Second))))
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyAPIKey, key)))
	})
}

// handleOpenAIGenerations is POST /v1/images/generations.
func (a *api) handleOpenAIGenerations() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req openAIImageRequest
		body, err := openBody(r)
		if err != nil {
			a.refuseIn(w, r, "/v1/images/", err)
			return
		}
		// A small body (--max-json-body): read once, decoded as the
		// mapped parameters and as the extra ones.
		data, err := io.ReadAll(body)
		if err == nil {
			if err = json.Unmarshal(data, &req); err == nil {
				err = json.Unmarshal(data, &req.Extra)
			}
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				a.refuseIn(w, r, "/v1/images/", tooLarge(tooBig.Limit))
				return
			}
			a.writeOpenAIError(w, invalidParam("", "the request body is not a valid JSON object of image parameters: "+err.Error()))
			return
		}
		a.openAIImages(w, r, req, nil)
	})
}

// handleOpenAIEdits is POST /v1/images/edits: multipart/form-data with
// image (or image[]: several), an optional mask, and the parameters. The
// parts are read in one pass: each file streams into storage as an upload
// does (Service.Upload: type from its first bytes, size enforced as it
// passes, never held whole), and the task names the stored files by their
// URLs, read by handle; the uploads are deleted once the task has its own
// copies. The small fields are read up to --max-json-body each.
func (a *api) handleOpenAIEdits() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := openBody(r)
		if err != nil {
			a.refuseIn(w, r, "/v1/images/", err)
			return
		}
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
			a.writeOpenAIError(w, invalidParam("", "send the edit as multipart/form-data with image, prompt and model"))
			return
		}
		key := apiKey(r)
		var uploads []*gengate.Upload
		defer func() {
			for _, u := range uploads {
				if err := a.svc.DeleteUpload(context.WithoutCancel(r.Context()), u); err != nil {
					a.log.WarnContext(r.Context(), "delete an edit's upload", "uploadId", u.ID, "err", err)
				}
			}
		}()
		form := map[string]string{}
		var images []*gengate.Upload
		var mask *gengate.Upload
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				a.writeOpenAIError(w, a.editReadError(r, err, "the multipart body is malformed"))
				return
			}
			name := p.FormName()
			switch name {
			case "image", "image[]", "mask":
				u, err := a.svc.Upload(r.Context(), key, p)
				if err != nil {
					if name == "mask" {
						err = renameField(err, "mask")
					}
					a.writeOpenAIError(w, a.editReadError(r, err, "the "+name+" could not be read"))
					return
				}
				uploads = append(uploads, u)
				if name == "mask" {
					mask = u
				} else {
					images = append(images, u)
				}
			default:
				v, err := io.ReadAll(io.LimitReader(p, a.cfg.MaxJSONBody+1))
				if err != nil {
					a.writeOpenAIError(w, a.editReadError(r, err, "the multipart body is malformed"))
					return
				}
				if int64(len(v)) > a.cfg.MaxJSONBody {
					a.writeOpenAIError(w, invalidParam(name, fmt.Sprintf("%s is longer than %d bytes", name, a.cfg.MaxJSONBody)))
					return
				}
				if _, seen := form[name]; !seen {
					form[name] = string(v)
				}
			}
			p.Close()
		}
		req := openAIImageRequest{Model: form["model"], Prompt: form["prompt"], Size: form["size"],
			ResponseFormat: form["response_format"], OutputFormat: form["output_format"], Quality: form["quality"],
			Extra: map[string]any{}}
		for k, v := range form {
			req.Extra[k] = v
		}
		if s := form["n"]; s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				a.writeOpenAIError(w, invalidParam("n", "n must be an integer"))
				return
			}
			req.N = &n
		}
		if len(images) == 0 {
			a.writeOpenAIError(w, invalidParam("image", "an image file is required"))
			return
		}
		base := a.baseURL(r)
		files := &openAIFiles{}
		for _, u := range images {
			files.images = append(files.images, base+u.Path())
			files.imageSums = append(files.imageSums, u.ContentType+":"+strconv.FormatInt(u.Size, 10)+":"+u.SHA256)
		}
		if mask != nil {
			files.mask, files.maskSum = base+mask.Path(), mask.ContentType+":"+strconv.FormatInt(mask.Size, 10)+":"+mask.SHA256
		}
		a.openAIImages(w, r, req, files)
	})
}

// openAIFiles are the files of an edit: the URLs of their uploads, and
// what identifies their contents (type, size, SHA-256) for the request's
// fingerprint.
type openAIFiles struct {
	images, imageSums []string
	mask, maskSum     string
}

// renameField names field in an upload's refusal, which names "file".
func renameField(err error, field string) error {
	var e *gengate.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		c := *e
		c.Fields = append([]gengate.FieldError(nil), e.Fields...)
		c.Fields[0].Field = field
		return &c
	}
	return err
}

// editReadError is the OpenAI error for a failure reading an edit's body:
// 413 past the body's cap, the upload's own refusal, or a malformed body.
func (a *api) editReadError(r *http.Request, err error, msg string) *openAIError {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return &openAIError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
			Code: "payload_too_large", Message: fmt.Sprintf("the request body is larger than %d bytes", big.Limit)}
	}
	var e *gengate.Error
	if errors.As(err, &e) {
		return a.fromGengate(r, err)
	}
	if r.Context().Err() != nil {
		return a.fromGengate(r, err)
	}
	return invalidParam("", msg)
}

// openAIBody maps an OpenAI image request onto a gengate generate body.
func (a *api) openAIBody(req openAIImageRequest, files *openAIFiles) (map[string]any, map[string]string, *openAIError) {
	if files == nil {
		files = &openAIFiles{}
	}
	images, mask := files.images, files.mask
	if req.Model == "" {
		return nil, nil, invalidParam("model", "model is required: a gengate modelId (GET /api/v1/models lists them)")
	}
	m, ok := a.svc.Catalog.Model(req.Model)
	if !ok {
		return nil, nil, &openAIError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
			Message: fmt.Sprintf("the model %q does not exist; model is a gengate modelId (GET /api/v1/models lists them)", req.Model)}
	}
	if m.Type != "image" {
		return nil, nil, invalidParam("model", fmt.Sprintf("model %q makes videos; /v1/images serves image models (use POST /api/v1/generate)", m.ID))
	}
	body := map[string]any{"type": m.Type, "modelId": m.ID}
	if _, ok := m.Field("prompt"); ok && req.Prompt != "" {
		body["prompt"] = req.Prompt
	}
	if req.N != nil && *req.N != 1 {
		if _, ok := m.Field("numOutputs"); !ok {
			return nil, nil, invalidParam("n", fmt.Sprintf("model %q makes one image per request; send n=1", m.ID))
		}
		body["numOutputs"] = *req.N
	}
	if req.Size != "" && req.Size != "auto" {
		ratio, ok := parseSize(req.Size)
		if !ok {
			return nil, nil, invalidParam("size", "size must be WIDTHxHEIGHT (e.g. 1024x1024) or auto")
		}
		if f, ok := m.Field("aspectRatio"); ok {
			body["aspectRatio"] = nearestRatio(f.Values, ratio)
		}
	}
	if req.OutputFormat != "" {
		body["outputFormat"] = req.OutputFormat
	}
	if q := req.Quality; q != "" {
		if f, ok := m.Field("quality"); ok {
			for _, v := range f.Values {
				if v == q {
					body["quality"] = q
				}
			}
			if _, set := body["quality"]; !set && q != "auto" && q != "standard" {
				body["quality"] = q // refused by the model's validation, naming quality
			}
		}
	}
	var slots []string
	for _, f := range m.Inputs {
		if f.Kind == string(gengate.KindImage) && f.Name != "mask" {
			slots = append(slots, f.Name)
		}
	}
	if len(images) > len(slots) {
		return nil, nil, invalidParam("image", fmt.Sprintf("model %q takes %d input image(s), %d were sent", m.ID, len(slots), len(images)))
	}
	for i, url := range images {
		body[slots[i]] = url
	}
	if mask != "" {
		if _, ok := m.Field("mask"); !ok {
			return nil, nil, invalidParam("mask", fmt.Sprintf("model %q takes no mask", m.ID))
		}
		body["mask"] = mask
	}
	sent, oe := modelOptions(m, req, body)
	if oe != nil {
		return nil, nil, oe
	}
	return body, sent, nil
}

// openAIFingerprint is the fingerprint of an edit: the SHA-256 of its
// generate body with each file's URL replaced by what identifies its
// contents, so that a retry with the same Idempotency-Key and the same
// files matches although its uploads have new URLs. "" (the body's own
// fingerprint) without files.
func openAIFingerprint(body map[string]any, files *openAIFiles) string {
	if files == nil || len(files.images) == 0 {
		return ""
	}
	sums := map[string]string{files.mask: files.maskSum}
	for i, u := range files.images {
		sums[u] = files.imageSums[i]
	}
	canon := make(map[string]any, len(body))
	for k, v := range body {
		if s, ok := v.(string); ok && sums[s] != "" {
			v = "file:" + sums[s]
		}
		canon[k] = v
	}
	data, _ := json.Marshal(canon)
	sum := sha256.Sum256(data)
	return "openai-edit:" + hex.EncodeToString(sum[:])
}

// parseSize reads "1536x1024" as a width-to-height ratio.
func parseSize(s string) (float64, bool) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, false
	}
	return float64(w) / float64(h), true
}

// nearestRatio picks the aspect ratio among values ("16:9", ...) closest to
// ratio, comparing logarithms so that 2:1 and 1:2 are as far from 1:1.
func nearestRatio(values []any, ratio float64) string {
	best, bestD := "", math.Inf(1)
	for _, v := range values {
		s, _ := v.(string)
		a, b, ok := strings.Cut(s, ":")
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil || x <= 0 || y <= 0 {
			continue
		}
		if d := math.Abs(math.Log(x/y) - math.Log(ratio)); d < bestD {
			best, bestD = s, d
		}
	}
	return best
}

// openAIImages runs a mapped request as a gengate task, waits for it and
// answers in OpenAI's shape.
func (a *api) openAIImages(w http.ResponseWriter, r *http.Request, req openAIImageRequest, files *openAIFiles) {
	switch req.ResponseFormat {
	case "", "url", "b64_json":
	default:
		a.writeOpenAIError(w, invalidParam("response_format", `response_format must be "url" or "b64_json"`))
		return
	}
	body, sent, oe := a.openAIBody(req, files)
	if oe != nil {
		a.writeOpenAIError(w, oe)
		return
	}
	data, _ := json.Marshal(body)
	key := apiKey(r)
	idem := r.Header.Get("Idempotency-Key")
	o, err := a.svc.GenerateAs(r.Context(), key, bytes.NewReader(data), idem, openAIFingerprint(body, files))
	if err != nil {
		oe := a.fromGengate(r, err)
		var ge *gengate.Error
		if errors.As(err, &ge) && len(ge.Fields) > 0 {
			oe.Param = openAIParam(req.Model, a.svc.Catalog, ge.Fields[0].Field)
			if k, ok := sent[ge.Fields[0].Field]; ok {
				oe.Param = k // the model's option, as the request named it
			}
		}
		a.writeOpenAIError(w, oe)
		return
	}
	if o.Task.Status.Active() && a.svc.SyncWait > 0 {
		ctx, stop := a.waitContext(r)
		waited, err := a.svc.Wait(ctx, key.AccountID, o.Task.ID, a.svc.SyncWait)
		stop()
		if err == nil {
			o = waited
		}
	}
	t := o.Task
	switch {
	case t.Status == gengate.StatusSucceeded:
		if req.ResponseFormat == "b64_json" {
			if err := a.writeOpenAIB64(w, r, t); err != nil {
				a.writeOpenAIError(w, a.fromGengate(r, err))
			}
			return
		}
		writeJSON(w, http.StatusOK, a.openAIResult(r, t))
	case t.Status.Active():
		// OpenAI's API has no pending answer. A retry with the same
		// Idempotency-Key waits for this task again; without a key a
		// retry would start (and pay for) another, so the SDK is told not
		// to retry.
		a.writeOpenAIError(w, &openAIError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "generation_pending",
			Retry: idem != "",
			Message: fmt.Sprintf("the generation is still running as task %s (GET %s); retry with the same Idempotency-Key to wait for it",
				t.ID, statusURL(t))})
	case t.Status == gengate.StatusNeedsReview:
		a.writeOpenAIError(w, &openAIError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "generation_needs_review",
			Message: reviewMessage + " (task " + t.ID + ")"})
	default:
		e := &openAIError{Status: failureStatus(t), Type: "server_error", Code: "generation_failed",
			Message: fmt.Sprintf("the generation failed and its %d credits were refunded: %s (task %s)", t.Cost, t.ErrorMessage, t.ID)}
		if e.Status == http.StatusUnprocessableEntity {
			e.Status, e.Type = http.StatusBadRequest, "invalid_request_error"
			if t.ErrorCode == gengate.CodeContentPolicy {
				e.Code = "content_policy_violation"
			}
		}
		a.writeOpenAIError(w, e)
	}
}

// openAIResult is a succeeded task as OpenAI's ImagesResponse with URLs.
func (a *api) openAIResult(r *http.Request, t *gengate.Task) map[string]any {
	items := make([]map[string]any, 0, len(t.Outputs))
	for _, u := range a.outputURLs(r, t) {
		items = append(items, map[string]any{"url": u})
	}
	out := map[string]any{"created": t.CreatedAt.Unix(), "data": items}
	if f, ok := t.Options["outputFormat"].(string); ok {
		out["output_format"] = f
	}
	return out
}

// writeOpenAIB64 answers a succeeded task as OpenAI's ImagesResponse with
// each image inline (b64_json), encoded as it streams from storage: the
// members in the order json.Marshal gives them, no output held whole. The
// files are opened first, so that a missing one is an error before
// anything is written.
func (a *api) writeOpenAIB64(w http.ResponseWriter, r *http.Request, t *gengate.Task) error {
	files := make([]gengate.BlobFile, 0, len(t.Outputs))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, c := range t.Outputs {
		f, err := a.svc.Blobs.Open(r.Context(), c.Key)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, `{"created":%d,"data":[`, t.CreatedAt.Unix())
	for i, f := range files {
		if i > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, `{"b64_json":"`)
		enc := base64.NewEncoder(base64.StdEncoding, w)
		if _, err := io.Copy(enc, f); err != nil {
			// The status is sent: the cut answer is not valid JSON,
			// which the client sees.
			a.log.WarnContext(r.Context(), "streaming an output failed", "jobId", t.ID, "err", err)
			return nil
		}
		enc.Close()
		io.WriteString(w, `"}`)
	}
	io.WriteString(w, "]")
	if f, ok := t.Options["outputFormat"].(string); ok {
		b, _ := json.Marshal(f)
		fmt.Fprintf(w, `,"output_format":%s`, b)
	}
	io.WriteString(w, "}\n")
	return nil
}

// openAIParam names a gengate field of the model as the OpenAI request's
// parameter: OpenAI's own name where gengate maps one, image for the
// model's image inputs (sent as image files), else the model's option by
// its own name (scale, seed, ...).
func openAIParam(modelID string, c *gengate.Catalog, field string) string {
	if p := openAIParams[field]; p != "" {
		return p
	}
	if m, ok := c.Model(modelID); ok {
		if f, ok := m.Field(field); ok && f.Kind != string(gengate.KindImage) {
			return field
		}
	}
	return "image"
}
