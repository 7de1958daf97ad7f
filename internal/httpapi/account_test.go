package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// holder is an account with a member signed in through a set-up link, and
// an API key.
type holder struct {
	account  string
	email    string
	password string
	key      string // an API key of the account
	cookie   string // the session token
	csrf     string
	member   string
}

// holder creates an account (operator or not), uses its set-up link over
// HTTP with a password, and creates an API key.
func (s *stack) holder(credits int, operator bool) *holder {
	s.t.Helper()
	ctx := context.Background()
	email := "m" + gengate.NewID()[:8] + "@Example.com"
	acct, m, token, err := s.svc.CreateAccountWithLink(ctx, email, "", credits, operator)
	if err != nil {
		s.t.Fatal(err)
	}
	h := &holder{account: acct.ID, email: email, password: "pw-" + gengate.NewToken(), member: m.ID}
	r := s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token, "password": h.password}})
	if r.Status != http.StatusOK {
		s.t.Fatalf("set-up link: %s", r)
	}
	h.cookie, h.csrf = sessionCookie(s.t, r), r.str("csrfToken")
	// An operator's holder gets an operator key, as the CLI makes it
	// (gengate keys create --operator); others a plain key.
	secret, k := gengate.NewAPIKey(acct.ID, "test", time.Now())
	k.Operator = operator
	if err := s.store.CreateAPIKey(ctx, k); err != nil {
		s.t.Fatal(err)
	}
	h.key = secret
	return h
}

func sessionCookie(t testing.TB, r response) string {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == httpapi.SessionCookie {
			return c.Value
		}
	}
	t.Fatalf("no session cookie in %v", r.Header)
	return ""
}

// bySession sends a call with the holder's session cookie and, when csrf,
// its CSRF token.
func (s *stack) bySession(h *holder, csrf bool, c call) response {
	s.t.Helper()
	if c.Header == nil {
		c.Header = map[string]string{}
	}
	c.Header["Cookie"] = httpapi.SessionCookie + "=" + h.cookie
	if csrf {
		c.Header["X-CSRF-Token"] = h.csrf
	}
	return s.do(c)
}

func flux(prompt string) map[string]any {
	return map[string]any{"type": "image", "modelId": "flux", "prompt": prompt}
}

func listOf(t testing.TB, r response) []map[string]any {
	t.Helper()
	raw, ok := r.JSON["data"].([]any)
	if !ok {
		t.Fatalf("no data list: %s", r.Body)
	}
	out := make([]map[string]any, 0, len(raw))
	for _, v := range raw {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestSessionSignIn: a set-up link signs in once and sets the password;
// the cookie is HttpOnly, SameSite=Lax, Path=/; sign-in by password works;
// a wrong password and an unknown email get the same answer; sign-out ends
// the session (with its CSRF token only).
func TestSessionSignIn(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		ctx := context.Background()
		_, _, token, err := s.svc.CreateAccountWithLink(ctx, "Ann@Example.com", "Ann's", 50, false)
		if err != nil {
			t.Fatal(err)
		}
		// A short password is refused before the link is used.
		r := s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token, "password": "short"}})
		wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
		if fieldCode(r) == "" || !strings.Contains(string(r.Body), `"password"`) {
			t.Errorf("the error does not name the password field: %s", r.Body)
		}
		r = s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token, "password": "a good long password"}})
		wantStatus(t, r, http.StatusOK)
		cookie := ""
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			if c.Name == httpapi.SessionCookie {
				cookie = c.Value
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
					t.Errorf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, not Secure over http", c)
				}
			}
		}
		if cookie == "" || r.str("csrfToken") == "" || r.str("accountName") != "Ann's" {
			t.Fatalf("session answer %s", r.Body)
		}
		if m, _ := r.JSON["member"].(map[string]any); m["email"] != "ann@example.com" || m["role"] != "owner" || r.JSON["operator"] != false {
			t.Errorf("member %v operator %v", m, r.JSON["operator"])
		}
		// The link is single use.
		r = s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token}})
		wantProblem(t, r, http.StatusUnauthorized, gengate.EInvalidLink)

		// Sign-in by password, the email in any case.
		r = s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": "ANN@example.com", "password": "a good long password"}})
		wantStatus(t, r, http.StatusOK)
		h := &holder{cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}
		r = s.bySession(h, false, call{Method: "GET", Path: "/api/v1/auth/session"})
		wantStatus(t, r, http.StatusOK)

		wrong := s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": "ann@example.com", "password": "wrong password!"}})
		unknown := s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": "bob@example.com", "password": "wrong password!"}})
		wantProblem(t, wrong, http.StatusUnauthorized, gengate.EInvalidCredentials)
		wantProblem(t, unknown, http.StatusUnauthorized, gengate.EInvalidCredentials)
		if wrong.str("detail") != unknown.str("detail") || wrong.str("detail") != "email or password is wrong" {
			t.Errorf("wrong password says %q, unknown email %q", wrong.str("detail"), unknown.str("detail"))
		}

		// Sign-out needs the CSRF token, then ends the session.
		r = s.bySession(h, false, call{Method: "POST", Path: "/api/v1/auth/signout"})
		wantProblem(t, r, http.StatusForbidden, gengate.ECSRF)
		r = s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"})
		wantStatus(t, r, http.StatusOK)
		r = s.bySession(h, true, call{Method: "POST", Path: "/api/v1/auth/signout"})
		wantStatus(t, r, http.StatusNoContent)
		r = s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"})
		wantProblem(t, r, http.StatusUnauthorized, gengate.EUnauthorized)
		r = s.bySession(h, false, call{Method: "GET", Path: "/api/v1/auth/session"})
		wantProblem(t, r, http.StatusUnauthorized, gengate.EUnauthorized)
	})
}

// TestSecureCookieBehindHTTPS: with an https public URL the cookie is
// Secure.
func TestSecureCookieBehindHTTPS(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, publicURL: "https://gengate.example"})
	_, _, token, err := s.svc.CreateAccountWithLink(context.Background(), "sec@example.com", "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	r := s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token}})
	wantStatus(t, r, http.StatusOK)
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == httpapi.SessionCookie && !c.Secure {
			t.Errorf("cookie %+v is not Secure behind https", c)
		}
	}
}

// TestCSRF: a cookie request that changes something without the session's
// CSRF token is refused with 403 and changes nothing; an API key needs
// none, and wins over a cookie.
func TestCSRF(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(100, false)
		before := s.taskCount()
		for _, c := range []call{
			{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"name": "x"}},
			{Method: "POST", Path: "/api/v1/generate", Body: flux("a cat"), Header: map[string]string{"Prefer": "respond-async"}},
		} {
			r := s.bySession(h, false, c)
			wantProblem(t, r, http.StatusForbidden, gengate.ECSRF)
			c.Header = map[string]string{"X-CSRF-Token": "not-the-token", "Prefer": "respond-async"}
			r = s.bySession(h, false, c)
			wantProblem(t, r, http.StatusForbidden, gengate.ECSRF)
		}
		if n := s.taskCount(); n != before {
			t.Errorf("refused requests created %d tasks", n-before)
		}
		if b := s.balance(h.account); b != 100 {
			t.Errorf("balance %d after refused requests, want 100", b)
		}
		keys := listOf(t, s.do(call{Method: "GET", Path: "/api/v1/keys", Key: h.key}))
		if len(keys) != 1 {
			t.Errorf("%d keys after refused creates, want 1", len(keys))
		}
		// With the token, the same requests go through.
		r := s.bySession(h, true, call{Method: "POST", Path: "/api/v1/generate", Body: flux("a cat"), Header: map[string]string{"Prefer": "respond-async"}})
		wantStatus(t, r, http.StatusAccepted)
		// A key wins over a cookie and needs no token.
		r = s.bySession(h, false, call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "by key"}})
		wantStatus(t, r, http.StatusCreated)
	})
}

// TestAccountScoping: account B's key or session never reads or changes
// anything of account A: tasks, their files, keys, ledger, account.
func TestAccountScoping(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		a, b := s.holder(100, false), s.holder(100, false)
		done := s.generate(a.key, flux("A's secret prompt"), nil)
		wantStatus(t, done, http.StatusOK)
		jobA := done.str("jobId")
		fileA := images(t, done)[0]
		keysA := listOf(t, s.do(call{Method: "GET", Path: "/api/v1/keys", Key: a.key}))
		keyA := keysA[0]["id"].(string)

		type who struct {
			name string
			send func(c call) response
		}
		for _, w := range []who{
			{"key", func(c call) response { c.Key = b.key; return s.do(c) }},
			{"session", func(c call) response { return s.bySession(b, true, c) }},
		} {
			t.Run(w.name, func(t *testing.T) {
				wantProblem(t, w.send(call{Method: "GET", Path: jobPath(jobA)}), http.StatusNotFound, gengate.ENotFound)
				wantProblem(t, w.send(call{Method: "POST", Path: jobPath(jobA)}), http.StatusNotFound, gengate.ENotFound)
				wantProblem(t, w.send(call{Method: "DELETE", Path: "/api/v1/keys/" + keyA}), http.StatusNotFound, gengate.ENotFound)
				wantProblem(t, w.send(call{Method: "PATCH", Path: "/api/v1/keys/" + keyA, Body: map[string]any{"name": "stolen", "spendLimit": 1}}),
					http.StatusNotFound, gengate.ENotFound)
				for _, path := range []string{"/api/generation/jobs", "/api/v1/keys", "/api/v1/account/ledger", "/api/v1/account",
					"/api/v1/account/usage", "/api/generation/jobs?status=succeeded"} {
					r := w.send(call{Method: "GET", Path: path})
					wantStatus(t, r, http.StatusOK)
					for _, secret := range []string{jobA, keyA, a.account, fileA[strings.LastIndex(fileA, "/")+1:], "secret prompt", a.email} {
						if bytes.Contains(bytes.ToLower(r.Body), bytes.ToLower([]byte(secret))) {
							t.Errorf("GET %s as B shows A's %q: %s", path, secret, r.Body)
						}
					}
				}
				wantProblem(t, w.send(call{Method: "GET", Path: "/api/v1/admin/accounts"}), http.StatusForbidden, gengate.EForbidden)
			})
		}
		// A's key still works, unchanged, and A's records are A's.
		r := s.do(call{Method: "GET", Path: "/api/v1/keys", Key: a.key})
		if k := listOf(t, r)[0]; k["name"] != "test" || k["spendLimit"] != nil || k["revokedAt"] != nil {
			t.Errorf("A's key changed: %v", k)
		}
		r = s.do(call{Method: "GET", Path: "/api/generation/jobs", Key: a.key})
		if l := listOf(t, r); len(l) != 1 || l[0]["jobId"] != jobA || l[0]["prompt"] != "A's secret prompt" {
			t.Errorf("A's task list %s", r.Body)
		}
	})
}

// TestTaskListAndLedgerPaging: paging the task list and the ledger
// newest first, while other tasks are created, shows every entry that
// existed before paging began exactly once, and never repeats one.
func TestTaskListAndLedgerPaging(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(100000, false)
		const n = 25
		var before []string
		for i := 0; i < n; i++ {
			r := s.generate(h.key, flux(fmt.Sprintf("p%d", i)), async)
			wantStatus(t, r, http.StatusAccepted)
			before = append(before, r.str("jobId"))
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // concurrent inserts, while the pages are read
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s.generate(h.key, flux(fmt.Sprintf("during %d", i)), async)
			}
		}()
		page := func(path string, idField string) map[string]int {
			seen := map[string]int{}
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 200 {
					t.Fatalf("%s: more than 200 pages", path)
				}
				p := path + "?limit=3"
				if cursor != "" {
					p += "&cursor=" + cursor
				}
				r := s.do(call{Method: "GET", Path: p, Key: h.key})
				wantStatus(t, r, http.StatusOK)
				for _, e := range listOf(t, r) {
					seen[e[idField].(string)]++
				}
				next, ok := r.JSON["nextCursor"].(string)
				if !ok {
					return seen
				}
				cursor = next
			}
		}
		tasks := page("/api/generation/jobs", "jobId")
		ledger := page("/api/v1/account/ledger", "id")
		close(stop)
		wg.Wait()
		for _, id := range before {
			if tasks[id] != 1 {
				t.Errorf("task %s seen %d times", id, tasks[id])
			}
		}
		for id, c := range tasks {
			if c != 1 {
				t.Errorf("task %s seen %d times", id, c)
			}
		}
		for id, c := range ledger {
			if c != 1 {
				t.Errorf("ledger entry %s seen %d times", id, c)
			}
		}
		if len(ledger) < n+1 {
			t.Errorf("ledger pages show %d entries, want ≥ %d", len(ledger), n+1)
		}
		// Every balanceAfter is the sum of the entries up to it.
		entries := s.ledgerCheck(h.account)
		sums := map[string]int{}
		sum := 0
		for _, e := range entries {
			sum += e.Amount
			sums[fmt.Sprint(e.ID)] = sum
		}
		r := s.do(call{Method: "GET", Path: "/api/v1/account/ledger?limit=100", Key: h.key})
		for _, e := range listOf(t, r) {
			if int(e["balanceAfter"].(float64)) != sums[e["id"].(string)] {
				t.Errorf("entry %v: balanceAfter, want %d", e, sums[e["id"].(string)])
			}
		}
	})
}

// TestListParameters: bad limits and cursors are refused naming the field;
// filters filter.
func TestListParameters(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	h := s.holder(1000, false)
	wantStatus(t, s.generate(h.key, flux("one"), async), http.StatusAccepted)
	for _, p := range []string{"/api/generation/jobs?limit=0", "/api/generation/jobs?limit=101", "/api/generation/jobs?limit=x",
		"/api/generation/jobs?cursor=zzz", "/api/v1/account/ledger?cursor=abc", "/api/generation/jobs?status=done",
		"/api/generation/jobs?type=audio", "/api/v1/account/usage?days=0"} {
		r := s.do(call{Method: "GET", Path: p, Key: h.key})
		wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
		field := strings.TrimPrefix(strings.SplitN(strings.SplitN(p, "?", 2)[1], "=", 2)[0], "")
		if !strings.Contains(string(r.Body), `"field":"`+field+`"`) {
			t.Errorf("%s: the error does not name %s: %s", p, field, r.Body)
		}
	}
	for q, want := range map[string]int{"status=processing": 1, "status=succeeded": 0, "modelId=flux": 1, "modelId=kling": 0,
		"type=image": 1, "type=video": 0} {
		r := s.do(call{Method: "GET", Path: "/api/generation/jobs?" + q, Key: h.key})
		if got := len(listOf(t, r)); got != want {
			t.Errorf("?%s lists %d tasks, want %d", q, got, want)
		}
		if _, ok := r.JSON["nextCursor"]; ok {
			t.Errorf("?%s: nextCursor on the last page", q)
		}
	}
}

// TestKeysLifecycle: create (the secret once), list (never the secret),
// rename and limit, revoke: the revoked key is refused at once.
func TestKeysLifecycle(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(1000, false)
		r := s.bySession(h, true, call{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"name": "ci", "spendLimit": 50}})
		wantStatus(t, r, http.StatusCreated)
		secret, id := r.str("key"), r.str("id")
		if !strings.HasPrefix(secret, gengate.KeyPrefix) || r.num("spendLimit") != 50 || r.str("prefix") != secret[:len(gengate.KeyPrefix)+6] {
			t.Fatalf("created key %s", r.Body)
		}
		wantStatus(t, s.generate(secret, flux("x"), async), http.StatusAccepted)
		r = s.do(call{Method: "GET", Path: "/api/v1/keys", Key: secret})
		if bytes.Contains(r.Body, []byte(secret)) || bytes.Contains(r.Body, []byte(h.key)) {
			t.Errorf("the key list shows a secret: %s", r.Body)
		}
		var got map[string]any
		for _, k := range listOf(t, r) {
			if k["id"] == id {
				got = k
			}
		}
		if got == nil || got["lastUsedAt"] == nil || got["spentToday"].(float64) != 4 {
			t.Errorf("key after one generation: %v", got)
		}
		r = s.do(call{Method: "PATCH", Path: "/api/v1/keys/" + id, Key: h.key, Body: map[string]any{"name": "ci-2", "spendLimit": nil}})
		wantStatus(t, r, http.StatusOK)
		if r.str("name") != "ci-2" || r.JSON["spendLimit"] != nil {
			t.Errorf("patched key %s", r.Body)
		}
		r = s.do(call{Method: "PATCH", Path: "/api/v1/keys/" + id, Key: h.key, Body: map[string]any{"spendLimit": 0}})
		wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)

		wantStatus(t, s.do(call{Method: "DELETE", Path: "/api/v1/keys/" + id, Key: h.key}), http.StatusNoContent)
		r = s.generate(secret, flux("x"), async)
		wantProblem(t, r, http.StatusUnauthorized, gengate.EUnauthorized)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/account", Key: secret}), http.StatusUnauthorized, gengate.EUnauthorized)
		wantProblem(t, s.do(call{Method: "DELETE", Path: "/api/v1/keys/" + id, Key: h.key}), http.StatusNotFound, gengate.ENotFound)
		r = s.do(call{Method: "GET", Path: "/api/v1/keys", Key: h.key})
		for _, k := range listOf(t, r) {
			if k["id"] == id && k["revokedAt"] == nil {
				t.Errorf("revoked key listed without revokedAt: %v", k)
			}
		}
	})
}

// TestSpendLimitUnderConcurrency: many concurrent generations with a key
// never take it over its daily limit; refused ones are charged nothing.
func TestSpendLimitUnderConcurrency(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(1000, false)
		secret, k, err := s.svc.CreateKey(context.Background(), h.account, "limited", 10) // flux costs 4: two fit
		if err != nil {
			t.Fatal(err)
		}
		const n = 16
		statuses := make(chan response, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.send(call{Method: "POST", Path: "/api/v1/generate", Key: secret, Body: flux(fmt.Sprint("c", i)), Header: async})
				if err != nil {
					t.Error(err)
					return
				}
				statuses <- r
			}()
		}
		wg.Wait()
		close(statuses)
		ok := 0
		for r := range statuses {
			switch r.Status {
			case http.StatusAccepted:
				ok++
			case http.StatusPaymentRequired:
				if r.str("code") != gengate.ESpendLimit {
					t.Errorf("402 with code %s", r.str("code"))
				}
			default:
				t.Errorf("unexpected %s", r)
			}
		}
		if ok != 2 {
			t.Errorf("%d generations accepted under a limit of 10 at 4 credits, want 2", ok)
		}
		if b := s.balance(h.account); b != 1000-4*ok {
			t.Errorf("balance %d, want %d", b, 1000-4*ok)
		}
		s.ledgerCheck(h.account)
		got, err := s.store.FindAPIKey(context.Background(), k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.SpentOn(time.Now()) != 4*ok {
			t.Errorf("spentToday %d, want %d", got.SpentOn(time.Now()), 4*ok)
		}
		// The account's other key is not limited.
		wantStatus(t, s.generate(h.key, flux("other key"), async), http.StatusAccepted)
	})
}

// TestSignInLimit: attempts are limited per account and per client
// address, right password or not, known email or not, with 429 and
// Retry-After.
func TestSignInLimit(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, accounts: httpapi.AccountsConfig{SignInPerAccount: 3, SignInPerAddress: 6}})
	h := s.holder(0, false) // its set-up link is the address's first attempt
	signin := func(email, pw string) response {
		return s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": email, "password": pw}})
	}
	for i := 0; i < 3; i++ {
		wantProblem(t, signin(h.email, "wrong password"), http.StatusUnauthorized, gengate.EInvalidCredentials)
	}
	r := signin(h.email, h.password)
	wantProblem(t, r, http.StatusTooManyRequests, gengate.ERateLimited)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Other emails from this address: two more attempts, then the address
	// is over its limit too (unknown emails count the same).
	wantProblem(t, signin("nobody@example.com", "whatever123"), http.StatusUnauthorized, gengate.EInvalidCredentials)
	wantProblem(t, signin("nobody2@example.com", "whatever123"), http.StatusUnauthorized, gengate.EInvalidCredentials)
	wantProblem(t, signin("nobody3@example.com", "whatever123"), http.StatusTooManyRequests, gengate.ERateLimited)
}

// TestSecretsNeverInLogsOrAnswers: passwords, API keys, session tokens,
// link tokens and CSRF tokens appear in no log line, and secrets in no
// answer but the one that hands them out.
func TestSecretsNeverInLogsOrAnswers(t *testing.T) {
	var logs syncBuffer
	s := newStack(t, stackOpts{noWorkers: true, logTo: &logs, accounts: httpapi.AccountsConfig{OpenSignup: true, SignupCredits: 5}})
	op := s.holder(10, true)
	r := s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts", Body: map[string]any{"email": "new@example.com", "credits": 7}})
	wantStatus(t, r, http.StatusCreated)
	link := r.str("setupLink")
	linkToken := link[strings.LastIndex(link, "/")+1:]
	r = s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": linkToken, "password": "the new one's password"}})
	wantStatus(t, r, http.StatusOK)
	cookie := sessionCookie(t, r)
	r = s.do(call{Method: "POST", Path: "/api/v1/auth/signup", Body: map[string]any{"email": "self@example.com", "password": "signup password 1"}})
	wantStatus(t, r, http.StatusCreated)
	signupCookie := sessionCookie(t, r)
	r = s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"email": "self@example.com", "password": "wrong signup pw"}})
	wantProblem(t, r, http.StatusUnauthorized, gengate.EInvalidCredentials)
	r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"name": "k"}})
	newKey := r.str("key")
	wantStatus(t, s.do(call{Method: "GET", Path: "/api/v1/account", Key: newKey}), http.StatusOK)
	r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts/" + op.account + "/link", Body: map[string]any{"email": op.email}})
	wantStatus(t, r, http.StatusOK)
	link2 := r.str("link")

	secrets := map[string]string{"password": op.password, "new password": "the new one's password", "signup password": "signup password 1",
		"wrong password": "wrong signup pw", "API key": op.key, "new API key": newKey, "session": op.cookie, "new session": cookie,
		"signup session": signupCookie, "CSRF token": op.csrf, "link token": linkToken, "link token 2": link2[strings.LastIndex(link2, "/")+1:]}
	if logs.Len() == 0 {
		t.Fatal("nothing was logged: the test sees nothing")
	}
	for what, secret := range secrets {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the %s is in the logs", what)
		}
	}
	// Stored forms hold no clear secret either.
	var dump strings.Builder
	for _, q := range []string{`SELECT token_hash || csrf_token FROM sessions`, `SELECT token_hash FROM login_links`,
		`SELECT email || password_hash FROM members`, `SELECT hash || prefix FROM api_keys`} {
		rows, err := s.store.SQL().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			rows.Scan(&v)
			dump.WriteString(v + "\n")
		}
		rows.Close()
	}
	for what, secret := range secrets {
		if what != "CSRF token" && strings.Contains(dump.String(), secret) {
			t.Errorf("the %s is stored in clear", what)
		}
	}
	for _, path := range []string{"/api/v1/keys", "/api/v1/account", "/api/v1/auth/session", "/api/v1/admin/accounts", "/api/v1/admin/accounts/" + op.account} {
		r := s.bySession(op, false, call{Method: "GET", Path: path})
		wantStatus(t, r, http.StatusOK)
		for what, secret := range secrets {
			if what != "CSRF token" && strings.Contains(string(r.Body), secret) {
				t.Errorf("GET %s shows the %s", path, what)
			}
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
func (s *syncBuffer) Len() int       { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Len() }

// TestSignUp: closed by default; open, it creates an account with the
// sign-up credits; a taken email is 409 EMAIL_TAKEN.
func TestSignUp(t *testing.T) {
	closed := newStack(t, stackOpts{noWorkers: true})
	r := closed.do(call{Method: "POST", Path: "/api/v1/auth/signup", Body: map[string]any{"email": "a@example.com", "password": "long enough pw"}})
	wantProblem(t, r, http.StatusForbidden, gengate.ESignupClosed)
	if r := closed.do(call{Method: "GET", Path: "/api/v1/auth/config"}); r.JSON["openSignup"] != false {
		t.Errorf("config %s", r.Body)
	}
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true, accounts: httpapi.AccountsConfig{OpenSignup: true, SignupCredits: 25}})
		if r := s.do(call{Method: "GET", Path: "/api/v1/auth/config"}); r.JSON["openSignup"] != true {
			t.Errorf("config %s", r.Body)
		}
		r := s.do(call{Method: "POST", Path: "/api/v1/auth/signup", Body: map[string]any{"email": "a@example.com", "password": "long enough pw", "name": "A"}})
		wantStatus(t, r, http.StatusCreated)
		h := &holder{cookie: sessionCookie(t, r), csrf: r.str("csrfToken")}
		acct := s.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"})
		if acct.num("remainingCredits") != 25 || acct.str("name") != "A" {
			t.Errorf("signed-up account %s", acct.Body)
		}
		r = s.do(call{Method: "POST", Path: "/api/v1/auth/signup", Body: map[string]any{"email": "A@EXAMPLE.com", "password": "long enough pw"}})
		wantProblem(t, r, http.StatusConflict, gengate.EEmailTaken)
		var n int
		s.store.SQL().QueryRow(`SELECT COUNT(*) FROM accounts`).Scan(&n)
		if n != 1 {
			t.Errorf("%d accounts after a refused sign-up, want 1", n)
		}
		r = s.do(call{Method: "POST", Path: "/api/v1/auth/signup", Body: map[string]any{"email": "b@example.com", "password": "short"}})
		wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
	})
}

// TestQuoteChargesNothing: a quote validates like generate and answers the
// cost; nothing is stored or charged.
func TestQuoteChargesNothing(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	h := s.holder(100, false)
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "numOutputs": 2}
	r := s.do(call{Method: "POST", Path: "/api/v1/quote", Key: h.key, Body: body})
	wantStatus(t, r, http.StatusOK)
	if r.num("cost") != 8 || r.num("remainingCredits") != 100 || r.str("engine") != "sandbox" || r.JSON["placeholder"] != true {
		t.Errorf("quote %s", r.Body)
	}
	r = s.do(call{Method: "GET", Path: "/api/v1/quote?type=image&modelId=flux&prompt=x&numOutputs=2", Key: h.key})
	if r.num("cost") != 8 {
		t.Errorf("GET quote %s", r.Body)
	}
	bad := map[string]any{"type": "image", "modelId": "no-such-model", "prompt": "x"}
	q := s.do(call{Method: "POST", Path: "/api/v1/quote", Key: h.key, Body: bad})
	g := s.generate(h.key, bad, async)
	if q.Status != g.Status || q.str("code") != g.str("code") || fieldCode(q) != fieldCode(g) {
		t.Errorf("quote refuses with %s, generate with %s", q, g)
	}
	if s.taskCount() != 0 || s.balance(h.account) != 100 {
		t.Errorf("quotes stored %d tasks, balance %d", s.taskCount(), s.balance(h.account))
	}
}

// TestUsageNetOfRefunds: usage sums charges per model minus refunds.
func TestUsageNetOfRefunds(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, reviewTerms: []string{"hold"}})
	op := s.holder(0, true)
	h := s.holder(100, false)
	wantStatus(t, s.generate(h.key, flux("a"), async), http.StatusAccepted)
	r := s.generate(h.key, flux("hold this"), async)
	held := r.str("jobId")
	if held == "" {
		t.Fatalf("held task: %s", r)
	}
	r = s.do(call{Method: "GET", Path: "/api/v1/account/usage", Key: h.key})
	if u := listOf(t, r); len(u) != 1 || u[0]["modelId"] != "flux" || u[0]["credits"].(float64) != 8 || u[0]["tasks"].(float64) != 2 {
		t.Errorf("usage before refund %s", r.Body)
	}
	// The operator sees it in review, with prompt and account, and refunds it.
	r = s.bySession(op, false, call{Method: "GET", Path: "/api/v1/admin/review"})
	l := listOf(t, r)
	if len(l) != 1 || l[0]["jobId"] != held || l[0]["accountId"] != h.account || l[0]["prompt"] != "hold this" || l[0]["reviewReason"] == "" {
		t.Fatalf("review list %s", r.Body)
	}
	r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/review/" + held, Body: map[string]any{"action": "refund"}})
	wantStatus(t, r, http.StatusOK)
	if r.str("status") != "failed" {
		t.Errorf("settled %s", r.Body)
	}
	r = s.do(call{Method: "GET", Path: "/api/v1/account/usage", Key: h.key})
	if u := listOf(t, r); len(u) != 1 || u[0]["credits"].(float64) != 4 {
		t.Errorf("usage after refund %s", r.Body)
	}
	r = s.do(call{Method: "GET", Path: "/api/v1/account/ledger", Key: h.key})
	if l := listOf(t, r); l[0]["kind"] != "refund" || l[0]["taskId"] != held || l[0]["balanceAfter"].(float64) != 96 {
		t.Errorf("ledger %s", r.Body)
	}
}

// TestAdminEndpoints: operators find, create and credit accounts, issue
// links and see the engines; others get 403.
func TestAdminEndpoints(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		op := s.holder(0, true)
		h := s.holder(10, false)
		for _, c := range []call{{Method: "GET", Path: "/api/v1/admin/accounts"}, {Method: "GET", Path: "/api/v1/admin/engines"},
			{Method: "POST", Path: "/api/v1/admin/accounts/" + h.account + "/credits", Body: map[string]any{"credits": 100}}} {
			c.Key = h.key
			wantProblem(t, s.do(c), http.StatusForbidden, gengate.EForbidden)
		}
		if s.balance(h.account) != 10 {
			t.Errorf("a refused grant changed the balance")
		}
		r := s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts", Body: map[string]any{"email": "Cust@Example.com", "name": "Cust", "credits": 30}})
		wantStatus(t, r, http.StatusCreated)
		acct, _ := r.JSON["account"].(map[string]any)
		id, _ := acct["id"].(string)
		if !strings.HasPrefix(r.str("setupLink"), s.URL+"/#/link/") || acct["remainingCredits"].(float64) != 30 {
			t.Fatalf("created %s", r.Body)
		}
		r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts", Body: map[string]any{"email": "cust@example.com", "credits": 1}})
		wantProblem(t, r, http.StatusConflict, gengate.EEmailTaken)
		r = s.do(call{Method: "GET", Path: "/api/v1/admin/accounts?q=CUST@example", Key: op.key})
		if l := listOf(t, r); len(l) != 1 || l[0]["id"] != id {
			t.Errorf("find by email %s", r.Body)
		}
		r = s.do(call{Method: "GET", Path: "/api/v1/admin/accounts?limit=2", Key: op.key})
		if len(listOf(t, r)) != 2 || r.JSON["nextCursor"] == nil {
			t.Errorf("first page of 3 accounts %s", r.Body)
		}
		r = s.do(call{Method: "GET", Path: "/api/v1/admin/accounts?limit=2&cursor=" + r.str("nextCursor"), Key: op.key})
		if len(listOf(t, r)) != 1 || r.JSON["nextCursor"] != nil {
			t.Errorf("last page %s", r.Body)
		}
		r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts/" + id + "/credits", Body: map[string]any{"credits": -40, "note": "x"}})
		wantProblem(t, r, http.StatusPaymentRequired, gengate.EInsufficient)
		r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts/" + id + "/credits", Body: map[string]any{"credits": -10, "note": "correction"}})
		wantStatus(t, r, http.StatusOK)
		if r.num("remainingCredits") != 20 {
			t.Errorf("after -10: %s", r.Body)
		}
		r = s.do(call{Method: "GET", Path: "/api/v1/admin/accounts/" + h.account, Key: op.key})
		if keys, _ := r.JSON["keys"].([]any); len(keys) != 1 || r.num("remainingCredits") != 10 {
			t.Errorf("account detail %s", r.Body)
		}
		r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts/" + id + "/link", Body: map[string]any{"email": h.email}})
		wantProblem(t, r, http.StatusNotFound, gengate.ENotFound) // h is not a member of that account
		r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/admin/accounts/" + h.account + "/link", Body: map[string]any{"email": h.email}})
		wantStatus(t, r, http.StatusOK)
		token := r.str("link")[strings.LastIndex(r.str("link"), "/")+1:]
		r = s.do(call{Method: "POST", Path: "/api/v1/auth/link", Body: map[string]any{"token": token}})
		wantStatus(t, r, http.StatusOK)
		if r.str("accountId") != h.account {
			t.Errorf("sign-in link signed in to %s", r.str("accountId"))
		}
		r = s.do(call{Method: "GET", Path: "/api/v1/admin/engines", Key: op.key})
		wantStatus(t, r, http.StatusOK)
		if l := listOf(t, r); len(l) != 1 || l[0]["name"] != "sandbox" || l[0]["kind"] != "sandbox" || l[0]["status"] != "ok" {
			t.Errorf("engines %s", r.Body)
		}
	})
}

// TestAdminEnginesProbe: a provider engine's status is what the probe
// says, remembered for a minute (the probe is not asked again at once).
func TestAdminEnginesProbe(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	probe := func(ctx context.Context, name string) error {
		mu.Lock()
		defer mu.Unlock()
		calls[name]++
		if name == "down" {
			return fmt.Errorf("connection refused")
		}
		return nil
	}
	s := newStack(t, stackOpts{noWorkers: true, accounts: httpapi.AccountsConfig{Probe: probe}})
	s.svc.Engines["up"] = sandbox.New(0) // stand-ins for two providers
	s.svc.Engines["down"] = sandbox.New(0)
	op := s.holder(0, true)
	for i := 0; i < 2; i++ {
		r := s.do(call{Method: "GET", Path: "/api/v1/admin/engines", Key: op.key})
		wantStatus(t, r, http.StatusOK)
		got := map[string]map[string]any{}
		for _, e := range listOf(t, r) {
			got[e["name"].(string)] = e
		}
		if e := got["up"]; e["kind"] != "provider" || e["status"] != "ok" || e["checkedAt"] == nil {
			t.Errorf("up: %v", e)
		}
		if e := got["down"]; e["kind"] != "provider" || e["status"] != "unreachable" {
			t.Errorf("down: %v", e)
		}
		if e := got["sandbox"]; e["status"] != "ok" || e["checkedAt"] != nil {
			t.Errorf("sandbox: %v", e)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["up"] != 1 || calls["down"] != 1 || calls["sandbox"] != 0 {
		t.Errorf("probe calls %v, want one per provider (cached)", calls)
	}
}

// TestSpendLimitRefund: a refunded task gives its credits back to its
// key's day.
func TestSpendLimitRefund(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true, reviewTerms: []string{"hold"}})
		h := s.holder(100, false)
		secret, _, err := s.svc.CreateKey(context.Background(), h.account, "limited", 8)
		if err != nil {
			t.Fatal(err)
		}
		held := s.generate(secret, flux("hold this"), async).str("jobId")
		wantStatus(t, s.generate(secret, flux("b"), async), http.StatusAccepted)
		wantProblem(t, s.generate(secret, flux("c"), async), http.StatusPaymentRequired, gengate.ESpendLimit)
		if _, err := s.svc.Settle(context.Background(), held, true); err != nil {
			t.Fatal(err)
		}
		r := s.do(call{Method: "GET", Path: "/api/v1/keys", Key: secret})
		for _, k := range listOf(t, r) {
			if k["name"] == "limited" && k["spentToday"].(float64) != 4 {
				t.Errorf("spentToday after a refund: %v, want 4", k["spentToday"])
			}
		}
		wantStatus(t, s.generate(secret, flux("d"), async), http.StatusAccepted)
	})
}

// TestRevokingProcessRefusesAtOnce: the process that revokes a key through
// DELETE /api/v1/keys/{id} has the key in its own memory (it served
// requests with it) and trusts that copy for an hour (--key-refresh), so
// only its own revocation can drop it: the very next request with the key,
// on the same process, is refused.
func TestRevokingProcessRefusesAtOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true, keyRefresh: time.Hour})
		h := s.holder(10, false)
		r := s.bySession(h, true, call{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"name": "cached"}})
		wantStatus(t, r, http.StatusCreated)
		secret, id := r.str("key"), r.str("id")
		if err := s.svc.Keys.Check(context.Background()); err != nil { // the counter read: copies trusted from now
			t.Fatal(err)
		}
		for range 3 {
			wantStatus(t, s.do(call{Method: "GET", Path: "/api/v1/account", Key: secret}), http.StatusOK)
		}
		if hits, _ := s.svc.Keys.Lookups(); hits == 0 {
			t.Fatal("the key was never served from memory; the test would prove nothing")
		}
		wantStatus(t, s.bySession(h, true, call{Method: "DELETE", Path: "/api/v1/keys/" + id}), http.StatusNoContent)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/account", Key: secret}), http.StatusUnauthorized, gengate.EUnauthorized)
		wantProblem(t, s.generate(secret, flux("after revoke"), async), http.StatusUnauthorized, gengate.EUnauthorized)
	})
}

// TestRevokedKeyRefusedEverywhere: two API processes on one database (each
// with its own connection pool and key cache); a key revoked through one is
// refused by that one at once, and by the other once its key cache has
// read the change counter (within --key-refresh; the test waits for it).
func TestRevokedKeyRefusedEverywhere(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		url, dir := sqltest.URL(t, dialect), t.TempDir()
		open := func() *sqlstore.DB {
			db, err := sqlstore.Open(context.Background(), url, dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		one := newStack(t, stackOpts{noWorkers: true, db: open()})
		two := newStack(t, stackOpts{noWorkers: true, db: open()})
		h := one.holder(10, false)
		r := one.bySession(h, true, call{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"name": "shared"}})
		wantStatus(t, r, http.StatusCreated)
		secret, id := r.str("key"), r.str("id")
		wantStatus(t, two.do(call{Method: "GET", Path: "/api/v1/account", Key: secret}), http.StatusOK)
		wantStatus(t, one.bySession(h, true, call{Method: "DELETE", Path: "/api/v1/keys/" + id}), http.StatusNoContent)
		wantProblem(t, one.do(call{Method: "GET", Path: "/api/v1/account", Key: secret}), http.StatusUnauthorized, gengate.EUnauthorized)
		waitFor(t, "the other process to refuse the revoked key", func() bool {
			r := two.do(call{Method: "GET", Path: "/api/v1/account", Key: secret})
			if r.Status != http.StatusOK && r.Status != http.StatusUnauthorized {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			return r.Status == http.StatusUnauthorized
		})
		wantProblem(t, two.do(call{Method: "GET", Path: "/api/v1/account", Key: secret}), http.StatusUnauthorized, gengate.EUnauthorized)
		wantProblem(t, two.generate(secret, flux("after revoke"), async), http.StatusUnauthorized, gengate.EUnauthorized)
		// The session made through one works through two, and its sign-out ends it in both.
		wantStatus(t, two.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"}), http.StatusOK)
		wantStatus(t, one.bySession(h, true, call{Method: "POST", Path: "/api/v1/auth/signout"}), http.StatusNoContent)
		wantProblem(t, two.bySession(h, false, call{Method: "GET", Path: "/api/v1/account"}), http.StatusUnauthorized, gengate.EUnauthorized)
	})
}
