package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gengate/gengate"
)

// This file is the caller's own API keys: list, create, change, revoke.
// Another account's key is answered like an unknown one (404).

// keyBody is a Key object; it never holds the secret.
func keyBody(k *gengate.APIKey, now time.Time) map[string]any {
	b := map[string]any{"id": k.ID, "name": k.Name, "prefix": k.Prefix, "createdAt": rfc3339(k.CreatedAt),
		"spentToday": k.SpentOn(now)}
	if !k.LastUsedAt.IsZero() {
		b["lastUsedAt"] = rfc3339(k.LastUsedAt)
	}
	if !k.RevokedAt.IsZero() {
		b["revokedAt"] = rfc3339(k.RevokedAt)
	}
	if k.SpendLimit > 0 {
		b["spendLimit"] = k.SpendLimit
	}
	if k.Test {
		b["test"] = true
	}
	return b
}

func (a *api) keyList(r *http.Request, accountID string) ([]map[string]any, error) {
	keys, err := a.svc.Store.ListAPIKeys(r.Context(), accountID)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]map[string]any, 0, len(keys))
	for i := range keys {
		out = append(out, keyBody(&keys[i], now))
	}
	return out, nil
}

// handleKeys is GET /api/v1/keys.
func (a *api) handleKeys() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys, err := a.keyList(r, apiKey(r).AccountID)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": keys})
	})
}

// handleCreateKey is POST /api/v1/keys: the secret is in this answer only.
func (a *api) handleCreateKey() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name       string `json:"name"`
			SpendLimit *int   `json:"spendLimit"`
			Test       bool   `json:"test"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		limit := 0
		if req.SpendLimit != nil {
			if *req.SpendLimit < 1 {
				writeError(w, r, a.log, badField("spendLimit", "must be ≥ 1, or null for none"))
				return
			}
			limit = *req.SpendLimit
		}
		create := a.svc.CreateKey
		if req.Test {
			create = a.svc.CreateTestKey
		}
		secret, k, err := create(r.Context(), apiKey(r).AccountID, req.Name, limit)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := keyBody(k, time.Now())
		body["key"] = secret
		writeJSON(w, http.StatusCreated, body)
	})
}

// handleUpdateKey is PATCH /api/v1/keys/{keyId}.
func (a *api) handleUpdateKey() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw map[string]json.RawMessage
		if err := decodeBody(w, r, &raw); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		var c gengate.KeyChange
		for field, v := range raw {
			switch field {
			case "name":
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					writeError(w, r, a.log, badField("name", "must be a string"))
					return
				}
				c.Name = &s
			case "spendLimit":
				n := 0
				if string(v) != "null" {
					if err := json.Unmarshal(v, &n); err != nil || n < 1 {
						writeError(w, r, a.log, badField("spendLimit", "must be a whole number ≥ 1, or null for none"))
						return
					}
				}
				c.SpendLimit = &n
			default:
				writeError(w, r, a.log, &gengate.Error{Code: gengate.EInvalid, Message: "unknown field " + field,
					Fields: []gengate.FieldError{{Field: field, Code: gengate.FieldUnknown, Message: "not a field of this request"}}})
				return
			}
		}
		k, err := a.svc.UpdateKey(r.Context(), apiKey(r).AccountID, r.PathValue("keyId"), c)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, keyBody(k, time.Now()))
	})
}

// handleRevokeKey is DELETE /api/v1/keys/{keyId}.
func (a *api) handleRevokeKey() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.svc.RevokeKey(r.Context(), apiKey(r).AccountID, r.PathValue("keyId")); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
