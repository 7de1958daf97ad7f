package httpapi

// Replicate-compatible predictions under /v1, so that code written for
// Replicate's clients (replicate-go, the npm replicate package) runs
// against gengate by changing its base URL and token: each prediction is
// one gengate task (same keys, credits, spend limits, review, idempotency
// and webhooks). A model is named as Replicate names it (each Replicate
// route of the catalog names one) or as gengate/{modelId}; its input is
// in that model's Replicate names, mapped by the replicate engine's own
// table read backwards (replicate.Inverse). Answers and errors have
// Replicate's shapes; docs/replicate.md has the mapping and what differs.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// replicateMaxWait is the longest Prefer: wait Replicate honours, in
// seconds (its documented range is 1 to 60).
const replicateMaxWait = 60

// replicateCreate is the body of a create call.
type replicateCreate struct {
	Version             string         `json:"version"`
	Input               map[string]any `json:"input"`
	Webhook             string         `json:"webhook"`
	WebhookEventsFilter []string       `json:"webhook_events_filter"`
	Stream              bool           `json:"stream"`
}

// replicateEvents are the webhook_events_filter values Replicate knows.
var replicateEvents = map[string]bool{"start": true, "output": true, "logs": true, "completed": true}

// writeReplicateError answers err in Replicate's error shape: the RFC 9457
// members title, detail and status (plus gengate's code, requestId and,
// for invalid input, Replicate's invalid_fields), with Replicate's
// statuses: 422 for input the model cannot take.
func (a *api) writeReplicateError(w http.ResponseWriter, r *http.Request, err error) {
	var e *gengate.Error
	if !errors.As(err, &e) {
		a.log.ErrorContext(r.Context(), "internal error", "err", err, "requestId", requestID(r))
		e = gengate.Errorf(gengate.EInternal, "internal error; the request id identifies it in the logs")
	}
	status := statusOf[e.Code]
	switch e.Code {
	case gengate.EInvalid, gengate.EUnsupportedOption:
		status = http.StatusUnprocessableEntity
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if secs, ok := e.Extra["retryAfter"].(int); ok && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	if e.Code == gengate.EOverloaded && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(overloadedRetryAfter))
	}
	if e.Code == gengate.EUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gengate"`)
	}
	title := http.StatusText(status)
	if status == http.StatusUnprocessableEntity {
		title = "Input validation failed"
	}
	body := map[string]any{"title": title, "detail": e.Message, "status": status, "code": e.Code}
	if id := requestID(r); id != "" {
		body["requestId"] = id
	}
	if len(e.Fields) > 0 {
		fields := make([]map[string]any, 0, len(e.Fields))
		for _, f := range e.Fields {
			fields = append(fields, map[string]any{"type": strings.ToLower(f.Code), "field": f.Field, "description": f.Message})
		}
		body["invalid_fields"] = fields
	}
	for _, k := range []string{"requiredCredits", "remainingCredits", "spendLimit", "spentToday", "jobId"} {
		if v, ok := e.Extra[k]; ok {
			body[k] = v
		}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// replicateAuth authenticates like the rest of the API but refuses in
// Replicate's shape.
func (a *api) replicateAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := a.facadeKey(r)
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(withAPIKey(r.Context(), key)))
	})
}

// replicateRateLimit is rateLimit (the key's --rate-limit on creating
// calls) answered in Replicate's shape.
func (a *api) replicateRateLimit(next http.Handler) http.Handler {
	if a.limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := a.limiter.wait(limitID(r), time.Now()); d > 0 {
			secs := int(math.Ceil(d.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			a.writeReplicateError(w, r, gengate.Errorf(gengate.ERateLimited, "too many predictions for this API key; retry in %d s", secs))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// handleReplicateModelPredictions is POST
// /v1/models/{owner}/{name}/predictions.
func (a *api) handleReplicateModelPredictions() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner, name := r.PathValue("owner"), r.PathValue("name")
		// The model is known before the body is read: its unknown inputs
		// are skipped unheld (inputFilter), and an unknown model is
		// refused without reading the body.
		fm, err := a.replicateModel(owner+"/"+name, "")
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		req, err := a.readReplicateCreate(w, r, fm)
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		a.createPrediction(w, r, fm, req)
	})
}

// handleReplicatePredictions is POST /v1/predictions: the model named by
// version (owner/name, owner/name:version, or a version id).
func (a *api) handleReplicatePredictions() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := a.readReplicateCreate(w, r, facadeModel{})
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		if req.Version == "" {
			a.writeReplicateError(w, r, &gengate.Error{Code: gengate.EInvalid, Message: "version is required",
				Fields: []gengate.FieldError{{Field: "version", Code: gengate.FieldRequired, Message: "version is required"}}})
			return
		}
		name, version, hasVersion := strings.Cut(req.Version, ":")
		if !hasVersion && !strings.Contains(name, "/") {
			name, version = "", name // a bare version id
		}
		fm, err := a.replicateModel(name, version)
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		a.createPrediction(w, r, fm, req)
	})
}

// replicateMembers are the members of a create call's body; others are
// skipped unread.
var replicateMembers = map[string]bool{"version": true, "input": true, "webhook": true, "webhook_events_filter": true, "stream": true}

// readReplicateCreate decodes a create call's body as it is read
// (readFacadeBody): of the input, the members fm's mapping knows when fm
// names a model (inputFilter), all of them otherwise.
func (a *api) readReplicateCreate(w http.ResponseWriter, r *http.Request, fm facadeModel) (*replicateCreate, error) {
	var inverse InverseFunc
	if fm.upstream != "" {
		inverse = a.cfg.Facades.ReplicateInput
	}
	filter := newInputFilter(fm, inverse)
	m, err := readFacadeBody(r, func(parent, name string) bool {
		switch parent {
		case "":
			return replicateMembers[name]
		case "input":
			return filter.keep(name)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if in, ok := m["input"].(map[string]any); ok || m["input"] == nil {
		if restored := filter.restore(in); restored != nil {
			m["input"] = restored
		}
	}
	if m == nil {
		return nil, gengate.Errorf(gengate.EInvalid, "send a JSON object with input as the request body")
	}
	var req replicateCreate
	var bad []gengate.FieldError
	str := func(name string) string {
		v, ok := m[name].(string)
		if !ok && m[name] != nil {
			bad = append(bad, gengate.FieldError{Field: name, Code: gengate.FieldType, Message: "must be a string"})
		}
		return v
	}
	req.Version, req.Webhook = str("version"), str("webhook")
	switch in := m["input"].(type) {
	case map[string]any:
		req.Input = in
	case nil:
		req.Input = map[string]any{}
	default:
		bad = append(bad, gengate.FieldError{Field: "input", Code: gengate.FieldType, Message: "must be an object"})
	}
	switch f := m["webhook_events_filter"].(type) {
	case nil:
	case []any:
		req.WebhookEventsFilter = []string{} // given: an empty filter sends nothing
		for _, ev := range f {
			s, _ := ev.(string)
			if !replicateEvents[s] {
				bad = append(bad, gengate.FieldError{Field: "webhook_events_filter", Code: gengate.FieldValue, Message: fmt.Sprintf("unknown event %v", ev)})
				continue
			}
			req.WebhookEventsFilter = append(req.WebhookEventsFilter, s)
		}
	default:
		bad = append(bad, gengate.FieldError{Field: "webhook_events_filter", Code: gengate.FieldType, Message: "must be a list of start, output, logs and completed"})
	}
	switch st := m["stream"].(type) {
	case nil:
	case bool:
		req.Stream = st
	default:
		bad = append(bad, gengate.FieldError{Field: "stream", Code: gengate.FieldType, Message: "must be a boolean"})
	}
	if len(bad) > 0 {
		msg := bad[0].Field + ": " + bad[0].Message
		if bad[0].Field == "webhook_events_filter" && bad[0].Code == gengate.FieldValue {
			msg = "webhook_events_filter takes start, output, logs and completed"
		}
		return nil, &gengate.Error{Code: gengate.EInvalid, Message: msg, Fields: bad}
	}
	if req.Stream {
		return nil, &gengate.Error{Code: gengate.EInvalid, Message: "gengate streams no output: create the prediction without stream",
			Fields: []gengate.FieldError{{Field: "stream", Code: gengate.FieldUnsupported, Message: "not served"}}}
	}
	return &req, nil
}

// replicateModel finds the model a Replicate name (owner/name) or version
// id names: a Replicate route of the catalog, or gengate/{modelId}.
func (a *api) replicateModel(name, version string) (facadeModel, error) {
	if owner, id, ok := strings.Cut(name, "/"); ok && owner == gengateOwner {
		if m, ok := a.svc.Catalog.Model(id); ok {
			return facadeModel{model: m, name: name}, nil
		}
	}
	var fm facadeModel
	var ok bool
	if name == "" {
		fm, ok = a.facades.versions[version]
	} else {
		fm, ok = a.facades.replicate[strings.ToLower(name)]
		if ok && version != "" && fm.version != "" && fm.version != version {
			ok = false
		}
	}
	if !ok {
		what := "model " + name
		if name == "" {
			what = "version " + version
		} else if version != "" {
			what += ":" + version
		}
		return facadeModel{}, gengate.Errorf(gengate.ENotFound,
			"%s is not served here: use a Replicate model the catalog routes, or gengate/{modelId} (GET /api/v1/models lists them)", what)
	}
	return fm, nil
}

// createPrediction runs a create call as one gengate task and answers the
// prediction (201), waiting first as Prefer: wait asks.
func (a *api) createPrediction(w http.ResponseWriter, r *http.Request, fm facadeModel, req *replicateCreate) {
	var inverse InverseFunc
	if fm.upstream != "" {
		inverse = a.cfg.Facades.ReplicateInput
	}
	body, names, err := generateBody(fm, inverse, req.Input)
	if err != nil {
		a.writeReplicateError(w, r, err)
		return
	}
	if req.Webhook != "" {
		body[gengate.WebhookURLField] = req.Webhook
		names[gengate.WebhookURLField] = "webhook"
	}
	key := apiKey(r)
	var o *gengate.Outcome
	req2, err := a.facadeRequest(body)
	if err == nil {
		if req.Webhook != "" {
			// The prediction's events (gengate.PredictionEvents); without
			// a filter output and completed, as Replicate's API reference
			// documents its default ("whenever there are new outputs or
			// the prediction has finished").
			req2.WebhookEvents = req.WebhookEventsFilter
			if req2.WebhookEvents == nil {
				req2.WebhookEvents = []string{gengate.PredictionOutput, gengate.PredictionCompleted}
			}
		}
		o, err = a.svc.GenerateRequest(r.Context(), key, req2, r.Header.Get("Idempotency-Key"))
	}
	if err != nil {
		a.writeReplicateError(w, r, renameFields(err, names))
		return
	}
	if wait := replicateWait(r.Header.Values("Prefer"), a.svc.SyncWait); wait > 0 {
		w.Header().Set("Preference-Applied", "wait="+strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		if o.Task.Status.Active() {
			o = a.await(r, key.AccountID, o, wait)
		}
	}
	p := a.prediction(r, o.Task, fm.name)
	w.Header().Set("Location", p["urls"].(map[string]any)["get"].(string))
	writeJSON(w, http.StatusCreated, p)
}

// legacyReplicateHookMark is the fragment with which the previous release
// marked the webhookUrl of a prediction's task (its final-state events
// sent as the prediction object) instead of keeping its filter
// (gengate.Task.WebhookEvents). Such tasks, created before the upgrade or
// by a process of that release during a rolling upgrade, are still
// answered so (WebhookBody) until they are purged.
const legacyReplicateHookMark = "gengate-replicate-prediction"

func isLegacyReplicateHook(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Fragment == legacyReplicateHookMark
}

// predictionAt makes p, the prediction of a task as it is now, the
// prediction as it was when the webhook event ev (a prediction event,
// gengate.PredictionEvents) was written, logs being its lines then: at
// start and at a logs event it was processing, without output, error
// or completion, and its logs were those; at output it was still
// processing, with its output (gengate has them only at the end, so the
// logs are the final ones). At completed it is as it is now, final.
func predictionAt(p map[string]any, ev, logs string) {
	switch ev {
	case gengate.PredictionStart, gengate.PredictionLogs, gengate.PredictionOutput:
		p["status"] = replicateStatus(gengate.StatusRunning)
		p["started_at"] = p["created_at"] // as prediction() has it for a task out of the queue
		p["error"], p["completed_at"] = nil, nil
		delete(p, "metrics")
		if ev != gengate.PredictionOutput {
			p["output"], p["logs"] = nil, logs
		}
	}
}

// handleReplicateWebhookSecret is GET /v1/webhooks/default/secret: the
// account's signing secret, in Replicate's {"key"} (the secret of
// GET /api/v1/webhooks/secret).
func (a *api) handleReplicateWebhookSecret() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, err := a.svc.WebhookSecret(r.Context(), apiKey(r).AccountID)
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"key": secret})
	})
}

// replicateWait reads Prefer as Replicate documents it: "wait" waits up to
// 60 s, "wait=N" N seconds (1 to 60); anything else does not wait. The
// server's --sync-wait caps both.
func replicateWait(values []string, syncWait time.Duration) time.Duration {
	secs := 0
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			tok, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			name, val, hasVal := strings.Cut(strings.TrimSpace(tok), "=")
			if !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			secs = replicateMaxWait
			if hasVal {
				n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(val), `"`))
				if err != nil || n < 1 {
					secs = 0
					continue
				}
				secs = min(n, replicateMaxWait)
			}
		}
	}
	return min(time.Duration(secs)*time.Second, syncWait)
}

// replicateStatus is a task's status as Replicate names it: queued is
// starting; submitted, running and held for review are processing.
func replicateStatus(s gengate.Status) string {
	switch s {
	case gengate.StatusQueued:
		return "starting"
	case gengate.StatusSucceeded, gengate.StatusFailed, gengate.StatusCanceled:
		return string(s)
	}
	return "processing"
}

// prediction is a task as Replicate's prediction object. model is the
// name the caller used; "" names it by the model's first Replicate route,
// or gengate/{modelId}.
func (a *api) prediction(r *http.Request, t *gengate.Task, model string) map[string]any {
	if model == "" {
		model = a.facades.canonical[t.ModelID]
		if model == "" {
			model = gengateOwner + "/" + t.ModelID
		}
	}
	version := ""
	if fm, ok := a.facades.replicate[strings.ToLower(model)]; ok {
		version = fm.version
	}
	get := a.baseURL(r) + "/v1/predictions/" + t.ID
	p := map[string]any{
		"id": t.ID, "model": model, "version": version, "input": predictionInput(t), "output": nil, "error": nil,
		"status": replicateStatus(t.Status), "source": "api", "data_removed": false,
		"created_at": timestamp(t.CreatedAt), "started_at": nil, "completed_at": nil,
		"urls": map[string]any{"get": get, "cancel": get + "/cancel"},
	}
	if t.Status != gengate.StatusQueued {
		p["started_at"] = timestamp(t.CreatedAt)
	}
	var logs []string
	if rep, err := a.svc.Progress(r.Context(), t); err == nil && rep != nil {
		logs = append(logs, rep.Logs...)
	}
	if t.Status == gengate.StatusNeedsReview {
		logs = append(logs, "gengate: "+reviewMessage)
	}
	p["logs"] = strings.Join(logs, "\n")
	if !t.CompletedAt.IsZero() {
		p["completed_at"] = timestamp(t.CompletedAt)
		secs := t.CompletedAt.Sub(t.CreatedAt).Seconds()
		p["metrics"] = map[string]any{"predict_time": secs, "total_time": secs}
	}
	switch t.Status {
	case gengate.StatusSucceeded:
		urls := a.outputURLs(r, t)
		many := false
		if m, ok := a.svc.Catalog.Model(t.ModelID); ok {
			_, many = m.Field("numOutputs")
		}
		switch {
		case t.Type == "image" && many:
			p["output"] = urls
		case len(urls) > 0:
			p["output"] = urls[0]
		}
	case gengate.StatusFailed:
		p["error"] = t.ErrorMessage
		if p["error"] == "" {
			p["error"] = "the generation failed"
		}
	}
	return p
}

// predictionInput is a task's input as a prediction shows it: the prompt,
// every option (defaults included) and the input URLs, under gengate's
// names in snake_case.
func predictionInput(t *gengate.Task) map[string]any {
	in := map[string]any{}
	if t.Prompt != "" {
		in["prompt"] = t.Prompt
	}
	for k, v := range t.Options {
		in[gengate.SnakeName(k)] = v
	}
	for k, v := range t.InputURLs {
		in[gengate.SnakeName(strings.TrimPrefix(k, "inputs."))] = v
	}
	return in
}

// handleReplicateGet is GET /v1/predictions/{id}.
func (a *api) handleReplicateGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, err := a.svc.Find(r.Context(), apiKey(r).AccountID, r.PathValue("id"))
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		if o.Task.Status.Active() {
			w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter(o.Task)))
		}
		writeJSON(w, http.StatusOK, a.prediction(r, o.Task, ""))
	})
}

// handleReplicateCancel is POST /v1/predictions/{id}/cancel: gengate's
// cancel (its refund rules); a prediction that already finished is
// answered as it is, as Replicate does.
func (a *api) handleReplicateCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accountID := apiKey(r).AccountID
		o, err := a.svc.Cancel(r.Context(), accountID, r.PathValue("id"))
		if gengate.ErrorCode(err) == gengate.ETaskFinished {
			o, err = a.svc.Find(r.Context(), accountID, r.PathValue("id"))
		}
		if err != nil {
			if gengate.ErrorCode(err) == gengate.ETaskBusy {
				w.Header().Set("Retry-After", "1")
			}
			a.writeReplicateError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, a.prediction(r, o.Task, ""))
	})
}

// handleReplicateList is GET /v1/predictions: the account's predictions
// (every task), newest first, a page at a time: next is the address of
// the next page, null on the last.
func (a *api) handleReplicateList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := gengate.TaskFilter{Limit: DefaultPageLimit}
		var err error
		if r.URL.Query().Get("limit") != "" {
			f.Limit, err = pageLimit(r)
		}
		if err == nil {
			f.After, err = readTaskCursor(r)
		}
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		limit := f.Limit
		f.Limit++
		tasks, err := a.svc.Store.ListAccountTasks(r.Context(), apiKey(r).AccountID, f)
		if err != nil {
			a.writeReplicateError(w, r, err)
			return
		}
		page := map[string]any{}
		tasks = onePage(tasks, limit, page, func(t *gengate.Task) string { return createdCursor(t.CreatedAt, t.ID) })
		results := make([]map[string]any, 0, len(tasks))
		for _, t := range tasks {
			results = append(results, a.prediction(r, t, ""))
		}
		body := map[string]any{"results": results, "previous": nil, "next": nil}
		if c, ok := page["nextCursor"].(string); ok {
			q := url.Values{"cursor": {c}}
			if limit != DefaultPageLimit {
				q.Set("limit", strconv.Itoa(limit))
			}
			body["next"] = fmt.Sprintf("%s/v1/predictions?%s", a.baseURL(r), q.Encode())
		}
		writeJSON(w, http.StatusOK, body)
	})
}
