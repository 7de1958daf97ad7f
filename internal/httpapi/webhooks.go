package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// handleWebhookSecret is GET /api/v1/webhooks/secret: the account's
// signing secret, made on first use.
func (a *api) handleWebhookSecret() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, err := a.svc.WebhookSecret(r.Context(), apiKey(r).AccountID)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, map[string]any{"secret": secret})
	})
}

// addWebhook sets the task record's "webhook" member: the task's webhook
// events with their delivery attempts, when it has any.
func (a *api) addWebhook(ctx context.Context, body map[string]any, t *gengate.Task) {
	events, attempts, err := a.svc.Store.WebhookEvents(ctx, t.AccountID, t.ID)
	if err != nil {
		a.log.WarnContext(ctx, "read webhook events", "jobId", t.ID, "err", err)
		return
	}
	if len(events) == 0 {
		return
	}
	list := make([]map[string]any, 0, len(events))
	for _, e := range events {
		ev := map[string]any{"id": e.ID, "type": e.Type, "url": e.URL, "status": e.Status, "attempts": e.Attempts,
			"createdAt": timestamp(e.CreatedAt)}
		if e.Status == "pending" {
			ev["nextAttemptAt"] = timestamp(e.NextAt)
		}
		if !e.DeliveredAt.IsZero() {
			ev["deliveredAt"] = timestamp(e.DeliveredAt)
		}
		deliveries := []map[string]any{}
		for _, at := range attempts[e.ID] {
			d := map[string]any{"attempt": at.N, "at": timestamp(at.At), "status": at.Status}
			if at.Error != "" {
				d["error"] = at.Error
			}
			deliveries = append(deliveries, d)
		}
		ev["deliveries"] = deliveries
		list = append(list, ev)
	}
	body["webhook"] = map[string]any{"events": list}
}

// WebhookData returns the builder of a webhook event's data member: the
// task record GET /api/generation/jobs/<id> answers (taskRecord and its
// progress), read at delivery time. Output URLs are based on
// cfg.PublicURL, or on base when that is empty (the listen address).
func WebhookData(svc *gengate.Service, cfg Config, base string, log *slog.Logger) func(ctx context.Context, accountID, taskID string) (map[string]any, error) {
	a := &api{svc: svc, cfg: cfg, log: log}
	if cfg.PublicURL != "" {
		base = cfg.PublicURL
	}
	base = strings.TrimRight(base, "/")
	return func(ctx context.Context, accountID, taskID string) (map[string]any, error) {
		o, err := svc.Find(ctx, accountID, taskID)
		if err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, base+statusURL(o.Task), nil)
		if err != nil {
			return nil, err
		}
		body := a.taskRecord(r, o.Task)
		a.addProgress(ctx, body, o.Task)
		return body, nil
	}
}

// WebhookBody builds each event's body for the delivery loop
// (webhook.Config.Body): Standard Webhooks' {type, timestamp, data: the
// task record}; for a prediction event (gengate.PredictionEvents: the
// webhook of a prediction created through the Replicate-compatible API),
// the prediction object as it was when the event was written
// (predictionAt), as Replicate sends it; for a fal request's event, fal's
// queue webhook (falWebhookBody). cfg.Facades names the models as the
// API does.
func WebhookBody(svc *gengate.Service, cfg Config, base string, log *slog.Logger) func(ctx context.Context, e *gengate.WebhookEvent) ([]byte, error) {
	data := WebhookData(svc, cfg, base, log)
	a := &api{svc: svc, cfg: cfg, log: log, facades: newFacadeIndex(svc, cfg.Facades)}
	if cfg.PublicURL != "" {
		base = cfg.PublicURL
	}
	base = strings.TrimRight(base, "/")
	return func(ctx context.Context, e *gengate.WebhookEvent) ([]byte, error) {
		if isFalHook(e) {
			o, err := svc.Find(ctx, e.AccountID, e.TaskID)
			if err != nil {
				return nil, err
			}
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, base+falProxyPath, nil)
			if err != nil {
				return nil, err
			}
			return json.Marshal(a.falWebhookBody(r, o.Task))
		}
		ev, prediction := gengate.PredictionEvent(e.Type)
		if e.EndpointID == "" && (prediction || isLegacyReplicateHook(e.URL)) {
			o, err := svc.Find(ctx, e.AccountID, e.TaskID)
			if err != nil {
				return nil, err
			}
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/predictions/"+o.Task.ID, nil)
			if err != nil {
				return nil, err
			}
			p := a.prediction(r, o.Task, "")
			predictionAt(p, ev, e.Logs)
			return json.Marshal(p)
		}
		d, err := data(ctx, e.AccountID, e.TaskID)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"type": e.Type, "timestamp": timestamp(e.CreatedAt), "data": d})
	}
}

// The account's webhook endpoints (docs/api.md, "Webhooks"): list,
// create (the secret in that answer only), delete, rotate a secret, list
// attempts, replay an event. Another account's endpoint or event is
// answered like an unknown one (404).

// endpointBody is a WebhookEndpoint object; it never holds a secret.
func endpointBody(e *gengate.WebhookEndpoint, now time.Time) map[string]any {
	b := map[string]any{"id": e.ID, "url": e.URL, "eventTypes": e.EventTypes, "createdAt": timestamp(e.CreatedAt)}
	if e.Keys.Previous != "" && now.Before(e.Keys.PreviousUntil) {
		b["previousSecretExpiresAt"] = timestamp(e.Keys.PreviousUntil)
	}
	return b
}

// handleWebhookEndpoints is GET /api/v1/webhooks.
func (a *api) handleWebhookEndpoints() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		eps, err := a.svc.Store.WebhookEndpoints(r.Context(), apiKey(r).AccountID)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		now := time.Now()
		out := make([]map[string]any, 0, len(eps))
		for _, e := range eps {
			out = append(out, endpointBody(e, now))
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": out})
	})
}

// handleCreateWebhookEndpoint is POST /api/v1/webhooks: 201 with the
// endpoint and its secret, shown this once.
func (a *api) handleCreateWebhookEndpoint() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			URL        *string  `json:"url"`
			EventTypes []string `json:"eventTypes"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if req.URL == nil {
			writeError(w, r, a.log, &gengate.Error{Code: gengate.EInvalid, Message: "invalid request: url is required",
				Fields: []gengate.FieldError{{Field: "url", Code: gengate.FieldRequired, Message: "is required"}}})
			return
		}
		secret, e, err := a.svc.CreateWebhookEndpoint(r.Context(), apiKey(r).AccountID, *req.URL, req.EventTypes)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := endpointBody(e, time.Now())
		body["secret"] = secret
		w.Header().Set("Location", "/api/v1/webhooks/"+e.ID)
		writeJSON(w, http.StatusCreated, body)
	})
}

// handleDeleteWebhookEndpoint is DELETE /api/v1/webhooks/{id}.
func (a *api) handleDeleteWebhookEndpoint() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.svc.Store.DeleteWebhookEndpoint(r.Context(), apiKey(r).AccountID, r.PathValue("id")); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleRotateWebhookSecret is POST /api/v1/webhooks/{id}/rotate and
// POST /api/v1/webhooks/secret/rotate (the account's own secret): the new
// secret, shown this once, and until when the previous one still signs.
func (a *api) handleRotateWebhookSecret(account bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct := apiKey(r).AccountID
		var secret string
		var until time.Time
		var err error
		if account {
			secret, until, err = a.svc.RotateWebhookSecret(r.Context(), acct)
		} else {
			secret, until, err = a.svc.RotateWebhookEndpoint(r.Context(), acct, r.PathValue("id"))
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"secret": secret, "previousSecretExpiresAt": timestamp(until)})
	})
}

// handleWebhookAttempts is GET /api/v1/webhooks/{id}/attempts: the
// endpoint's delivery attempts, newest first, a page at a time.
func (a *api) handleWebhookAttempts() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, c, err := pageQuery(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		var after *gengate.TaskCursor
		if c.ID != "" {
			after = &c
		}
		list, err := a.svc.Store.WebhookAttempts(r.Context(), apiKey(r).AccountID, r.PathValue("id"), after, limit+1)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := map[string]any{}
		list = onePage(list, limit, body, func(last gengate.WebhookAttemptRecord) string { return createdCursor(last.At, last.ID) })
		out := make([]map[string]any, 0, len(list))
		for _, at := range list {
			d := map[string]any{"eventId": at.Event.ID, "jobId": at.Event.TaskID, "type": at.Event.Type, "url": at.Event.URL,
				"attempt": at.N, "at": timestamp(at.At), "status": at.Status, "eventStatus": at.Event.Status}
			if at.Error != "" {
				d["error"] = at.Error
			}
			out = append(out, d)
		}
		body["data"] = out
		writeJSON(w, http.StatusOK, body)
	})
}

// handleReplayWebhookEvent is POST /api/v1/webhooks/events/{eventId}/replay:
// the event (an endpoint's or a task's own webhookUrl's) is sent again,
// with the same webhook-id and payload, due now with a fresh retry
// schedule. 202: delivery is the loop's.
func (a *api) handleReplayWebhookEvent() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := a.svc.ReplayWebhookEvent(r.Context(), apiKey(r).AccountID, r.PathValue("eventId"))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"id": e.ID, "jobId": e.TaskID, "type": e.Type, "url": e.URL,
			"status": e.Status, "attempts": e.Attempts, "nextAttemptAt": timestamp(e.NextAt)})
	})
}
