package httpapi

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// handleGenerate is POST /api/v1/generate.
func (a *api) handleGenerate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Prefer")
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeError(w, r, a.log, gengate.Errorf(gengate.EUnsupportedMedia, "send the request body as JSON with Content-Type: application/json"))
			return
		}
		// The body is decoded as it arrives, never held whole; its read
		// error, if any, says why it stopped.
		opened, err := openBody(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := &bodyReader{r: opened}
		pref := parsePrefer(r.Header.Values("Prefer"))
		key := apiKey(r)
		var o *gengate.Outcome
		generate := func() {
			o, err = a.svc.GenerateFrom(r.Context(), key, body, r.Header.Get("Idempotency-Key"))
		}
		if wait, _ := pref.waitFor(a.svc.SyncWait); wait > 0 {
			// The connection's goroutine may wait for long: keep its
			// stack small.
			gengate.OnOwnStack(generate)
		} else {
			// Answered at once (respond-async): no hop, and no fresh
			// stack to grow for each call.
			generate()
		}
		switch {
		case err != nil && body.err != nil && body.err != io.EOF:
			writeError(w, r, a.log, bodyError(r, body.err))
			return
		case err != nil:
			writeError(w, r, a.log, err)
			return
		}
		wait, applied := pref.waitFor(a.svc.SyncWait)
		a.answerAfterWait(w, r, key.AccountID, o, wait, applied)
	})
}

// answerAfterWait answers a call whose task exists after waiting for it
// up to wait (prefer.waitFor: --sync-wait, or what Prefer asks), ended
// early when the server drains; applied is the Preference-Applied header
// ("" for none). An HTTP/1.x call waits parked off net/http (parked.go),
// others in the handler (await).
func (a *api) answerAfterWait(w http.ResponseWriter, r *http.Request, accountID string, o *gengate.Outcome, wait time.Duration, applied string) {
	if applied != "" {
		w.Header().Set("Preference-Applied", applied)
	}
	if wait > 0 && o.Task.Status.Active() {
		if a.park(w, r, accountID, o, wait) {
			return
		}
		o = a.await(r, accountID, o, wait)
	}
	a.writeOutcome(w, r, o)
}

// await waits up to wait for an active task in the handler, ended early
// when the server drains. The task exists: when it cannot be read back,
// it is answered as it was (202 for an active one).
func (a *api) await(r *http.Request, accountID string, o *gengate.Outcome, wait time.Duration) *gengate.Outcome {
	ctx, stop := a.waitContext(r)
	waited, err := a.svc.Wait(ctx, accountID, o.Task.ID, wait)
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		// The server is draining: answer with the task as it is.
		waited, err = a.svc.Find(r.Context(), accountID, o.Task.ID)
	}
	stop()
	if err != nil {
		// The task exists (its transaction committed): a failure to read
		// it back answers with the task as it was, never an error.
		a.log.WarnContext(r.Context(), "waiting for a task failed; answering with it as it was",
			"jobId", o.Task.ID, "err", err, "requestId", requestID(r))
		return o
	}
	return waited
}

// bodyReader keeps the first error its reader returned.
type bodyReader struct {
	r   io.Reader
	err error
	n   int64 // bytes read
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

// waitContext is the context a request waits for its task in: the
// request's own, ended early when the server drains, so that a shutdown
// answers waiting requests with 202 and their tasks rather than holding
// them to its timeout. It starts no goroutine: the drain's one context
// (New) cancels it through context.AfterFunc.
func (a *api) waitContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(a.drained, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// drainContext is a context that ends when drain closes (never for nil):
// one goroutine for the whole server, not one per waiting request.
func drainContext(drain <-chan struct{}) context.Context {
	if drain == nil {
		return context.Background()
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-drain
		cancel()
	}()
	return ctx
}

// prefer holds the Prefer preferences gengate honours (RFC 7240); others
// are ignored.
type prefer struct {
	async bool
	wait  int // seconds; -1 when not given
}

// waitFor returns how long a call waits for its task under the sync limit
// syncWait, and the Preference-Applied header that says so ("" for
// none): respond-async not at all (the spec: "requests an immediate saved
// task", whatever else Prefer holds), wait=N for N seconds but never
// longer than syncWait, no preference for syncWait.
func (p prefer) waitFor(syncWait time.Duration) (time.Duration, string) {
	switch {
	case p.async:
		return 0, "respond-async"
	case p.wait >= 0:
		wait := syncWait
		if p.wait <= int(syncWait/time.Second) { // compared in seconds: no overflow
			wait = time.Duration(p.wait) * time.Second
		}
		// Whole seconds, rounded up: a sub-second limit waits, and
		// "wait=0" would say it did not.
		return wait, "wait=" + strconv.Itoa(int((wait+time.Second-1)/time.Second))
	}
	return syncWait, ""
}

func parsePrefer(values []string) prefer {
	p := prefer{wait: -1}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			tok, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			name, val, _ := strings.Cut(strings.TrimSpace(tok), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "respond-async":
				p.async = true
			case "wait":
				if n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(val), `"`)); err == nil && n >= 0 {
					p.wait = n
				}
			}
		}
	}
	return p
}

// writeOutcome answers with a task's state as the spec has it: 200 with
// the result, 202 with the task, 409 when it needs review, or its failure.
func (a *api) writeOutcome(w http.ResponseWriter, r *http.Request, o *gengate.Outcome) {
	t := o.Task
	switch {
	case t.Status == gengate.StatusSucceeded:
		writeJSON(w, http.StatusOK, a.result(r, o))
	case t.Status.Active():
		url := statusURL(t)
		w.Header().Set("Location", url)
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter(t)))
		writeJSON(w, http.StatusAccepted, accepted{JobID: t.ID, Status: t.Status.Public(), StatusURL: url})
	case t.Status == gengate.StatusNeedsReview:
		writeError(w, r, a.log, &gengate.Error{Code: gengate.ENeedsReview,
			Message: reviewMessage,
			Extra:   map[string]any{"jobId": t.ID, "jobStatus": t.Status.Public(), "remainingCredits": o.Balance}})
	case t.Status == gengate.StatusCanceled:
		writeError(w, r, a.log, canceledProblem(o))
	default:
		extra := map[string]any{"jobId": t.ID, "jobStatus": t.Status.Public(), "refunded": true,
			"creditsRefunded": t.Cost, "remainingCredits": o.Balance}
		if reason := failureReason(t); reason != "" {
			extra["reason"] = reason
		}
		writeProblem(w, r, failureStatus(t), &gengate.Error{Code: gengate.EFailed, Message: "the generation failed: " + t.ErrorMessage,
			Extra: extra})
	}
}

// accepted is the answer for an unfinished task (202): the same members,
// in the same (sorted) order, as a map would give, without the map.
type accepted struct {
	JobID     string `json:"jobId"`
	Status    string `json:"status"`
	StatusURL string `json:"statusUrl"`
}

// reviewMessage is what the spec tells a caller whose task is in review.
const reviewMessage = "this generation needs manual review; contact support and do not submit another task for it"

func statusURL(t *gengate.Task) string { return "/api/generation/jobs/" + t.ID }

// retryAfter is the Retry-After value for an unfinished task, in seconds.
func (a *api) retryAfter(t *gengate.Task) int { return int(a.svc.RetryAfter(t) / time.Second) }

// result is the spec's image (2.2) or video (2.3) result.
func (a *api) result(r *http.Request, o *gengate.Outcome) map[string]any {
	res := map[string]any{"jobId": o.Task.ID, "remainingCredits": o.Balance}
	a.addOutputs(res, r, o.Task)
	return res
}

// addOutputs sets a succeeded task's output URLs in body: "video" for a
// video task, "images" otherwise.
func (a *api) addOutputs(body map[string]any, r *http.Request, t *gengate.Task) {
	urls := a.outputURLs(r, t)
	if t.Type != "video" {
		body["images"] = urls
		return
	}
	body["video"] = ""
	if len(urls) > 0 {
		body["video"] = urls[0]
	}
}

func (a *api) outputURLs(r *http.Request, t *gengate.Task) []string {
	base := strings.TrimRight(a.cfg.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	urls := make([]string, 0, len(t.Outputs))
	for _, c := range t.Outputs {
		urls = append(urls, base+c.Path())
	}
	return urls
}

// handleAdvance is POST /api/generation/jobs/{id}: wake the task's worker
// (a step due later is made due now), wait for the task briefly, and
// answer 200 with the result or 202 with the task. The wait is --poll-wait
// (a few seconds: pollers use short timeouts, and the spec's 4.2 states no
// wait), longer only when Prefer: wait=N asks (up to --sync-wait), none
// with respond-async. The step runs in a worker, never in this handler.
func (a *api) handleAdvance() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Prefer")
		accountID := apiKey(r).AccountID
		o, err := a.svc.Advance(r.Context(), accountID, r.PathValue("id"))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		pref := parsePrefer(r.Header.Values("Prefer"))
		wait, applied := pref.waitFor(a.svc.SyncWait)
		if !pref.async && pref.wait < 0 {
			wait = min(a.cfg.PollWait, a.svc.SyncWait)
		}
		a.answerAfterWait(w, r, accountID, o, wait, applied)
	})
}

// handleRead is GET /api/generation/jobs/{id}: the stored record only.
func (a *api) handleRead() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, err := a.svc.Find(r.Context(), apiKey(r).AccountID, r.PathValue("id"))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		t := o.Task
		body := a.taskRecord(r, t)
		a.addProgress(r.Context(), body, t) // progress.go
		a.addWebhook(r.Context(), body, t)  // webhooks.go
		if t.Status.Active() {
			w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter(t)))
		}
		writeJSON(w, http.StatusOK, body)
	})
}

// taskRecord is a task as GET /api/generation/jobs/{id} and the task
// lists show it.
func (a *api) taskRecord(r *http.Request, t *gengate.Task) map[string]any {
	body := map[string]any{
		"jobId": t.ID, "status": t.Status.Public(), "type": t.Type, "modelId": t.ModelID, "cost": t.Cost,
		"createdAt": timestamp(t.CreatedAt), "updatedAt": timestamp(t.UpdatedAt),
		"statusUrl": statusURL(t),
	}
	if !t.CompletedAt.IsZero() {
		body["completedAt"] = timestamp(t.CompletedAt)
	}
	switch t.Status {
	case gengate.StatusSucceeded:
		a.addOutputs(body, r, t)
	case gengate.StatusFailed:
		e := map[string]any{"code": gengate.EFailed, "message": t.ErrorMessage, "refunded": true, "creditsRefunded": t.Cost}
		if reason := failureReason(t); reason != "" {
			e["reason"] = reason
		}
		body["error"] = e
	case gengate.StatusCanceled:
		body["error"] = canceledRecord(t)
	case gengate.StatusNeedsReview:
		body["error"] = map[string]any{"code": gengate.ENeedsReview,
			"message": reviewMessage}
	}
	addTaskDetails(body, t)
	return body
}

// handleModels is GET /api/v1/models.
func (a *api) handleModels() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		type model struct {
			ID             string            `json:"id"`
			Type           string            `json:"type"`
			Name           string            `json:"name"`
			Description    string            `json:"description,omitempty"`
			Credits        int               `json:"credits"`
			Varies         bool              `json:"varies"`
			Pricing        gengate.PriceRule `json:"pricing"`
			Inputs         []gengate.Field   `json:"inputs"`
			Options        []gengate.Field   `json:"options"`
			Engine         string            `json:"engine"`
			Placeholder    bool              `json:"placeholder"`
			LatencySeconds int               `json:"typicalLatencySeconds"`
			Legacy         bool              `json:"legacy,omitempty"`
		}
		var out []model
		for _, m := range a.svc.Catalog.Models() {
			engine := a.svc.EngineName(m)
			if engine == "" {
				continue // no configured provider serves it here
			}
			out = append(out, model{ID: m.ID, Type: m.Type, Name: m.Name, Description: m.Description, Credits: m.Credits,
				Varies: m.Varies(), Pricing: m.Pricing, Inputs: nonNil(m.Inputs), Options: nonNil(m.Options), Engine: engine,
				Placeholder: engine == "sandbox", LatencySeconds: m.LatencySeconds, Legacy: m.Legacy})
		}
		writeJSON(w, http.StatusOK, map[string]any{"models": out})
	})
}

func nonNil(f []gengate.Field) []gengate.Field {
	if f == nil {
		return []gengate.Field{}
	}
	return f
}
