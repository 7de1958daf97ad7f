package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// This file is the account area's authentication: an API key or a session
// cookie on every /api endpoint, the CSRF check for cookie requests, and
// the sign-in endpoints (/api/v1/auth/*).

// SessionCookie is the name of the session cookie.
const SessionCookie = "gengate_session"

// CSRFHeader carries a session's CSRF token on state-changing requests.
const CSRFHeader = "X-CSRF-Token"

// AccountsConfig is the account area's part of Config.
type AccountsConfig struct {
	// OpenSignup lets anyone create an account with SignupCredits credits
	// (POST /api/v1/auth/signup); otherwise it answers SIGNUP_CLOSED.
	OpenSignup    bool
	SignupCredits int
	// SignInPerAccount and SignInPerAddress cap sign-in attempts per
	// account (email) and per client address in any SignInWindow (token
	// buckets, in this process's memory). Zero means the defaults (10 and
	// 30 per 15 minutes); negative means no limit.
	SignInPerAccount int
	SignInPerAddress int
	SignInWindow     time.Duration
	// SignInMemory bounds the memory of the sign-in limiter's buckets, in
	// bytes (default DefaultSignInMemory; signinlimit.go).
	SignInMemory int64
	// PasswordWork caps password hashes computed at once (each takes 19
	// MiB and a core for a moment); default the number of CPUs.
	PasswordWork int
	// Probe, when set, tells whether a provider engine answers (the
	// operator's engines page); its answers are cached for a minute.
	Probe func(ctx context.Context, engine string) error
}

type principalKey struct{}

// principal is who makes a request: an API key, or a member signed in with
// a session. For a session, key is a stand-in with the account and no id.
type principal struct {
	key     *gengate.APIKey
	member  *gengate.Member
	session *gengate.Session
}

func principalOf(r *http.Request) *principal {
	p, _ := r.Context().Value(principalKey{}).(*principal)
	return p
}

// safeMethod reports whether a method changes nothing, so needs no CSRF
// token.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// authenticate finds the request's principal: an API key (Authorization:
// Bearer or X-API-Key) wins over a session cookie; a cookie request that
// may change something must carry the session's CSRF token.
func (a *api) authenticate(r *http.Request) (*principal, error) {
	secret := r.Header.Get("X-API-Key")
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		secret = strings.TrimSpace(token)
	}
	if secret == "" {
		if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
			sess, m, err := a.svc.SessionFor(r.Context(), c.Value)
			if err != nil {
				return nil, err
			}
			if !safeMethod(r.Method) {
				if err := checkCSRF(r, sess); err != nil {
					return nil, err
				}
			}
			return &principal{key: &gengate.APIKey{AccountID: m.AccountID}, member: m, session: sess}, nil
		}
	}
	key, err := a.svc.Authenticate(r.Context(), secret)
	if err != nil {
		return nil, err
	}
	return &principal{key: key}, nil
}

// checkCSRF refuses a session's state-changing request that lacks the
// session's CSRF token.
func checkCSRF(r *http.Request, sess *gengate.Session) error {
	if !validCSRF(r.Header.Get(CSRFHeader), sess.CSRFToken) {
		return gengate.Errorf(gengate.ECSRF, "this request needs the session's CSRF token in the X-CSRF-Token header")
	}
	return nil
}

// cookieSession is the session and member of the request's session
// cookie; UNAUTHORIZED without one.
func (a *api) cookieSession(r *http.Request) (*gengate.Session, *gengate.Member, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil, nil, gengate.Errorf(gengate.EUnauthorized, "not signed in")
	}
	return a.svc.SessionFor(r.Context(), c.Value)
}

func validCSRF(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// auth requires an API key or a session (see authenticate).
func (a *api) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r)
		if err != nil {
			if gengate.ErrorCode(err) == gengate.EUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gengate"`)
			}
			writeError(w, r, a.log, err)
			return
		}
		ctx := context.WithValue(r.Context(), keyAPIKey, p.key)
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, principalKey{}, p)))
	})
}

// limitID is the rate limiter's name for the caller: its key, or its
// account for a session.
func limitID(r *http.Request) string {
	k := apiKey(r)
	if k.ID == "" {
		return "account:" + k.AccountID
	}
	return k.ID
}

// decodeBody reads a small JSON object body (a route declared with
// bodyJSON: body.go) into v; unknown members are refused.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := openBody(r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooLarge(tooBig.Limit)
		}
		if errors.Is(err, io.EOF) {
			return gengate.Errorf(gengate.EInvalid, "send a JSON object as the request body")
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &gengate.Error{Code: gengate.EInvalid, Message: te.Field + " has the wrong type",
				Fields: []gengate.FieldError{{Field: te.Field, Code: gengate.FieldType, Message: "must be " + te.Type.String()}}}
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			f = strings.Trim(f, `"`)
			return &gengate.Error{Code: gengate.EInvalid, Message: "unknown field " + f,
				Fields: []gengate.FieldError{{Field: f, Code: gengate.FieldUnknown, Message: "not a field of this request"}}}
		}
		return gengate.Errorf(gengate.EInvalid, "the request body is not a valid JSON object")
	}
	return nil
}

// clientAddress is the address sign-in attempts are counted by: the
// connection's peer, or behind a trusted proxy the client it names (the
// request's RemoteAddr is already the client's then: clientaddr.go).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sessionBody is the Session object of the auth endpoints.
func (a *api) sessionBody(ctx context.Context, sess *gengate.Session, m *gengate.Member) (map[string]any, error) {
	acct, err := a.svc.Store.FindAccount(ctx, m.AccountID)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"member":    map[string]any{"id": m.ID, "email": m.Email, "role": m.Role},
		"accountId": acct.ID, "accountName": acct.Name,
		"operator":  m.Role == gengate.RoleOperator,
		"csrfToken": sess.CSRFToken,
	}, nil
}

// secureCookies reports whether cookies get the Secure attribute: when the
// public URL is https, or the request came over TLS.
func (a *api) secureCookies(r *http.Request) bool {
	return strings.HasPrefix(a.cfg.PublicURL, "https://") || r.TLS != nil
}

func (a *api) setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: a.secureCookies(r), MaxAge: int(gengate.SessionMaxAge / time.Second)})
}

func (a *api) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: a.secureCookies(r), MaxAge: -1})
}

// passwordWork runs f when a password-hashing slot is free.
func (a *api) passwordWork(ctx context.Context, f func()) error {
	select {
	case a.hashSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-a.hashSlots }()
	f()
	return nil
}

// answerSession writes a new session: the cookie and the Session body.
func (a *api) answerSession(w http.ResponseWriter, r *http.Request, status int, token string, sess *gengate.Session, m *gengate.Member) {
	body, err := a.sessionBody(r.Context(), sess, m)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	a.setSessionCookie(w, r, token)
	writeJSON(w, status, body)
}

// handleSignIn is POST /api/v1/auth/signin.
func (a *api) handleSignIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Email    string `json:"email"`
			Password string `json:"password"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		email := strings.ToLower(strings.TrimSpace(req.Email))
		if d := a.signIns.attempt(email, clientAddress(r), time.Now()); d > 0 {
			a.tooMany(w, r, d)
			return
		}
		var token string
		var sess *gengate.Session
		var m *gengate.Member
		var err error
		if werr := a.passwordWork(r.Context(), func() { token, sess, m, err = a.svc.SignIn(r.Context(), req.Email, req.Password, r.UserAgent()) }); werr != nil {
			return // the client went away
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.log.InfoContext(r.Context(), "signed in", "member", m.ID, "account", m.AccountID)
		a.answerSession(w, r, http.StatusOK, token, sess, m)
	})
}

// handleLink is POST /api/v1/auth/link.
func (a *api) handleLink() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Token    string  `json:"token"`
			Password *string `json:"password"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if d := a.signIns.attempt("", clientAddress(r), time.Now()); d > 0 {
			a.tooMany(w, r, d)
			return
		}
		pw := ""
		if req.Password != nil {
			pw = *req.Password
		}
		var token string
		var sess *gengate.Session
		var m *gengate.Member
		var err error
		if werr := a.passwordWork(r.Context(), func() {
			token, sess, m, err = a.svc.UseLink(r.Context(), req.Token, pw, req.Password != nil, r.UserAgent())
		}); werr != nil {
			return
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.log.InfoContext(r.Context(), "signed in with a link", "member", m.ID, "account", m.AccountID, "passwordSet", req.Password != nil)
		a.answerSession(w, r, http.StatusOK, token, sess, m)
	})
}

// handleSignUp is POST /api/v1/auth/signup.
func (a *api) handleSignUp() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.cfg.Accounts.OpenSignup {
			writeError(w, r, a.log, gengate.Errorf(gengate.ESignupClosed, "sign-up is closed here; ask the operator for an account"))
			return
		}
		var req struct {
			Email    string `json:"email"`
			Password string `json:"password"`
			Name     string `json:"name"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if d := a.signIns.attempt("", clientAddress(r), time.Now()); d > 0 {
			a.tooMany(w, r, d)
			return
		}
		var token string
		var sess *gengate.Session
		var m *gengate.Member
		var err error
		if werr := a.passwordWork(r.Context(), func() {
			token, sess, m, err = a.svc.SignUp(r.Context(), req.Email, req.Password, req.Name, a.cfg.Accounts.SignupCredits, r.UserAgent())
		}); werr != nil {
			return
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.answerSession(w, r, http.StatusCreated, token, sess, m)
	})
}

// handleSignOut is POST /api/v1/auth/signout: it ends the cookie's
// session (with its CSRF token) and clears the cookie.
func (a *api) handleSignOut() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(SessionCookie)
		if err == nil && c.Value != "" {
			sess, _, err := a.svc.SessionFor(r.Context(), c.Value)
			if err == nil {
				if err := checkCSRF(r, sess); err != nil {
					writeError(w, r, a.log, err)
					return
				}
				if err := a.svc.SignOut(r.Context(), c.Value); err != nil {
					writeError(w, r, a.log, err)
					return
				}
			} else if gengate.ErrorCode(err) != gengate.EUnauthorized {
				writeError(w, r, a.log, err)
				return
			}
		}
		a.clearSessionCookie(w, r)
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleSignOutAll is POST /api/v1/auth/signout-all: it ends every
// session of the cookie's member, this one too (with its CSRF token), and
// clears the cookie. For a lost device or a shared computer; a new
// password does the same by itself.
func (a *api) handleSignOutAll() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, m, err := a.cookieSession(r)
		if err == nil {
			err = checkCSRF(r, sess)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if _, err := a.svc.SignOutEverywhere(r.Context(), m); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.clearSessionCookie(w, r)
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleChangePassword is POST /api/v1/account/password: a signed-in
// member's new password; the member's other sessions end.
func (a *api) handleChangePassword() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			CurrentPassword string `json:"currentPassword"`
			Password        string `json:"password"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		p := principalOf(r)
		if d := a.signIns.attempt("", clientAddress(r), time.Now()); d > 0 {
			a.tooMany(w, r, d)
			return
		}
		var err error
		if werr := a.passwordWork(r.Context(), func() {
			err = a.svc.ChangePassword(r.Context(), p.member, p.session, req.CurrentPassword, req.Password)
		}); werr != nil {
			return
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleSession is GET /api/v1/auth/session: the cookie's session.
func (a *api) handleSession() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, m, err := a.cookieSession(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body, err := a.sessionBody(r.Context(), sess, m)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
}

// handleAuthConfig is GET /api/v1/auth/config.
func (a *api) handleAuthConfig() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"openSignup": a.cfg.Accounts.OpenSignup}
		if t := a.topUpConfig(); t != nil { // topup.go: the console's "Buy credits"
			body["topUp"] = t
		}
		writeJSON(w, http.StatusOK, body)
	})
}
