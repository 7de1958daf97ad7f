package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// firefox is a browser's User-Agent, as a sign-in sends it.
const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// signInAs signs the holder in again with a User-Agent and returns the
// new session.
func (s *stack) signInAs(h *holder, userAgent string) *holder {
	s.t.Helper()
	r := s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": h.email, "password": h.password},
		Header: map[string]string{"User-Agent": userAgent}})
	if r.Status != http.StatusOK {
		s.t.Fatalf("sign-in: %s", r)
	}
	return &holder{account: h.account, email: h.email, password: h.password, key: h.key, member: h.member,
		cookie: sessionCookie(s.t, r), csrf: r.str("csrfToken")}
}

// sessionsOf lists a session's member's sessions.
func (s *stack) sessionsOf(h *holder) []map[string]any {
	s.t.Helper()
	r := s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account/sessions?limit=100"})
	if r.Status != http.StatusOK {
		s.t.Fatalf("GET sessions: %s", r)
	}
	return listOf(s.t, r)
}

// TestMemberSessionsAPI: a member lists their own live sessions (the
// browser each began in, shortened; the one asking marked current; never
// the token or its hash), pages them, and ends one by its id with the
// CSRF token: that session answers 401 from then on, the others go on.
// Ending the current one signs out (the cookie is cleared). API keys get
// 403 FORBIDDEN. Both databases.
func TestMemberSessionsAPI(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		first := s.holder(10, false) // the set-up link's session
		second := s.signInAs(first, firefox)
		third := s.signInAs(first, "curl/8.5.0")
		account := func(h *holder) int {
			return s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"}).Status
		}

		r := s.bySession(second, false, call{Method: "GET", Path: "/api/v1/account/sessions"})
		wantStatus(t, r, http.StatusOK)
		for _, secret := range []string{first.cookie, second.cookie, third.cookie, gengate.HashKey(second.cookie), first.csrf, second.csrf} {
			if strings.Contains(string(r.Body), secret) {
				t.Fatalf("the sessions list holds a session's secret %q: %s", secret, r.Body)
			}
		}
		list := listOf(t, r)
		if len(list) != 3 {
			t.Fatalf("%d sessions listed, want 3: %s", len(list), r.Body)
		}
		byBrowser := map[string]map[string]any{}
		for _, x := range list {
			byBrowser[x["browser"].(string)] = x
		}
		ff, curl := byBrowser["Firefox 128 on Linux"], byBrowser["curl/8.5.0"]
		if ff == nil || curl == nil || ff["userAgent"] != firefox {
			t.Fatalf("browsers listed: %s", r.Body)
		}
		if ff["current"] != true || curl["current"] != false {
			t.Errorf("current marks: Firefox %v, curl %v; want the asking session (Firefox) only", ff["current"], curl["current"])
		}
		if list[0]["id"] != curl["id"] {
			t.Errorf("the newest session (curl) is not first: %s", r.Body)
		}
		for _, x := range list {
			for _, k := range []string{"createdAt", "lastUsedAt", "expiresAt"} {
				if _, err := time.Parse(time.RFC3339, x[k].(string)); err != nil {
					t.Errorf("%s %q: %v", k, x[k], err)
				}
			}
		}

		// Paging: one at a time, the same three, each once.
		seen := map[any]bool{}
		path := "/api/v1/account/sessions?limit=1"
		for i := 0; path != ""; i++ {
			r := s.bySession(second, false, call{Method: "GET", Path: path})
			wantStatus(t, r, http.StatusOK)
			for _, x := range listOf(t, r) {
				if seen[x["id"]] {
					t.Errorf("session %v listed twice while paging", x["id"])
				}
				seen[x["id"]] = true
			}
			path = ""
			if c := r.str("nextCursor"); c != "" {
				path = "/api/v1/account/sessions?limit=1&cursor=" + c
			}
			if i > 5 {
				t.Fatal("paging does not end")
			}
		}
		if len(seen) != 3 {
			t.Errorf("paging saw %d sessions, want 3", len(seen))
		}
		wantProblem(t, s.bySession(second, false, call{Method: "GET", Path: "/api/v1/account/sessions?limit=0"}), http.StatusBadRequest, gengate.EInvalid)

		// API keys: sessions belong to members.
		curlID := curl["id"].(string)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/account/sessions", Key: first.key}), http.StatusForbidden, gengate.EForbidden)
		wantProblem(t, s.do(call{Method: "DELETE", Path: "/api/v1/account/sessions/" + curlID, Key: first.key}), http.StatusForbidden, gengate.EForbidden)
		// Without the CSRF token: refused, nothing ends.
		wantProblem(t, s.bySession(second, false, call{Method: "DELETE", Path: "/api/v1/account/sessions/" + curlID}), http.StatusForbidden, gengate.ECSRF)
		if account(third) != http.StatusOK {
			t.Fatal("a refused end ended the session")
		}

		// Ending another session of one's own.
		wantStatus(t, s.bySession(second, true, call{Method: "DELETE", Path: "/api/v1/account/sessions/" + curlID}), http.StatusNoContent)
		if st := account(third); st != http.StatusUnauthorized {
			t.Errorf("the ended session answers %d, want 401", st)
		}
		if account(first) != http.StatusOK || account(second) != http.StatusOK {
			t.Error("ending one session ended another")
		}
		wantProblem(t, s.bySession(second, true, call{Method: "DELETE", Path: "/api/v1/account/sessions/" + curlID}), http.StatusNotFound, gengate.ENotFound)
		if n := len(s.sessionsOf(second)); n != 2 {
			t.Errorf("%d sessions listed after ending one, want 2", n)
		}

		// Ending the current one signs out: the cookie is cleared.
		r = s.bySession(second, true, call{Method: "DELETE", Path: "/api/v1/account/sessions/" + ff["id"].(string)})
		wantStatus(t, r, http.StatusNoContent)
		cleared := false
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			cleared = cleared || (c.Name == "gengate_session" && c.MaxAge < 0)
		}
		if !cleared {
			t.Errorf("ending the current session left its cookie: %v", r.Header["Set-Cookie"])
		}
		if st := account(second); st != http.StatusUnauthorized {
			t.Errorf("the current session answers %d after ending it, want 401", st)
		}
		if account(first) != http.StatusOK {
			t.Error("ending the current session ended another")
		}
	})
}

// TestSessionsIsolation: a member never sees nor ends another member's
// session, of another account or of their own account: another member's
// session id is answered 404, like an unknown one, and that session goes
// on. Both databases.
func TestSessionsIsolation(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		ctx := context.Background()
		ann := s.holder(10, false)
		stranger := s.holder(10, false) // another account
		// A second member of ann's account, set up through a link.
		colleague := gengate.NewMember(ann.account, "colleague-"+gengate.NewID()[:8]+"@example.com", gengate.RoleOwner, time.Now())
		if err := s.store.CreateMember(ctx, colleague); err != nil {
			t.Fatal(err)
		}
		token, err := s.svc.IssueLink(ctx, colleague.ID, gengate.LinkSetup)
		if err != nil {
			t.Fatal(err)
		}
		r := s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token, "password": "colleague password"}})
		wantStatus(t, r, http.StatusOK)
		col := &holder{account: ann.account, cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}

		annIDs := map[string]bool{}
		for _, x := range s.sessionsOf(ann) {
			annIDs[x["id"].(string)] = true
		}
		if len(annIDs) != 1 {
			t.Fatalf("ann has %d sessions, want 1", len(annIDs))
		}
		for name, other := range map[string]*holder{"another account's member": stranger, "a member of the same account": col} {
			for _, x := range s.sessionsOf(other) {
				if annIDs[x["id"].(string)] {
					t.Errorf("%s sees ann's session %v", name, x["id"])
				}
			}
			for id := range annIDs {
				wantProblem(t, s.bySession(other, true, call{Method: "DELETE", Path: "/api/v1/account/sessions/" + id}), http.StatusNotFound, gengate.ENotFound)
			}
			wantProblem(t, s.bySession(other, true, call{Method: "DELETE", Path: "/api/v1/account/sessions/" + gengate.NewID()}), http.StatusNotFound, gengate.ENotFound)
		}
		if st := s.bySession(ann, false, call{Method: "GET", Path: "/api/v1/account"}).Status; st != http.StatusOK {
			t.Errorf("ann's session answers %d after the others' attempts", st)
		}
		if n := len(s.sessionsOf(ann)); n != 1 {
			t.Errorf("ann has %d sessions after the others' attempts, want 1", n)
		}
	})
}

// TestRenameAccount: the account's owner renames it (trimmed) with the
// CSRF token, and the account and the session say the new name; an
// operator renames their own account; an empty, too long or multi-line
// name is 400 on field name and changes nothing; an API key gets 403
// FORBIDDEN. Both databases.
func TestRenameAccount(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(10, false)
		rename := func(name any) call {
			return call{Method: "PATCH", Path: "/api/v1/account", Body: map[string]any{"name": name}}
		}
		r := s.bySession(h, true, rename("  Ann's studio  "))
		wantStatus(t, r, http.StatusOK)
		if r.str("name") != "Ann's studio" || r.str("id") != h.account {
			t.Errorf("rename answered %s", r.Body)
		}
		if got := s.bySession(h, false, call{Method: "GET", Path: "/api/v1/auth/session"}).str("accountName"); got != "Ann's studio" {
			t.Errorf("the session's accountName is %q", got)
		}

		for _, c := range []struct {
			name  any
			field string
		}{
			{"", gengate.FieldRequired}, {"   ", gengate.FieldRequired}, {strings.Repeat("x", gengate.MaxNameLength+1), gengate.FieldTooLong},
			{"two\nlines", gengate.FieldValue}, {42, gengate.FieldType},
		} {
			r := s.bySession(h, true, rename(c.name))
			wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
			if fieldCode(r) != c.field || !strings.Contains(string(r.Body), `"name"`) {
				t.Errorf("rename to %q: %s, want field name %s", c.name, r.Body, c.field)
			}
		}
		wantProblem(t, s.bySession(h, true, call{Method: "PATCH", Path: "/api/v1/account", Body: map[string]any{"name": "x", "balance": 5}}), http.StatusBadRequest, gengate.EInvalid)
		wantProblem(t, s.bySession(h, false, rename("No token")), http.StatusForbidden, gengate.ECSRF)
		byKey := rename("By a key")
		byKey.Key = h.key
		wantProblem(t, s.do(byKey), http.StatusForbidden, gengate.EForbidden)
		if got := s.do(call{Method: "GET", Path: "/api/v1/account", Key: h.key}).str("name"); got != "Ann's studio" {
			t.Errorf("after the refusals the account is named %q", got)
		}

		op := s.holder(10, true)
		r = s.bySession(op, true, rename("Operations"))
		wantStatus(t, r, http.StatusOK)
		if r.str("name") != "Operations" {
			t.Errorf("operator's rename answered %s", r.Body)
		}
		if got := s.do(call{Method: "GET", Path: "/api/v1/account", Key: h.key}).str("name"); got != "Ann's studio" {
			t.Errorf("another account's rename renamed this one: %q", got)
		}
	})
}

// TestBrowserName: a session's User-Agent in short, as its member knows
// the browser: name, major version and system; a program by its first
// word.
func TestBrowserName(t *testing.T) {
	for _, c := range []struct{ ua, want string }{
		{"", ""},
		{firefox, "Firefox 128 on Linux"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "Chrome 126 on Windows"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87", "Edge 126 on Windows"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "Safari 17 on macOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Safari 17 on iPhone"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1", "Chrome 126 on iPhone"},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", "Chrome 126 on Android"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36", "Headless Chrome 126 on Linux"},
		{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "Chrome 126 on ChromeOS"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0", "Opera 111 on Windows"},
		{"curl/8.5.0", "curl/8.5.0"},
		{"Go-http-client/1.1", "Go-http-client/1.1"},
		{"python-requests/2.32.3 extra words", "python-requests/2.32.3"},
		{strings.Repeat("x", 100), strings.Repeat("x", 40)},
	} {
		if got := httpapi.BrowserName(c.ua); got != c.want {
			t.Errorf("browserName(%.50q) = %q, want %q", c.ua, got, c.want)
		}
	}
}
