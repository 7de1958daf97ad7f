package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// The answers every operation shares (no credentials, a session without
// its CSRF token, a database that fails, a body over the small-body cap),
// provoked on each documented operation in turn, so that the document's
// shared statuses are each produced by a real request (TestMain checks
// that every documented answer is).

// operation is one documented (method, path template) and whether it takes
// credentials.
type operation struct {
	method, path string
	auth         bool
	openAI       bool // answers in OpenAI's error shape
}

func documentedOperations(t *testing.T) []operation {
	t.Helper()
	c, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var ops []operation
	for p, item := range httpapi.OpenAPI(c)["paths"].(map[string]any) {
		for m, o := range item.(map[string]any) {
			sec, _ := o.(map[string]any)["security"].([]map[string]any)
			ops = append(ops, operation{method: strings.ToUpper(m), path: p, auth: len(sec) > 0, openAI: strings.HasPrefix(p, "/v1/")})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

// concrete fills a path template's parameters.
func concrete(tmpl, value string) string {
	parts := strings.Split(tmpl, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") {
			parts[i] = value
		}
	}
	return strings.Join(parts, "/")
}

// TestEveryOperationRefusesStrangers: every operation that takes
// credentials answers 401 (with WWW-Authenticate on the gengate API)
// without them, and every one that may change something answers 403
// CSRF_TOKEN_INVALID to a session cookie without its token; neither
// changes anything.
func TestEveryOperationRefusesStrangers(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	h := s.holder(100, true)
	id := wantAccepted(t, s.generate(h.key, flux("a cat"), async))
	before := s.balance(h.account)
	for _, op := range documentedOperations(t) {
		if !op.auth {
			continue
		}
		path := concrete(op.path, id)
		var body any
		if op.method != "GET" {
			body = map[string]any{}
		}
		r := s.do(call{Method: op.method, Path: path, Body: body})
		if op.openAI {
			wantStatus(t, r, http.StatusUnauthorized)
		} else {
			wantProblem(t, r, http.StatusUnauthorized, gengate.EUnauthorized)
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 without WWW-Authenticate", op.method, path)
			}
		}
		if op.method == "GET" || op.openAI { // the OpenAI endpoints take keys only
			continue
		}
		r = s.bySession(h, false, call{Method: op.method, Path: path, Body: body})
		wantProblem(t, r, http.StatusForbidden, gengate.ECSRF)
	}
	if s.balance(h.account) != before || s.taskCount() != 1 {
		t.Errorf("refused requests changed something: balance %d → %d, %d tasks", before, s.balance(h.account), s.taskCount())
	}
}

// TestEveryOperationDatabaseDown: when the database fails, every operation
// that reads it answers 500 INTERNAL (in OpenAI's shape on its endpoints),
// /readyz answers 503, and the answers say nothing of the failure but the
// request id.
func TestEveryOperationDatabaseDown(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, accounts: httpapi.AccountsConfig{OpenSignup: true}})
	s.withStripe("http://127.0.0.1:1") // topup_test.go: the webhook reaches the database
	h := s.holder(100, true)
	id := wantAccepted(t, s.generate(h.key, flux("a cat"), async))
	up := s.do(call{Method: "POST", Path: "/api/v1/files", Key: h.key, Body: testPNG(t, 8, 8), Header: map[string]string{"Content-Type": "image/png"}})
	wantStatus(t, up, http.StatusCreated)
	file := up.str("url")
	file = file[strings.Index(file, "/files/"):]
	// A key this process has not used yet: its check reads the database
	// (a used one may be served from the key cache).
	fresh, _, err := s.svc.CreateKey(context.Background(), h.account, "fresh", 0)
	if err != nil {
		t.Fatal(err)
	}

	// /readyz asks the database, as cmd/gengate's Ready does.
	ready := httptest.NewServer(httpapi.New(s.svc, httpapi.Config{Ready: func(ctx context.Context) error {
		return s.store.SQL().PingContext(ctx)
	}}, s.svc.Log))
	t.Cleanup(ready.Close)
	rs := &stack{t: t, URL: ready.URL, store: s.store, svc: s.svc}
	wantStatus(t, rs.do(call{Method: "GET", Path: "/readyz"}), http.StatusOK)

	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, rs.do(call{Method: "GET", Path: "/readyz"}), http.StatusServiceUnavailable)

	noDatabase := map[string]bool{"/healthz": true, "/readyz": true, "/api/v1/openapi.json": true, "/docs/api": true,
		"/metrics": true, "/api/v1/auth/config": true,
		"/files/in/{task}/{name}": true} // signed input URLs read only the file store
	for _, op := range documentedOperations(t) {
		if noDatabase[op.path] {
			continue
		}
		c := call{Method: op.method, Path: concrete(op.path, id)}
		if op.method != "GET" {
			c.Body = map[string]any{}
		}
		switch {
		case op.auth:
			c.Key = fresh
		case op.path == "/files/{name}":
			c.Path = file
		case op.path == "/api/v1/auth/signin", op.path == "/api/v1/auth/signup":
			c.Body = map[string]any{"email": "x" + h.email, "password": "a long enough password"}
		case op.path == "/api/v1/auth/link":
			c.Body = map[string]any{"token": gengate.NewToken(), "password": "a long enough password"}
		default: // the session endpoints
			c.Header = map[string]string{"Cookie": httpapi.SessionCookie + "=" + h.cookie, "X-CSRF-Token": h.csrf}
		}
		switch op.path {
		case "/api/generation/jobs/{id}", "/api/v1/quote", "/api/v1/generate":
			if op.method == "POST" {
				c.Body = flux("a cat")
			}
		case "/v1/images/generations":
			c.Body = map[string]any{"model": "flux", "prompt": "a cat"}
		case "/api/v1/stripe/webhook": // signed, so its grant reaches the database
			c = stripeEvent(t, testWebhookSecret, "evt_db", "checkout.session.completed", paidSession("cs_db", h.account, 100, "pi_db"), time.Now())
		}
		r := s.do(c)
		if op.openAI {
			wantStatus(t, r, http.StatusInternalServerError)
			continue
		}
		wantProblem(t, r, http.StatusInternalServerError, gengate.EInternal)
		if strings.Contains(strings.ToLower(r.str("detail")), "closed") {
			t.Errorf("%s %s: the answer tells the database error: %s", c.Method, c.Path, r.Body)
		}
	}
}

// TestEveryBodyOverTheSmallCap: the operations that read a small JSON body
// (keys, account area, operator) refuse one over --max-json-body (here 64
// KiB) with 413 PAYLOAD_TOO_LARGE, as a quote does one over the request
// body limit, and change nothing.
func TestEveryBodyOverTheSmallCap(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, accounts: httpapi.AccountsConfig{OpenSignup: true}, maxBody: 64 << 10, maxJSONBody: 64 << 10})
	h := s.holder(100, true)
	key := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "k"}})
	wantStatus(t, key, http.StatusCreated)
	keyID := key.str("id")
	big := `{"name": "` + strings.Repeat("x", 65<<10) + `"}`
	paths := map[string]string{
		"/api/v1/keys": "", "/api/v1/keys/{keyId}": keyID, "/api/v1/auth/signin": "", "/api/v1/auth/link": "", "/api/v1/auth/signup": "",
		"/api/v1/admin/accounts": "", "/api/v1/admin/accounts/{id}/credits": h.account, "/api/v1/admin/accounts/{id}/link": h.account,
		"/api/v1/admin/review/{jobId}": gengate.NewID(), "/api/v1/quote": "",
		"/api/v1/account/redeem": "", "/api/v1/admin/codes": "", "/api/v1/account/checkout": "",
	}
	before := s.balance(h.account)
	for _, op := range documentedOperations(t) {
		v, ok := paths[op.path]
		if !ok || op.method == "GET" || op.method == "DELETE" {
			continue
		}
		c := call{Method: op.method, Path: concrete(op.path, v), Body: big}
		if op.auth {
			c.Key = h.key
		}
		wantProblem(t, s.do(c), http.StatusRequestEntityTooLarge, gengate.ETooLarge)
	}
	if s.balance(h.account) != before {
		t.Errorf("balance %d → %d", before, s.balance(h.account))
	}
}

// failTask ends a task as a worker whose upstream failed would: failed
// with reason code, refunded, through the store.
func (s *stack) failTask(id, code string, inputFault bool) {
	s.t.Helper()
	ctx := context.Background()
	task, err := s.store.ClaimTask(ctx, id, "test-worker", time.Now(), time.Minute)
	if err != nil || task == nil {
		s.t.Fatalf("claim %s: %v", id, err)
	}
	task.Status, task.ErrorCode, task.ErrorMessage, task.InputFault = gengate.StatusFailed, code, "the upstream said no", inputFault
	task.UpdatedAt, task.CompletedAt = time.Now(), time.Now()
	if err := s.store.FinishTask(ctx, task, task.Cost); err != nil {
		s.t.Fatal(err)
	}
}

// TestFailedTaskAnswers: a task that failed answers its statusUrl and a
// generate retried with its Idempotency-Key by the failure's status: 422
// when its input was at fault, 504 past the deadline, 502 for the
// upstream's failure; each refunded once.
func TestFailedTaskAnswers(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(100, false)
		for _, c := range []struct {
			code       string
			inputFault bool
			status     int
		}{
			{gengate.CodeRejectedInput, true, http.StatusUnprocessableEntity},
			{gengate.CodeDeadline, false, http.StatusGatewayTimeout},
			{gengate.CodeUpstream, false, http.StatusBadGateway},
		} {
			idem := map[string]string{"Prefer": "respond-async", "Idempotency-Key": "k-" + c.code}
			id := wantAccepted(t, s.generate(h.key, flux("a cat"), idem))
			s.failTask(id, c.code, c.inputFault)
			r := s.do(call{Method: "POST", Path: jobPath(id), Key: h.key})
			wantProblem(t, r, c.status, gengate.EFailed)
			if r.JSON["refunded"] != true || r.num("remainingCredits") != 100 {
				t.Errorf("%s: %s", c.code, r.Body)
			}
			wantProblem(t, s.generate(h.key, flux("a cat"), idem), c.status, gengate.EFailed)
		}
		if refunds := charges(s.ledgerCheck(h.account), gengate.LedgerRefund); len(refunds) != 3 {
			t.Errorf("refunds %v, want one per task", refunds)
		}
	})
}

// TestOperatorAnswers: the operator endpoints refuse a member who is not
// an operator (403 FORBIDDEN), name unknown accounts and tasks (404),
// refuse bad bodies (400) and a settle of a task not in review (409); none
// changes anything.
func TestOperatorAnswers(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	op := s.holder(100, true)
	member := s.holder(100, false)
	id := wantAccepted(t, s.generate(member.key, flux("a cat"), async))
	for _, o := range documentedOperations(t) {
		if !strings.HasPrefix(o.path, "/api/v1/admin/") {
			continue
		}
		c := call{Method: o.method, Path: concrete(o.path, member.account), Key: member.key}
		if o.method == "POST" {
			c.Body = map[string]any{}
		}
		wantProblem(t, s.do(c), http.StatusForbidden, gengate.EForbidden)
	}
	unknown := gengate.NewID()
	wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/admin/accounts/" + unknown, Key: op.key}), http.StatusNotFound, gengate.ENotFound)
	// One account's tasks and ledger, as the operator reads them: the
	// member's, not the operator's own.
	for _, list := range []string{"tasks", "ledger"} {
		path := "/api/v1/admin/accounts/" + member.account + "/" + list
		r := s.do(call{Method: "GET", Path: path, Key: op.key})
		wantStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.Body), id) {
			t.Errorf("GET %s does not name the member's task %s: %s", path, id, r.Body)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: path + "?limit=many", Key: op.key}), http.StatusBadRequest, gengate.EInvalid)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/admin/accounts/" + unknown + "/" + list, Key: op.key}),
			http.StatusNotFound, gengate.ENotFound)
	}
	wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/admin/accounts/" + unknown + "/credits", Key: op.key,
		Body: map[string]any{"credits": 5, "note": "x"}}), http.StatusNotFound, gengate.ENotFound)
	wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/admin/review/" + unknown, Key: op.key,
		Body: map[string]any{"action": "refund"}}), http.StatusNotFound, gengate.ENotFound)
	wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/admin/review/" + id, Key: op.key,
		Body: map[string]any{"action": "refund"}}), http.StatusConflict, gengate.EConflict)
	for _, c := range []call{
		{Method: "POST", Path: "/api/v1/admin/accounts", Body: map[string]any{"email": "not an address"}},
		{Method: "POST", Path: "/api/v1/admin/accounts/" + member.account + "/credits", Body: map[string]any{"amount": "many"}},
		{Method: "POST", Path: "/api/v1/admin/accounts/" + member.account + "/link", Body: map[string]any{"nonsense": true}},
		{Method: "POST", Path: "/api/v1/admin/review/" + id, Body: map[string]any{"action": "forget"}},
		{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"spendLimit": 0}},
		{Method: "GET", Path: "/api/v1/quote?modelId=flux&numOutputs=many"},
	} {
		c.Key = op.key
		wantProblem(t, s.do(c), http.StatusBadRequest, gengate.EInvalid)
	}
	wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/auth/signin", Body: map[string]any{"user": "x"}}), http.StatusBadRequest, gengate.EInvalid)
	if s.balance(member.account) != 96 || s.balance(op.account) != 100 {
		t.Errorf("balances %d and %d", s.balance(member.account), s.balance(op.account))
	}
}

// TestSmallAnswers: /healthz, a conditional download (304), and an upload
// over the rate limit (429).
func TestSmallAnswers(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, rateLimit: 0.001, rateBurst: 1})
	h := s.holder(100, false)
	r := s.do(call{Method: "GET", Path: "/healthz"})
	wantStatus(t, r, http.StatusOK)
	if r.str("status") != "ok" {
		t.Errorf("healthz: %s", r.Body)
	}

	up := s.do(call{Method: "POST", Path: "/api/v1/files", Key: h.key, Body: testPNG(t, 8, 8), Header: map[string]string{"Content-Type": "image/png"}})
	wantStatus(t, up, http.StatusCreated)
	file := up.str("url")
	file = file[strings.Index(file, "/files/"):]
	first := s.do(call{Method: "GET", Path: file})
	wantStatus(t, first, http.StatusOK)
	modified := first.Header.Get("Last-Modified")
	if modified == "" {
		t.Fatal("a file without Last-Modified")
	}
	again := s.do(call{Method: "GET", Path: file, Header: map[string]string{"If-Modified-Since": modified}})
	wantStatus(t, again, http.StatusNotModified)
	if len(again.Body) != 0 {
		t.Errorf("a 304 with a body of %d bytes", len(again.Body))
	}
	over := s.do(call{Method: "POST", Path: "/api/v1/files", Key: h.key, Body: testPNG(t, 8, 8), Header: map[string]string{"Content-Type": "image/png"}})
	wantProblem(t, over, http.StatusTooManyRequests, gengate.ERateLimited)
	if over.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}
