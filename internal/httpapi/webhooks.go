package httpapi

import (
	"context"
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
			"createdAt": e.CreatedAt.Format(time.RFC3339Nano)}
		if e.Status == "pending" {
			ev["nextAttemptAt"] = e.NextAt.Format(time.RFC3339Nano)
		}
		if !e.DeliveredAt.IsZero() {
			ev["deliveredAt"] = e.DeliveredAt.Format(time.RFC3339Nano)
		}
		deliveries := []map[string]any{}
		for _, at := range attempts[e.ID] {
			d := map[string]any{"attempt": at.N, "at": at.At.Format(time.RFC3339Nano), "status": at.Status}
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
