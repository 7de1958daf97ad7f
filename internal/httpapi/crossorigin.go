package httpapi

import (
	"mime"
	"net/http"
	"strings"

	"github.com/gengate/gengate"
)

// This file is the door of the sign-in endpoints (/api/v1/auth/*): they
// start, change or end sessions without a CSRF token (the caller has no
// session yet), so a page of another site must not be able to send them.
// A browser lets any page post a form or a text/plain body to any origin
// without asking ("simple" requests); it sends application/json across
// origins only after a CORS preflight, which this server never answers.
// So the door takes only application/json, and refuses what a browser
// marks as coming from another origin (Sec-Fetch-Site, or else Origin
// against Host): http.CrossOriginProtection's check. Clients that are not
// browsers send neither header and are let through.

// newCrossOrigin returns the cross-origin check, trusting the public URL's
// origin too (a proxy in front may rewrite Host).
func newCrossOrigin(publicURL string) *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	if publicURL != "" {
		if i := strings.Index(publicURL, "://"); i > 0 {
			origin := publicURL
			if j := strings.IndexByte(publicURL[i+3:], '/'); j >= 0 {
				origin = publicURL[:i+3+j]
			}
			_ = c.AddTrustedOrigin(origin) // a malformed URL trusts nothing more
		}
	}
	return c
}

// sameOrigin refuses a state-changing request that a browser marks as
// sent by another site, with 403 CROSS_ORIGIN_REQUEST.
func (a *api) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.crossOrigin.Check(r); err != nil {
			writeError(w, r, a.log, gengate.Errorf(gengate.ECrossOrigin,
				"this request came from another site's page; sign in on this server's own pages"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// jsonOnly refuses a body that is not declared application/json with 415
// UNSUPPORTED_MEDIA_TYPE, before reading it: what an HTML form or a
// text/plain fetch of another site can send is never taken.
func (a *api) jsonOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			writeError(w, r, a.log, gengate.Errorf(gengate.EUnsupportedMedia,
				"send the request body as JSON with Content-Type: application/json"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
