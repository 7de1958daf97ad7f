package httpapi

import (
	"net/http"
	"strings"

	"github.com/gengate/gengate"
)

// This file is a member's own sessions: the list (each with the browser it
// began in and its last use) and ending one. A session belongs to a
// member, so an API key gets 403 FORBIDDEN here; a session's token, or its
// hash, is never in an answer: a session is named by its random id.

// sessionRecord is a Session object of GET /api/v1/account/sessions.
func sessionRecord(s *gengate.Session, current bool) map[string]any {
	return map[string]any{"id": s.ID, "createdAt": timestamp(s.CreatedAt), "lastUsedAt": timestamp(s.LastSeenAt),
		"expiresAt": timestamp(s.ExpiresAt), "userAgent": s.UserAgent, "browser": browserName(s.UserAgent), "current": current}
}

// handleSessions is GET /api/v1/account/sessions?limit=&cursor=: the
// caller's own unexpired sessions, newest first; "current" marks the one
// making the request.
func (a *api) handleSessions() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, after, err := pageQuery(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		p := principalOf(r)
		list, err := a.svc.MemberSessions(r.Context(), p.member, after, limit+1)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := map[string]any{}
		list = onePage(list, limit, body, func(s gengate.Session) string { return createdCursor(s.CreatedAt, s.ID) })
		data := make([]map[string]any, 0, len(list))
		for i := range list {
			data = append(data, sessionRecord(&list[i], p.session != nil && list[i].ID == p.session.ID))
		}
		body["data"] = data
		writeJSON(w, http.StatusOK, body)
	})
}

// handleEndSession is DELETE /api/v1/account/sessions/{id}: the caller
// ends one of their own sessions (with the CSRF token, as every session
// request that changes something: authenticate). Ending the session that
// asks is signing out: its cookie is cleared too.
func (a *api) handleEndSession() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principalOf(r)
		id := r.PathValue("id")
		if err := a.svc.EndSession(r.Context(), p.member, id); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if p.session != nil && p.session.ID == id {
			a.clearSessionCookie(w, r)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// browserName names the browser of a User-Agent as a person knows it,
// with its major version and system ("Firefox 128 on Linux", "Safari 17
// on iPhone"); a program's by its first word ("curl/8.5.0"); "" for none.
// It only helps a member tell their sessions apart: a User-Agent is
// whatever the client chose to send.
func browserName(ua string) string {
	if ua == "" {
		return ""
	}
	name := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"EdgA/", "Edge"}, {"EdgiOS/", "Edge"}, {"OPR/", "Opera"}, {"SamsungBrowser/", "Samsung Internet"},
		{"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"}, {"CriOS/", "Chrome"},
		{"Chromium/", "Chromium"}, {"Chrome/", "Chrome"}, {"Version/", "Safari"},
	} {
		if _, rest, ok := strings.Cut(ua, b.token); ok {
			if b.name == "Safari" && !strings.Contains(ua, "Safari/") {
				continue
			}
			name = b.name
			if v, _, _ := strings.Cut(rest, "."); v != "" && len(v) <= 4 && strings.Trim(v, "0123456789") == "" {
				name += " " + v
			}
			break
		}
	}
	if name == "" { // not a browser: a program's first word ("curl/8.5.0")
		first, _, _ := strings.Cut(ua, " ")
		if len(first) > 40 {
			first = first[:40]
		}
		return strings.ToValidUTF8(first, "")
	}
	for _, s := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"CrOS", "ChromeOS"}, {"Windows", "Windows"},
		{"Macintosh", "macOS"}, {"Mac OS X", "macOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			return name + " on " + s.name
		}
	}
	return name
}
