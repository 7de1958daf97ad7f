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
	b := map[string]any{"id": k.ID, "name": k.Name, "prefix": k.Prefix, "createdAt": timestamp(k.CreatedAt),
		"spentToday": k.SpentOn(now)}
	if !k.LastUsedAt.IsZero() {
		b["lastUsedAt"] = timestamp(k.LastUsedAt)
	}
	if !k.RevokedAt.IsZero() {
		b["revokedAt"] = timestamp(k.RevokedAt)
	}
	if k.SpendLimit > 0 {
		b["spendLimit"] = k.SpendLimit
	}
	if k.Test {
		b["test"] = true
	}
	if k.Operator {
		b["operator"] = true
	}
	return b
}

// keyPage reads a page of the account's keys: limit (default 50, at most
// 200) and cursor, like the other lists.
func (a *api) keyPage(r *http.Request, accountID string) (map[string]any, error) {
	limit, after, err := pageQuery(r)
	if err != nil {
		return nil, err
	}
	keys, err := a.svc.Store.ListAPIKeys(r.Context(), accountID, after, limit+1)
	if err != nil {
		return nil, err
	}
	body := map[string]any{}
	keys = onePage(keys, limit, body, func(k gengate.APIKey) string { return createdCursor(k.CreatedAt, k.ID) })
	now := time.Now()
	data := make([]map[string]any, 0, len(keys))
	for i := range keys {
		data = append(data, keyBody(&keys[i], now))
	}
	body["data"] = data
	return body, nil
}

// handleKeys is GET /api/v1/keys: a page of the caller's account's keys.
func (a *api) handleKeys() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := a.keyPage(r, apiKey(r).AccountID)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
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
		if req.SpendLimit != nil && *req.SpendLimit < 1 {
			writeError(w, r, a.log, badField("spendLimit", "must be ≥ 1, or null for none"))
			return
		}
		secret, k, err := a.svc.MintKey(r.Context(), apiKey(r), req.Name, req.SpendLimit, req.Test)
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
		k, err := a.svc.UpdateKey(r.Context(), apiKey(r), r.PathValue("keyId"), c)
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
