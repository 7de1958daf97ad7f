package httpapi

import (
	"net/http"
	"time"
)

// This file is redemption codes over HTTP: a holder redeems one, an
// operator makes them (gengate/codes.go holds the rules).

// handleRedeem is POST /api/v1/account/redeem {"code"}.
func (a *api) handleRedeem() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Code string `json:"code"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		balance, err := a.svc.Redeem(r.Context(), apiKey(r).AccountID, req.Code)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"remainingCredits": balance})
	})
}

// handleAdminCodes is POST /api/v1/admin/codes {"credits", "count",
// "expiresAt"?}: the codes are in this answer only.
func (a *api) handleAdminCodes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Credits   int    `json:"credits"`
			Count     int    `json:"count"`
			ExpiresAt string `json:"expiresAt"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		var expires time.Time
		if req.ExpiresAt != "" {
			t, err := time.Parse(time.RFC3339, req.ExpiresAt)
			if err != nil {
				writeError(w, r, a.log, badField("expiresAt", "must be an RFC 3339 time"))
				return
			}
			expires = t
		}
		if req.Count == 0 {
			req.Count = 1
		}
		codes, err := a.svc.CreateCodes(r.Context(), req.Credits, req.Count, expires)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := map[string]any{"codes": codes, "credits": req.Credits}
		if !expires.IsZero() {
			body["expiresAt"] = timestamp(expires)
		}
		writeJSON(w, http.StatusCreated, body)
	})
}
