package httpapi

// fal's queue through fal's own clients. fal's JavaScript and Python
// clients, given a proxyUrl, send every request to it with the real target
// in the x-fal-target-url header (fal's server-proxy protocol: fal-js's
// withProxy middleware). gengate serves that protocol at /fal/proxy and
// answers the target itself: a submit to https://queue.fal.run/{endpoint
// id} runs the catalog model whose fal route names the endpoint as one
// gengate task; status, result and cancel by the URLs the submit returned;
// a POST to https://fal.run/{endpoint id} waits for the result. Inputs are
// in the endpoint's fal names, mapped by the fal engine's own table read
// backwards (fal.Inverse); answers and errors have fal's shapes.
// docs/fal.md has the mapping and what differs.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// falProxyPath is the route of fal's server-proxy protocol: every method.
const falProxyPath = "/fal/proxy"

// TargetURLHeader names the real target of a proxied request.
const falTargetHeader = "X-Fal-Target-Url"

// falHosts are the fal hosts whose protocol /fal/proxy answers.
const (
	falQueueHost = "queue.fal.run"
	falRunHost   = "fal.run"
)

// falError is an error in one of fal's two shapes: a request error
// {"detail": "...", "error_type": "..."}, or a validation error
// {"detail": [{"loc", "msg", "type"}]} (422). code is gengate's.
type falError struct {
	status int
	detail string
	kind   string // error_type
	code   string
	fields []gengate.FieldError
}

func (a *api) writeFalError(w http.ResponseWriter, r *http.Request, e *falError) {
	body := e.body()
	if id := requestID(r); id != "" {
		body["requestId"] = id
	}
	if len(e.fields) > 0 {
		w.Header().Set("X-Fal-Retryable", "false")
	} else {
		w.Header().Set("X-Fal-Error-Type", e.kind)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(body)
}

// body is the error's body: {"detail", "error_type", "code"}, or
// {"detail": [{"loc", "msg", "type"}], "code"} for a validation error.
func (e *falError) body() map[string]any {
	body := map[string]any{"code": e.code}
	if len(e.fields) > 0 {
		detail := make([]map[string]any, 0, len(e.fields))
		for _, f := range e.fields {
			detail = append(detail, map[string]any{"loc": []string{"body", f.Field}, "msg": f.Message, "type": strings.ToLower(f.Code)})
		}
		body["detail"] = detail
	} else {
		body["detail"], body["error_type"] = e.detail, e.kind
	}
	return body
}

// falErrorOf turns a gengate error into fal's shape.
func (a *api) falErrorOf(r *http.Request, err error) *falError {
	var e *gengate.Error
	if !errors.As(err, &e) {
		a.log.ErrorContext(r.Context(), "internal error", "err", err, "requestId", requestID(r))
		return &falError{status: 500, detail: "internal error; the request id identifies it in the logs", kind: "internal_error", code: gengate.EInternal}
	}
	status := statusOf[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	fe := &falError{status: status, detail: e.Message, kind: strings.ToLower(e.Code), code: e.Code}
	switch e.Code {
	case gengate.EInvalid, gengate.EUnsupportedOption:
		fe.status = http.StatusUnprocessableEntity
		fe.fields = e.Fields
		if len(fe.fields) == 0 {
			fe.fields = []gengate.FieldError{{Field: "", Code: "value_error", Message: e.Message}}
		}
	case gengate.EInternal:
		fe.kind = "internal_error"
	}
	return fe
}

// handleFalProxy is /fal/proxy: the request's x-fal-target-url says what
// it asks.
func (a *api) handleFalProxy() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.Header.Get(falTargetHeader)
		if raw == "" {
			a.writeFalError(w, r, &falError{status: http.StatusBadRequest, kind: "invalid_target", code: gengate.EInvalid,
				detail: "send the fal address asked for in the x-fal-target-url header (fal's server-proxy protocol)"})
			return
		}
		target, err := url.Parse(raw)
		if err != nil || target.Scheme != "https" || (target.Host != falQueueHost && target.Host != falRunHost) {
			a.writeFalError(w, r, &falError{status: http.StatusPreconditionFailed, kind: "invalid_target", code: gengate.EInvalid,
				detail: "x-fal-target-url must be an https://queue.fal.run/... or https://fal.run/... address"})
			return
		}
		key, err := a.facadeKey(r)
		if err != nil {
			a.writeFalError(w, r, a.falErrorOf(r, err))
			return
		}
		r = r.WithContext(withAPIKey(r.Context(), key))
		path := strings.Trim(target.Path, "/")
		app, rest, isRequest := strings.Cut(path, "/requests/")
		switch {
		case target.Host == falRunHost && r.Method == http.MethodPost:
			a.falSubmit(w, r, path, target, true)
		case target.Host == falRunHost:
			a.falMethodNotAllowed(w, r, "POST")
		case !isRequest && r.Method == http.MethodPost:
			a.falSubmit(w, r, path, target, false)
		case !isRequest:
			a.falMethodNotAllowed(w, r, "POST")
		default:
			id, op, _ := strings.Cut(rest, "/")
			switch {
			case op == "status" && r.Method == http.MethodGet:
				a.falStatus(w, r, app, id, target.Query().Get("logs") == "1")
			case op == "" && r.Method == http.MethodGet:
				a.falResult(w, r, app, id)
			case op == "cancel" && r.Method == http.MethodPut:
				a.falCancel(w, r, app, id)
			case op == "status" || op == "" || op == "cancel":
				a.falMethodNotAllowed(w, r, map[string]string{"status": "GET", "": "GET", "cancel": "PUT"}[op])
			default:
				a.writeFalError(w, r, &falError{status: http.StatusNotFound, kind: "not_found", code: gengate.ENotFound,
					detail: "gengate's fal queue serves submit, status, result and cancel (no status streaming)"})
			}
		}
	})
}

func (a *api) falMethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	a.writeFalError(w, r, &falError{status: http.StatusMethodNotAllowed, kind: "method_not_allowed", code: gengate.EMethodNotAllowed,
		detail: fmt.Sprintf("%s is not allowed on this fal address; use %s", r.Method, allow)})
}

// falSubmit is a submit to the queue (or, sync, a run on fal.run that
// waits for the result): one gengate task.
func (a *api) falSubmit(w http.ResponseWriter, r *http.Request, endpoint string, target *url.URL, sync bool) {
	if a.limiter != nil {
		if d := a.limiter.wait(limitID(r), time.Now()); d > 0 {
			secs := int(math.Ceil(d.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			a.writeFalError(w, r, &falError{status: http.StatusTooManyRequests, kind: "rate_limited", code: gengate.ERateLimited,
				detail: fmt.Sprintf("too many requests for this API key; retry in %d s", secs)})
			return
		}
	}
	fm, ok := a.facades.fal[endpoint]
	if !ok {
		a.writeFalError(w, r, &falError{status: http.StatusNotFound, kind: "not_found", code: gengate.ENotFound,
			detail: fmt.Sprintf("the endpoint %q is not served here: use a fal endpoint the catalog routes (GET /api/v1/models lists the models)", endpoint)})
		return
	}
	filter := newInputFilter(fm, a.cfg.Facades.FalInput)
	input, err := readFacadeBody(r, func(parent, name string) bool { return parent != "" || filter.keep(name) })
	if err != nil {
		a.writeFalError(w, r, a.falErrorOf(r, err))
		return
	}
	input = filter.restore(input)
	body, names, err := generateBody(fm, a.cfg.Facades.FalInput, input)
	if err != nil {
		a.writeFalError(w, r, a.falErrorOf(r, err))
		return
	}
	if names["aspectRatio"] == "image_size" {
		// A custom {width, height}: the model's nearest aspect ratio.
		if f, ok := fm.model.Field("aspectRatio"); ok {
			if ar, _ := body["aspectRatio"].(string); !slices.Contains(f.Values, any(ar)) {
				if x, y, ok := strings.Cut(ar, ":"); ok {
					xf, _ := strconv.ParseFloat(x, 64)
					yf, _ := strconv.ParseFloat(y, 64)
					if yf > 0 {
						body["aspectRatio"] = nearestRatio(f.Values, xf/yf)
					}
				}
			}
		}
	}
	hook := target.Query().Get("fal_webhook")
	if hook != "" {
		body[gengate.WebhookURLField] = hook
		names[gengate.WebhookURLField] = "fal_webhook"
	}
	key := apiKey(r)
	var o *gengate.Outcome
	req, err := a.facadeRequest(body)
	if err == nil {
		if hook != "" {
			// Its event is sent as fal sends a queue webhook
			// (falwebhook.go).
			req.WebhookEvents = gengate.FalWebhookEvents
		}
		o, err = a.svc.GenerateRequest(r.Context(), key, req, r.Header.Get("Idempotency-Key"))
	}
	if err != nil {
		a.writeFalError(w, r, a.falErrorOf(r, renameFields(err, names)))
		return
	}
	w.Header().Set("X-Fal-Request-Id", o.Task.ID)
	if sync {
		if o.Task.Status.Active() && a.svc.SyncWait > 0 {
			o = a.await(r, key.AccountID, o, a.svc.SyncWait)
		}
		a.writeFalResult(w, r, o.Task)
		return
	}
	app := falApp(endpoint)
	base := "https://" + falQueueHost + "/" + app + "/requests/" + o.Task.ID
	writeJSON(w, http.StatusOK, map[string]any{"status": "IN_QUEUE", "request_id": o.Task.ID, "gateway_request_id": o.Task.ID,
		"response_url": base, "status_url": base + "/status", "cancel_url": base + "/cancel", "queue_position": 0})
}

// falApp is the owner/alias of an endpoint id: fal's status, result and
// cancel addresses name only these.
func falApp(endpoint string) string {
	parts := strings.SplitN(endpoint, "/", 3)
	if len(parts) < 2 {
		return endpoint
	}
	return parts[0] + "/" + parts[1]
}

// falTask finds the account's task id asked on the app's addresses: a
// task of a model one of the app's endpoints serves.
func (a *api) falTask(r *http.Request, app, id string) (*gengate.Outcome, *falError) {
	o, err := a.svc.Find(r.Context(), apiKey(r).AccountID, id)
	if err == nil {
		for ep, fm := range a.facades.fal {
			if falApp(ep) == app && fm.model.ID == o.Task.ModelID {
				return o, nil
			}
		}
		err = gengate.Errorf(gengate.ENotFound, "no such request")
	}
	if gengate.ErrorCode(err) == gengate.ENotFound {
		return nil, &falError{status: http.StatusNotFound, kind: "not_found", code: gengate.ENotFound,
			detail: fmt.Sprintf("request %s not found for %s", id, app)}
	}
	return nil, a.falErrorOf(r, err)
}

// falStatus is GET .../requests/{id}/status: 202 while queued or in
// progress (with the queue position and, with logs=1, the logs), 200 once
// completed.
func (a *api) falStatus(w http.ResponseWriter, r *http.Request, app, id string, withLogs bool) {
	o, fe := a.falTask(r, app, id)
	if fe != nil {
		a.writeFalError(w, r, fe)
		return
	}
	t := o.Task
	base := "https://" + falQueueHost + "/" + app + "/requests/" + t.ID
	body := map[string]any{"request_id": t.ID, "response_url": base, "status_url": base + "/status", "cancel_url": base + "/cancel"}
	rep, err := a.svc.Progress(r.Context(), t)
	if err != nil {
		a.log.WarnContext(r.Context(), "read progress", "jobId", t.ID, "err", err)
	}
	if withLogs {
		logs := []map[string]any{}
		if rep != nil {
			for _, l := range rep.Logs {
				logs = append(logs, map[string]any{"message": l, "level": "INFO", "source": "USER", "timestamp": timestamp(rep.At)})
			}
		}
		if t.Status == gengate.StatusNeedsReview {
			logs = append(logs, map[string]any{"message": "gengate: " + reviewMessage, "level": "WARN", "source": "USER", "timestamp": timestamp(t.UpdatedAt)})
		}
		body["logs"] = logs
	}
	status := http.StatusAccepted
	switch {
	case t.Status == gengate.StatusQueued || (t.Status.Active() && rep != nil && rep.QueuePosition != nil):
		body["status"], body["queue_position"] = "IN_QUEUE", 0
		if rep != nil && rep.QueuePosition != nil {
			body["queue_position"] = *rep.QueuePosition
		}
	case !t.Status.Done():
		body["status"] = "IN_PROGRESS"
	default:
		status = http.StatusOK
		body["status"] = "COMPLETED"
		body["metrics"] = map[string]any{"inference_time": t.CompletedAt.Sub(t.CreatedAt).Seconds()}
		if t.Status != gengate.StatusSucceeded {
			fe := a.falFailure(t)
			body["error"], body["error_type"] = fe.detail, fe.kind
		}
	}
	if t.Status.Active() {
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter(t)))
	}
	writeJSON(w, status, body)
}

// falResult is GET .../requests/{id}: the endpoint's output, or the
// request's error.
func (a *api) falResult(w http.ResponseWriter, r *http.Request, app, id string) {
	o, fe := a.falTask(r, app, id)
	if fe != nil {
		a.writeFalError(w, r, fe)
		return
	}
	w.Header().Set("X-Fal-Request-Id", o.Task.ID)
	a.writeFalResult(w, r, o.Task)
}

// writeFalResult answers a task as fal's result: images[].url or
// video.url; its failure in fal's error shape; 400 while it runs.
func (a *api) writeFalResult(w http.ResponseWriter, r *http.Request, t *gengate.Task) {
	switch {
	case t.Status == gengate.StatusSucceeded:
		writeJSON(w, http.StatusOK, a.falOutput(r, t))
	case t.Status.Done():
		a.writeFalError(w, r, a.falFailure(t))
	default:
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter(t)))
		detail := "the request is still in progress; ask its status_url"
		if t.Status == gengate.StatusNeedsReview {
			detail = reviewMessage
		}
		a.writeFalError(w, r, &falError{status: http.StatusBadRequest, kind: "request_in_progress", code: "IN_PROGRESS", detail: detail})
	}
}

// falOutput is a succeeded task's result as fal's endpoint answers it:
// {"images": [{"url", "content_type"}], "prompt", "seed"?}, or {"video":
// {"url", "content_type"}}.
func (a *api) falOutput(r *http.Request, t *gengate.Task) map[string]any {
	urls := a.outputURLs(r, t)
	out := map[string]any{}
	if t.Type == "video" {
		v := map[string]any{"url": "", "content_type": "video/mp4"}
		if len(urls) > 0 {
			v["url"] = urls[0]
			v["content_type"] = t.Outputs[0].ContentType
		}
		out["video"] = v
	} else {
		images := make([]map[string]any, 0, len(urls))
		for i, u := range urls {
			images = append(images, map[string]any{"url": u, "content_type": t.Outputs[i].ContentType})
		}
		out["images"] = images
	}
	if t.Prompt != "" {
		out["prompt"] = t.Prompt
	}
	if seed, ok := t.Options["seed"]; ok && seed != nil {
		out["seed"] = seed
	}
	return out
}

// falFailure is a failed or canceled task as fal's request error.
func (a *api) falFailure(t *gengate.Task) *falError {
	if t.Status == gengate.StatusCanceled {
		return &falError{status: http.StatusBadRequest, kind: "request_canceled", code: gengate.ECanceled,
			detail: "the request was canceled: " + t.ErrorMessage}
	}
	kind := "runner_failure"
	switch failureStatus(t) {
	case http.StatusUnprocessableEntity:
		kind = "input_rejected"
		if t.ErrorCode == gengate.CodeContentPolicy {
			kind = "content_policy_violation"
		}
	case http.StatusGatewayTimeout:
		kind = "request_timeout"
	}
	return &falError{status: failureStatus(t), kind: kind, code: gengate.EFailed,
		detail: fmt.Sprintf("the generation failed and its %d credits were refunded: %s", t.Cost, t.ErrorMessage)}
}

// falCancel is PUT .../requests/{id}/cancel: 202 CANCELLATION_REQUESTED
// (gengate's cancel and refund rules), 400 ALREADY_COMPLETED, 404
// NOT_FOUND.
func (a *api) falCancel(w http.ResponseWriter, r *http.Request, app, id string) {
	if _, fe := a.falTask(r, app, id); fe != nil {
		if fe.status == http.StatusNotFound {
			writeJSON(w, http.StatusNotFound, map[string]any{"status": "NOT_FOUND", "code": gengate.ENotFound})
			return
		}
		a.writeFalError(w, r, fe)
		return
	}
	_, err := a.svc.Cancel(r.Context(), apiKey(r).AccountID, id)
	switch gengate.ErrorCode(err) {
	case "":
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "CANCELLATION_REQUESTED"})
	case gengate.ETaskFinished:
		writeJSON(w, http.StatusBadRequest, map[string]any{"status": "ALREADY_COMPLETED", "code": gengate.ETaskFinished})
	case gengate.ETaskBusy:
		w.Header().Set("Retry-After", "1")
		a.writeFalError(w, r, &falError{status: http.StatusServiceUnavailable, kind: "request_busy", code: gengate.ETaskBusy,
			detail: gengate.ErrorMessage(err)})
	default:
		a.writeFalError(w, r, a.falErrorOf(r, err))
	}
}
