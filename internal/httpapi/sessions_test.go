package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// TestSessionsEndWithNewPassword: a password set through a link ends every
// session the member had (the older one answers 401), a sign-in link
// without a password ends none, a new link voids the member's unused
// older ones, and sign-out-everywhere ends them all, on both databases.
func TestSessionsEndWithNewPassword(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		ctx := context.Background()
		h := s.holder(10, false) // session 1, from the set-up link
		other := s.holder(10, false)
		account := func(h *holder) int {
			return s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"}).Status
		}
		signIn := func() *holder {
			r := s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": h.email, "password": h.password}})
			wantStatus(t, r, http.StatusOK)
			return &holder{cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}
		}
		useLink := func(token string, password *string) response {
			body := map[string]any{"token": token}
			if password != nil {
				body["password"] = *password
			}
			return s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: body})
		}
		second := signIn()
		if account(h) != 200 || account(second) != 200 {
			t.Fatal("sessions do not work to begin with")
		}

		// Two links: the older is void once the newer is issued.
		older, err := s.svc.IssueLink(ctx, h.member, gengate.LinkSignIn)
		if err != nil {
			t.Fatal(err)
		}
		newer, err := s.svc.IssueLink(ctx, h.member, gengate.LinkSignIn)
		if err != nil {
			t.Fatal(err)
		}
		wantProblem(t, useLink(older, nil), http.StatusUnauthorized, gengate.EInvalidLink)

		// The newer one, with a new password: the older sessions end.
		pw := "a brand new password"
		r := useLink(newer, &pw)
		wantStatus(t, r, http.StatusOK)
		third := &holder{cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}
		for name, old := range map[string]*holder{"set-up session": h, "signed-in session": second} {
			if st := account(old); st != http.StatusUnauthorized {
				t.Errorf("the %s answers %d after a new password, want 401", name, st)
			}
		}
		if account(third) != 200 {
			t.Error("the session the link began does not work")
		}
		if account(other) != 200 {
			t.Error("another member's session ended")
		}
		h.password = pw

		// A sign-in link without a password ends nothing.
		plain, err := s.svc.IssueLink(ctx, h.member, gengate.LinkSignIn)
		if err != nil {
			t.Fatal(err)
		}
		r = useLink(plain, nil)
		wantStatus(t, r, http.StatusOK)
		fourth := &holder{cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}
		if account(third) != 200 || account(fourth) != 200 {
			t.Error("a sign-in link without a password ended a session")
		}

		// Sign out everywhere: needs the CSRF token, then ends them all.
		wantProblem(t, s.bySession(fourth, false, call{Method: "POST", Path: "/api/v1/auth/signout-all"}), http.StatusForbidden, gengate.ECSRF)
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/auth/signout-all"}), http.StatusUnauthorized, gengate.EUnauthorized)
		r = s.bySession(fourth, true, call{Method: "POST", Path: "/api/v1/auth/signout-all"})
		wantStatus(t, r, http.StatusNoContent)
		for name, old := range map[string]*holder{"third": third, "fourth": fourth} {
			if st := account(old); st != http.StatusUnauthorized {
				t.Errorf("the %s session answers %d after signing out everywhere, want 401", name, st)
			}
		}
		if account(other) != 200 {
			t.Error("another member's session ended")
		}
		signIn() // the password still works
	})
}

// TestPasswordChangeEndsOtherSessions: a member who changes their password
// (POST /api/v1/account/password, with the current one) stays signed in
// where they asked, and every other session of theirs ends; a wrong
// current password, an API key and a request without the CSRF token
// change nothing. Both databases.
func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(10, false)
		account := func(h *holder) int {
			return s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"}).Status
		}
		signIn := func(pw string) response {
			return s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": h.email, "password": pw}})
		}
		r := signIn(h.password)
		wantStatus(t, r, http.StatusOK)
		other := &holder{cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}
		change := call{Method: "POST", Path: "/api/v1/account/password", Body: map[string]any{"currentPassword": "not the password", "password": "a brand new password"}}
		wantProblem(t, s.bySession(h, true, change), http.StatusUnauthorized, gengate.EInvalidCredentials)
		change.Body = map[string]any{"currentPassword": h.password, "password": "a brand new password"}
		wantProblem(t, s.bySession(h, false, change), http.StatusForbidden, gengate.ECSRF)
		byKey := change
		byKey.Key = h.key
		wantProblem(t, s.do(byKey), http.StatusForbidden, gengate.EForbidden)
		if account(other) != 200 {
			t.Fatal("a refused change ended a session")
		}
		wantStatus(t, s.bySession(h, true, change), http.StatusNoContent)
		if account(h) != 200 {
			t.Error("the session that changed the password ended")
		}
		if st := account(other); st != http.StatusUnauthorized {
			t.Errorf("the other session answers %d after the password changed, want 401", st)
		}
		wantProblem(t, signIn(h.password), http.StatusUnauthorized, gengate.EInvalidCredentials)
		wantStatus(t, signIn("a brand new password"), http.StatusOK)
	})
}

// TestPasswordChangeRefusals: a new password that breaks the rules is 400
// and changes nothing; password changes are paced per address like
// sign-ins (429 with Retry-After once the address's attempts are spent);
// an operator's read of an account with a bad page size is 400.
func TestPasswordChangeRefusals(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, accounts: httpapi.AccountsConfig{SignInPerAddress: 3}})
	h := s.holder(10, true)
	change := call{Method: "POST", Path: "/api/v1/account/password", Body: map[string]any{"currentPassword": h.password, "password": "short"}}
	wantProblem(t, s.bySession(h, true, change), http.StatusBadRequest, gengate.EInvalid)
	r := s.bySession(h, true, call{Method: "GET", Path: "/api/v1/admin/accounts/" + h.account + "?limit=nope"})
	wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
	change.Body = map[string]any{"currentPassword": "not the password", "password": "a brand new password"}
	var last response
	for range 10 {
		if last = s.bySession(h, true, change); last.Status == http.StatusTooManyRequests {
			break
		}
	}
	wantStatus(t, last, http.StatusTooManyRequests)
	if last.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}
