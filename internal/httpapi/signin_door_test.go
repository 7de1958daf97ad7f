package httpapi_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// TestSignInDoor: the sign-in endpoints take only application/json, and
// refuse what a browser marks as sent by another site's page, before they
// read the body or start a session (login CSRF: a page elsewhere posting a
// form or a text/plain body signs the visitor's browser in to the
// attacker's account). The same JSON from this server's own origin, or
// from a client that is not a browser (no Origin, no Sec-Fetch-Site), is
// taken.
func TestSignInDoor(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, accounts: httpapi.AccountsConfig{OpenSignup: true}})
	h := s.holder(10, false)
	u, _ := url.Parse(s.URL)
	own := "http://" + u.Host
	creds := map[string]any{"email": h.email, "password": h.password}
	form := "email=" + url.QueryEscape(h.email) + "&password=" + url.QueryEscape(h.password)
	for _, c := range []struct {
		name   string
		path   string
		body   any
		header map[string]string
		status int
		code   string
	}{
		{"text/plain JSON", "/api/v1/auth/signin", creds, map[string]string{"Content-Type": "text/plain"}, 415, gengate.EUnsupportedMedia},
		{"text/plain form", "/api/v1/auth/signin", form, map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, 415, gengate.EUnsupportedMedia},
		{"urlencoded form", "/api/v1/auth/signin", form, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, gengate.EUnsupportedMedia},
		{"multipart form", "/api/v1/auth/signin", "--b\r\n\r\n--b--", map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, 415, gengate.EUnsupportedMedia},
		{"no type", "/api/v1/auth/signin", creds, map[string]string{"Content-Type": ""}, 415, gengate.EUnsupportedMedia},
		{"cross-site Origin", "/api/v1/auth/signin", creds, map[string]string{"Origin": "https://evil.example"}, 403, gengate.ECrossOrigin},
		{"null Origin", "/api/v1/auth/signin", creds, map[string]string{"Origin": "null"}, 403, gengate.ECrossOrigin},
		{"another port", "/api/v1/auth/signin", creds, map[string]string{"Origin": "http://" + u.Hostname() + ":1"}, 403, gengate.ECrossOrigin},
		{"Sec-Fetch-Site cross-site", "/api/v1/auth/signin", creds, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, gengate.ECrossOrigin},
		{"Sec-Fetch-Site same-site", "/api/v1/auth/signin", creds, map[string]string{"Sec-Fetch-Site": "same-site"}, 403, gengate.ECrossOrigin},
		{"cross-site form", "/api/v1/auth/signin", form, map[string]string{"Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, 403, gengate.ECrossOrigin},
		{"link, cross-site", "/api/v1/auth/link", map[string]any{"token": "x"}, map[string]string{"Origin": "https://evil.example"}, 403, gengate.ECrossOrigin},
		{"link, text/plain", "/api/v1/auth/link", map[string]any{"token": "x"}, map[string]string{"Content-Type": "text/plain"}, 415, gengate.EUnsupportedMedia},
		{"signup, cross-site", "/api/v1/auth/signup", map[string]any{"email": "new@example.com", "password": "a good long password"}, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, gengate.ECrossOrigin},
		{"signup, form", "/api/v1/auth/signup", "email=new%40example.com&password=a+good+long+password", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, gengate.EUnsupportedMedia},
		{"signout, cross-site", "/api/v1/auth/signout", nil, map[string]string{"Origin": "https://evil.example"}, 403, gengate.ECrossOrigin},
		// Taken: this server's own page, a same-origin fetch, a client
		// that is not a browser.
		{"own Origin", "/api/v1/auth/signin", creds, map[string]string{"Origin": own}, 200, ""},
		{"same-origin fetch", "/api/v1/auth/signin", creds, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": own}, 200, ""},
		{"charset parameter", "/api/v1/auth/signin", creds, map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200, ""},
		{"no browser headers", "/api/v1/auth/signin", creds, nil, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(call{Method: "POST", Path: c.path, Body: c.body, Header: c.header})
			if c.code == "" {
				wantStatus(t, r, c.status)
				sessionCookie(t, r)
				return
			}
			wantProblem(t, r, c.status, c.code)
			if r.Header.Get("Set-Cookie") != "" {
				t.Errorf("a refused request set a cookie: %v", r.Header["Set-Cookie"])
			}
		})
	}
	// Nothing refused made a member.
	if _, err := s.store.FindMemberByEmail(context.Background(), "new@example.com"); gengate.ErrorCode(err) != gengate.ENotFound {
		t.Errorf("a refused sign-up made a member: %v", err)
	}
}
