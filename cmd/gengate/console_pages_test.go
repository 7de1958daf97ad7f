package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stripe/stripe-go/v85/webhook"
)

// signInCookie signs in through the API as a program would (its own
// cookie jar, not the browser's) and returns the session cookie to send.
func signInCookie(t *testing.T, base, email, password string) string {
	t.Helper()
	r := mustAPI(t, base, "POST", "/api/v1/auth/signin", "", map[string]any{"email": email, "password": password}, nil)
	wantCode(t, r, http.StatusOK)
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "gengate_session" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("sign-in set no session cookie: %v", r.header)
	return ""
}

// sessionStatus is what GET /api/v1/account answers the session cookie.
func sessionStatus(t *testing.T, base, cookie string) int {
	t.Helper()
	return mustAPI(t, base, "GET", "/api/v1/account", "", nil, map[string]string{"Cookie": cookie}).status
}

// TestConsoleAccountPage: a holder's #/account shows the account and its
// members; a password change with a wrong current password is refused
// next to the form (the page stays signed in); the right one ends the
// member's session in another cookie jar while the console's stays; "Sign
// out everywhere" (two clicks) ends every session, the console's and the
// other jar's.
func TestConsoleAccountPage(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0")
	base := p.base
	link := setupLink(t, dir, base, "ann@example.com", 100, false)
	b := startBrowser(t)
	b.useLink(link, "first password 1")
	other := signInCookie(t, base, "ann@example.com", "first password 1")
	if got := sessionStatus(t, base, other); got != http.StatusOK {
		t.Fatalf("the other session answers %d", got)
	}

	// Reached from the navigation.
	b.click(`nav a[href="#/account"]`)
	b.do("the account page", chromedp.WaitVisible(chromedp.CSS("#password-form")))
	if got := b.text("#account-info"); !strings.Contains(got, "ann@example.com") {
		t.Errorf("the account card shows %q", got)
	}
	if got := b.text("#account-members"); !strings.Contains(got, "ann@example.com") || !strings.Contains(got, "owner") {
		t.Errorf("the members show %q", got)
	}
	b.shot("account")

	// A wrong current password: refused beside the form, still signed in.
	b.fill("#password-form input[name=currentPassword]", "not my password")
	b.fill("#password-form input[name=password]", "second password 2")
	b.fill("#password-form input[name=confirm]", "second password 2")
	b.click("#password-form button[type=submit]")
	b.do("the refusal", chromedp.WaitVisible(chromedp.CSS("#password-form .problem")))
	if got := b.text("#password-form .problem"); !strings.Contains(got, "current password is wrong") {
		t.Errorf("wrong current password shows %q", got)
	}
	if b.count("#signin-form") != 0 || b.count("#password-form") != 1 {
		t.Fatalf("a wrong current password left the page:\n%s", b.pageState())
	}
	if got := sessionStatus(t, base, other); got != http.StatusOK {
		t.Fatalf("a refused change ended the other session: %d", got)
	}

	// The right one: the other session ends, this one stays.
	b.fill("#password-form input[name=currentPassword]", "first password 1")
	b.fill("#password-form input[name=password]", "second password 2")
	b.fill("#password-form input[name=confirm]", "second password 2")
	b.click("#password-form button[type=submit]")
	b.do("changed", chromedp.WaitVisible(chromedp.CSS("#password-done .note")))
	if got := sessionStatus(t, base, other); got != http.StatusUnauthorized {
		t.Errorf("after the change the other session answers %d, want 401", got)
	}
	if got := evalIn[int](b, `fetch('/api/v1/account').then(r => r.status)`, chromedp.EvalAwaitPromise); got != http.StatusOK {
		t.Errorf("after the change the console's session answers %d", got)
	}

	// Sign out everywhere: the first click arms, the second ends every
	// session, and the console is back at the sign-in form.
	other = signInCookie(t, base, "ann@example.com", "second password 2")
	b.click("#signout-all")
	b.waitFor("armed", `document.querySelector('#signout-all').dataset.armed === 'true'`)
	if got := sessionStatus(t, base, other); got != http.StatusOK {
		t.Fatalf("one click ended the sessions: %d", got)
	}
	b.click("#signout-all")
	b.do("signed out", chromedp.WaitVisible(chromedp.CSS("#signin-form")))
	if got := sessionStatus(t, base, other); got != http.StatusUnauthorized {
		t.Errorf("after sign out everywhere the other session answers %d, want 401", got)
	}
	if got := evalIn[int](b, `fetch('/api/v1/auth/session').then(r => r.status)`, chromedp.EvalAwaitPromise); got != http.StatusUnauthorized {
		t.Errorf("after sign out everywhere the console's session answers %d", got)
	}
	b.noErrors()
}

// newKey makes an API key on the console's keys page and returns its secret.
func (b *browser) newKey(base, name string) string {
	b.t.Helper()
	b.open(base, "#/keys", "#key-form")
	b.fill("#key-form input[name=name]", name)
	b.click("#key-form button[type=submit]")
	b.do("the new key", chromedp.WaitVisible(chromedp.CSS("#key-created .secret-value")))
	return b.text("#key-created .secret-value")
}

// TestConsoleCancelTask: a processing task's page counts its elapsed time
// and has Cancel; the first click says what the cancel refunds (the task
// runs here, on the sandbox: all of it), the second cancels; the page then
// says what was refunded, claims neither outputs nor a cost it did not
// keep, and the balance is whole again; the focus, its button gone, is on
// the heading; Run again fills the playground with its settings. The
// status filter has canceled; the list says what the canceled task
// refunded, and the ledger says its charge and refund in words.
func TestConsoleCancelTask(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--sandbox-delay", "1h")
	base := p.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "cal@example.com", 100, false), "cancel password 1")
	key := b.newKey(base, "cancel")
	r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a slow fox", "aspectRatio": "16:9"}, map[string]string{"Prefer": "respond-async"})
	wantCode(t, r, http.StatusAccepted)
	id := r.str("jobId")
	balance := func() int { return mustAPI(t, base, "GET", "/api/v1/account", key, nil, nil).num("remainingCredits") }
	if got := balance(); got >= 100 {
		t.Fatalf("balance %d after submitting: nothing held", got)
	}

	b.open(base, "#/tasks", "#tasks-list tbody tr")
	if got := evalIn[[]string](b, `Array.from(document.querySelectorAll('#filter-status option')).map(o => o.value)`); !strings.Contains(strings.Join(got, ","), "canceled") {
		t.Errorf("status filter options %v lack canceled", got)
	}
	if got := b.text("#tasks-list tbody tr"); !strings.Contains(got, "a slow fox") {
		t.Errorf("the task's row does not show its prompt: %q", got)
	}
	b.click("#tasks-list tbody tr a")
	b.do("the task page", chromedp.WaitVisible(chromedp.CSS("#task-cancel")))
	first := b.text("#task-elapsed")
	b.waitFor("the elapsed time counting", `document.querySelector('#task-elapsed').textContent !== `+js(first))
	b.click("#task-cancel")
	b.do("the cancel rule", chromedp.WaitVisible(chromedp.CSS("#cancel-rule")))
	if got := b.text("#cancel-rule"); !strings.Contains(got, "refunds its 4 credits in full") {
		t.Errorf("before canceling the page says %q", got)
	}
	if got := mustAPI(t, base, "GET", "/api/generation/jobs/"+id, key, nil, nil).str("status"); got != "processing" {
		t.Fatalf("one click canceled: %s", got)
	}
	b.shot("task-cancel")
	b.click("#task-cancel")
	b.do("the cancel's outcome", chromedp.WaitVisible(chromedp.CSS("#cancel-outcome")))
	if got := b.text("#cancel-outcome"); !strings.Contains(got, "4 credits refunded") || !strings.Contains(got, "Balance: 100 credits") {
		t.Errorf("after canceling the page says %q", got)
	}
	// The page drawn anew keeps the focus in it (the button pressed is
	// gone): on its heading, not lost to the document's body.
	if got := evalIn[string](b, `document.activeElement.tagName`); got != "H1" {
		t.Errorf("after the cancel the focus is on %s, not the page's heading", got)
	}
	if got := mustAPI(t, base, "GET", "/api/generation/jobs/"+id, key, nil, nil).str("status"); got != "canceled" {
		t.Errorf("the task is %s after the cancel", got)
	}
	if got := balance(); got != 100 {
		t.Errorf("balance %d after the cancel, want 100", got)
	}
	if got := b.text(".title-row .badge"); got != "canceled" {
		t.Errorf("status badge %q", got)
	}
	if got := b.text("#task-cost"); !strings.Contains(got, "refunded") {
		t.Errorf("a refunded task's cost reads %q", got)
	}
	if got := b.text("#task-no-outputs"); !strings.Contains(got, "canceled") {
		t.Errorf("outputs of a canceled task: %q", got)
	}
	if text := evalIn[string](b, `document.querySelector('#main').innerText`); strings.Contains(text, "made this task's outputs") {
		t.Errorf("a canceled task claims the sandbox made its outputs:\n%s", text)
	}
	if b.count("#task-cancel") != 0 {
		t.Errorf("a canceled task still offers Cancel")
	}
	if got := b.text("#main .grid2"); !strings.Contains(got, "Aspect ratio") || strings.Contains(got, "aspectRatio") ||
		!strings.Contains(got, "Number of outputs") || strings.Contains(got, "Num ") {
		t.Errorf("the task's options are not named in words: %q", got)
	}
	// Run again: the playground with the task's prompt and options.
	b.click("#task-rerun")
	b.do("the playground", chromedp.WaitVisible(chromedp.CSS("#pg-form")))
	b.waitFor("the task's settings", `document.querySelector('#pg-prompt').value === 'a slow fox' && document.querySelector('#pg-opt-aspectRatio').value === '16:9'`)

	b.open(base, "#/tasks?status=canceled", "#tasks-list tbody tr")
	if got := b.count("#tasks-list tbody tr"); got != 1 {
		t.Errorf("%d canceled tasks listed, want 1", got)
	}
	// Its cost in the list: what was refunded, not "0 refunded".
	if got := b.text("#tasks-list tbody tr td:last-child"); !strings.Contains(got, "4 refunded") {
		t.Errorf("the canceled task's cost in the list reads %q", got)
	}
	// The ledger says what each entry was in words: the model's name for
	// the charge, what happened for the refund; no model id, no code.
	b.open(base, "#/ledger", "#ledger tbody tr")
	notes := evalIn[[]string](b, `Array.from(document.querySelectorAll('#ledger td[data-label=Note]')).map(td => td.innerText)`)
	if joined := strings.Join(notes, " | "); !strings.Contains(joined, "FLUX.1 [dev]") || !strings.Contains(joined, "Canceled") ||
		slices.ContainsFunc(notes, func(n string) bool { return n == "flux" || regexp.MustCompile(`^[A-Z_]+$`).MatchString(n) }) {
		t.Errorf("the ledger's notes read %q", joined)
	}
	b.noErrors()
}

// consoleHookReceiver is a webhook endpoint the test controls: it answers with
// status and keeps every delivery.
type consoleHookReceiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []hookDelivery
}

type hookDelivery struct {
	id, timestamp, signature string
	body                     []byte
}

func newConsoleHook(t *testing.T) *consoleHookReceiver {
	rc := &consoleHookReceiver{}
	rc.status.Store(500)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, hookDelivery{r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body})
		rc.mu.Unlock()
		w.WriteHeader(int(rc.status.Load()))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *consoleHookReceiver) deliveries() []hookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookDelivery(nil), rc.got...)
}

// signedBy reports whether the delivery's n-th signature (Standard
// Webhooks: v1,<base64 HMAC-SHA256 of id.timestamp.body>, keyed by the
// base64 part of whsec_...) is the secret's.
func (d hookDelivery) signedBy(t *testing.T, secret string, n int) bool {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(d.id + "." + d.timestamp + "." + string(d.body)))
	sigs := strings.Fields(d.signature)
	return n < len(sigs) && sigs[n] == "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestConsoleWebhooks: on #/webhooks a holder adds an endpoint for one
// event type (the secret shows once and signs the deliveries); the
// endpoint's attempts page shows a refused attempt with its HTTP status,
// then the retry delivered; after a rotation (the new secret shows once)
// Replay sends the event again, signed by the new secret first, and the
// page shows the new attempt (the focus kept on its heading); Delete
// removes the endpoint.
func TestConsoleWebhooks(t *testing.T) {
	chromiumPath(t)
	rc := newConsoleHook(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--allow-private-inputs", "--webhook-retry-delays", "1s,1s,1s")
	base := p.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "hook@example.com", 100, false), "webhook password 1")
	key := b.newKey(base, "hooks")

	b.click(`nav a[href="#/webhooks"]`)
	b.do("the webhooks page", chromedp.WaitVisible(chromedp.CSS("#webhook-form")))
	if b.count("#webhooks-list .empty") != 1 {
		t.Errorf("a new account lists endpoints")
	}
	b.fill("#webhook-form input[name=url]", rc.URL+"/hook")
	for _, ev := range []string{"failed", "needs_review", "canceled"} {
		b.click("#ev-generation-" + ev)
	}
	b.click("#webhook-form button[type=submit]")
	b.do("the secret", chromedp.WaitVisible(chromedp.CSS("#webhook-created .secret-value")))
	secret := b.text("#webhook-created .secret-value")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the secret shown is %q", secret)
	}
	b.waitFor("the endpoint listed", `document.querySelectorAll('#webhooks-list .endpoint').length === 1`)
	if got := b.text("#webhooks-list .endpoint"); !strings.Contains(got, "generation.succeeded") || strings.Contains(got, "generation.failed") {
		t.Errorf("the endpoint's event types read %q", got)
	}
	eps := mustAPI(t, base, "GET", "/api/v1/webhooks", key, nil, nil)
	list, _ := eps.json["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("endpoints: %s", eps.body)
	}
	epID := list[0].(map[string]any)["id"].(string)
	if strings.Contains(string(eps.body), secret) {
		t.Errorf("the list answers the secret")
	}
	b.shot("webhooks")

	// A task succeeds: the first attempt is refused (500), the page shows it.
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a hooked fish"}, nil), http.StatusOK)
	poll(t, 30*time.Second, 20*time.Millisecond, "the first delivery", func() bool { return len(rc.deliveries()) >= 1 })
	first := rc.deliveries()[0]
	if !first.signedBy(t, secret, 0) {
		t.Errorf("the delivery %q is not signed by the secret shown", first.signature)
	}
	b.click(`#webhooks-list a[data-action=attempts]`)
	b.do("the attempts", chromedp.WaitVisible(chromedp.CSS("#attempts-list tbody tr")))
	if got := b.text("#attempts-list tbody tr .http-status"); got != "500" {
		t.Errorf("the refused attempt shows HTTP status %q", got)
	}
	rc.status.Store(200)
	poll(t, 30*time.Second, 20*time.Millisecond, "the retry delivered", func() bool {
		r := mustAPI(t, base, "GET", "/api/v1/webhooks/"+epID+"/attempts", key, nil, nil)
		return strings.Contains(string(r.body), `"eventStatus":"delivered"`)
	})
	// (The page shows what it read: open it again from the list.)
	b.open(base, "#/webhooks", "#webhooks-list .endpoint")
	b.click(`#webhooks-list a[data-action=attempts]`)
	b.do("the attempts again", chromedp.WaitVisible(chromedp.CSS("#attempts-list tbody tr")))
	if got := b.text("#attempts-list tbody tr .http-status"); got != "200" {
		t.Errorf("the newest attempt shows HTTP status %q", got)
	}
	if got := b.text("#attempts-list tbody tr .badge"); got != "delivered" {
		t.Errorf("the event's status reads %q", got)
	}
	rows := b.count("#attempts-list tbody tr")
	b.shot("webhook-attempts")

	// Rotate: the new secret shows once; a replay is signed by it first.
	b.open(base, "#/webhooks", "#webhooks-list .endpoint")
	b.click("#webhooks-list button[data-action=rotate]")
	b.waitFor("armed", `document.querySelector('#webhooks-list button[data-action=rotate]').dataset.armed === 'true'`)
	b.click("#webhooks-list button[data-action=rotate]")
	b.do("the new secret", chromedp.WaitVisible(chromedp.CSS("#webhooks-list .secret-value")))
	rotated := b.text("#webhooks-list .secret-value")
	if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Fatalf("rotated secret %q (was %q)", rotated, secret)
	}
	before := len(rc.deliveries())
	b.click(`#webhooks-list a[data-action=attempts]`)
	b.do("the attempts after the rotation", chromedp.WaitVisible(chromedp.CSS("#attempts-list tbody tr")))
	b.waitFor("the attempts as before", `document.querySelectorAll('#attempts-list tbody tr').length === `+itoa(rows))
	b.click("#attempts-list button[data-action=replay]")
	b.waitFor("the replay's attempt listed", `document.querySelectorAll('#attempts-list tbody tr').length === `+itoa(rows+1)+
		` && document.querySelector('#replay-status').innerText.includes('HTTP 200')`)
	// The list drawn anew with the replay's attempt keeps the focus in
	// the page: on its heading, not lost to the document's body.
	if got := evalIn[string](b, `document.activeElement.tagName`); got != "H1" {
		t.Errorf("after the replay the focus is on %s, not the page's heading", got)
	}
	ds := rc.deliveries()
	if len(ds) != before+1 {
		t.Fatalf("%d deliveries after the replay, want %d", len(ds), before+1)
	}
	last := ds[len(ds)-1]
	if last.id != first.id || !last.signedBy(t, rotated, 0) || !last.signedBy(t, secret, 1) {
		t.Errorf("the replay: id %s (first %s), signatures %q", last.id, first.id, last.signature)
	}

	// The account's own secret, shown on demand.
	b.open(base, "#/webhooks", "#account-secret-show")
	b.click("#account-secret-show")
	b.do("the account secret", chromedp.WaitVisible(chromedp.CSS("#account-secret .secret-value")))
	if got, want := b.text("#account-secret .secret-value"), mustAPI(t, base, "GET", "/api/v1/webhooks/secret", key, nil, nil).str("secret"); got != want {
		t.Errorf("account secret shown %q, API %q", got, want)
	}

	// Delete: two clicks.
	b.click("#webhooks-list button[data-action=delete]")
	b.click("#webhooks-list button[data-action=delete]")
	b.do("no endpoint left", chromedp.WaitVisible(chromedp.CSS("#webhooks-list .empty")))
	if got := mustAPI(t, base, "GET", "/api/v1/webhooks", key, nil, nil); strings.Contains(string(got.body), epID) {
		t.Errorf("the deleted endpoint is still listed: %s", got.body)
	}
	b.noErrors()
}

// fakeCheckout is Stripe's API as far as the console's "Buy credits" uses
// it: POST /v1/checkout/sessions (form-encoded, per Stripe's API reference
// "Create a Checkout Session") answers a session whose url is this
// server's own /pay/<id> page, which sends the buyer to the session's
// success_url as Stripe's hosted page does after a payment.
type fakeCheckout struct {
	*httptest.Server
	mu       sync.Mutex
	sessions []map[string]string // the form of each session created
}

func newFakeCheckout(t *testing.T) *fakeCheckout {
	f := &fakeCheckout{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/checkout/sessions":
			_ = r.ParseForm()
			form := map[string]string{}
			for k, v := range r.PostForm {
				form[k] = v[0]
			}
			f.mu.Lock()
			f.sessions = append(f.sessions, form)
			id := "cs_test_console" + itoa(len(f.sessions))
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"`+id+`","object":"checkout.session","mode":"payment","url":"`+f.URL+`/pay/`+id+`"}`)
		case strings.HasPrefix(r.URL.Path, "/pay/"):
			f.mu.Lock()
			success := f.sessions[len(f.sessions)-1]["success_url"]
			f.mu.Unlock()
			http.Redirect(w, r, success, http.StatusSeeOther)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCheckout) created() []map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]string(nil), f.sessions...)
}

// TestConsoleSelling: without Stripe the overview has no "Buy credits";
// with it, Buy credits shows the price, goes through the checkout page
// and back, and once Stripe's signed event arrives the ledger shows the
// purchase. An operator makes a redemption code in the console (shown
// once); the holder redeems it on the overview, once. The spend chart
// draws the day's spending by model and by key, and its download buttons
// answer CSV.
func TestConsoleSelling(t *testing.T) {
	chromiumPath(t)
	b := startBrowser(t)

	// No Stripe: no Buy credits, only the code box.
	plainDir := t.TempDir()
	plain := startProcess(t, "--data", plainDir, "--addr", "127.0.0.1:0")
	b.useLink(setupLink(t, plainDir, plain.base, "plain@example.com", 10, false), "plain password 1")
	b.do("the redeem box", chromedp.WaitVisible(chromedp.CSS("#redeem-form")))
	if b.count("#buy-form") != 0 {
		t.Errorf("Buy credits shows on a server without Stripe")
	}

	stripe := newFakeCheckout(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--stripe-secret-key", "sk_test_console", "--stripe-webhook-secret", "whsec_console",
		"--stripe-api-url", stripe.URL, "--credit-price", "0.01", "--currency", "usd")
	base := p.base
	b.useLink(setupLink(t, dir, base, "buyer@example.com", 100, false), "buyer password 1")
	b.do("Buy credits", chromedp.WaitVisible(chromedp.CSS("#buy-form")))
	b.fill("#buy-credits", "1000")
	b.waitFor("the price", `document.querySelector('#buy-price').textContent === '10.00 USD'`)
	b.shot("overview-buy")
	b.click("#buy-button")
	// The page leaves for the checkout and comes back: wait for the note
	// of the page it comes back to (a poll would die with the first page).
	b.do("back from the checkout", chromedp.WaitVisible(chromedp.CSS("#checkout-note")))
	if loc := evalIn[string](b, `location.href`); !strings.HasPrefix(loc, base+"/#/?checkout=success") {
		t.Errorf("back at %s", loc)
	}
	sessions := stripe.created()
	if len(sessions) != 1 || sessions[0]["mode"] != "payment" || sessions[0]["line_items[0][quantity]"] != "1000" {
		t.Fatalf("checkout sessions: %v", sessions)
	}
	account := sessions[0]["client_reference_id"]
	event, _ := json.Marshal(map[string]any{"id": "evt_console", "object": "event", "type": "checkout.session.completed", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{"id": "cs_test_console1", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
			"client_reference_id": account, "metadata": map[string]string{"gengate_account": account, "gengate_credits": "1000"}}}})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: event, Secret: "whsec_console"})
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/stripe/webhook", "", json.RawMessage(event), map[string]string{"Stripe-Signature": signed.Header}), http.StatusOK)
	b.open(base, "#/ledger", "#ledger tbody tr")
	b.waitFor("the purchase", `document.querySelectorAll('#ledger tbody tr').length === 2`)
	if got := b.text("#ledger tbody tr"); !strings.Contains(got, "purchase") || !strings.Contains(got, "+1,000") {
		t.Errorf("the newest ledger entry reads %q", got)
	}
	b.signOut()

	// An operator makes a code; it shows once.
	b.useLink(setupLink(t, dir, base, "op@example.com", 0, true), "operator password 1")
	b.open(base, "#/admin/accounts", "#codes-form")
	b.fill("#codes-form input[name=credits]", "250")
	b.fill("#codes-form input[name=count]", "1")
	b.click("#codes-form button[type=submit]")
	b.do("the code", chromedp.WaitVisible(chromedp.CSS("#codes-made .secret-value")))
	code := strings.TrimSpace(b.text("#codes-made .secret-value"))
	if len(code) < 12 {
		t.Fatalf("the code shown is %q", code)
	}
	b.signOut()

	// The holder redeems it on the overview, once.
	b.open(base, "#/signin", "#signin-form")
	b.fill("#signin-form input[name=email]", "buyer@example.com")
	b.fill("#signin-form input[name=password]", "buyer password 1")
	b.click("#signin-form button[type=submit]")
	b.do("signed in", chromedp.WaitVisible(chromedp.CSS("#redeem-form")))
	if got := num(b.text("#overview-balance")); got != 1100 {
		t.Errorf("balance %d after the purchase, want 1100", got)
	}
	b.fill("#redeem-code", code)
	b.click("#redeem-button")
	b.do("redeemed", chromedp.WaitVisible(chromedp.CSS("#redeem-done .note")))
	if got := num(b.text("#overview-balance")); got != 1350 {
		t.Errorf("balance %d after redeeming 250, want 1350", got)
	}
	b.fill("#redeem-code", code)
	b.click("#redeem-button")
	b.do("the second try refused", chromedp.WaitVisible(chromedp.CSS("#credits-card .problem")))
	if b.count("#redeem-done .note") != 0 {
		t.Errorf("the earlier success note stays beside the refusal")
	}
	if got := evalIn[int](b, `fetch('/api/v1/account').then(r => r.json()).then(a => a.remainingCredits)`, chromedp.EvalAwaitPromise); got != 1350 {
		t.Errorf("balance %d after a used code, want 1350", got)
	}

	// Spend: a generation with a key shows in the chart, by model and by key.
	key := b.newKey(base, "chart")
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a chart"}, nil), http.StatusOK)
	b.open(base, "#/", "#daychart")
	b.waitFor("today's bar", `Array.from(document.querySelectorAll('#daychart .daybar')).some(b => b.title.includes('4 credits') && b.title.includes('FLUX'))`)
	b.choose("#daychart-by", "keyId")
	b.waitFor("today's bar by key", `Array.from(document.querySelectorAll('#daychart .daybar')).some(b => b.title.includes('4 credits') && !b.title.includes('FLUX'))`)
	b.choose("#daychart-days", "90")
	b.waitFor("90 days", `document.querySelectorAll('#daychart .daybar').length === 90`)
	b.shot("overview-spend")
	for _, sel := range []string{"#daychart-csv", "#daychart-ledger-csv", "#daychart-tasks-csv"} {
		got := evalIn[string](b, `(async () => { const r = await fetch(document.querySelector(`+js(sel)+`).href);
			return r.headers.get('Content-Type') + '\n' + (await r.text()); })()`, chromedp.EvalAwaitPromise)
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if !strings.HasPrefix(lines[0], "text/csv") || len(lines) < 3 {
			t.Errorf("%s downloads %q", sel, got)
		}
	}
	b.noErrors()
}

// TestConsoleOperatorAccount: an operator's page of an account shows its
// members, its tasks (with their prompts and thumbnails) and its ledger; the lists behind
// it refuse a holder's key.
func TestConsoleOperatorAccount(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0")
	base := p.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "held@example.com", 100, false), "holder password 1")
	key := b.newKey(base, "ops")
	for _, prompt := range []string{"first red kite", "second red kite"} {
		wantCode(t, mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": prompt}, nil), http.StatusOK)
	}
	account := mustAPI(t, base, "GET", "/api/v1/account", key, nil, nil).str("id")
	for _, list := range []string{"tasks", "ledger"} {
		if got := mustAPI(t, base, "GET", "/api/v1/admin/accounts/"+account+"/"+list, key, nil, nil); got.status != http.StatusForbidden {
			t.Errorf("a holder's key reads the operator's %s list: %d", list, got.status)
		}
	}
	b.signOut()

	b.useLink(setupLink(t, dir, base, "boss@example.com", 0, true), "operator password 1")
	b.open(base, "#/admin/accounts?q=held", "#accounts-list tbody tr")
	b.click("#accounts-list tbody tr a")
	b.do("the account's tasks", chromedp.WaitVisible(chromedp.CSS("#admin-tasks tbody tr")))
	b.waitFor("two tasks and three ledger entries", `document.querySelectorAll('#admin-tasks tbody tr').length === 2 && document.querySelectorAll('#admin-ledger tbody tr').length === 3`)
	if got := b.text("#admin-tasks"); !strings.Contains(got, "second red kite") || !strings.Contains(got, "first red kite") {
		t.Errorf("the account's tasks read %q", got)
	}
	if n := b.count("#admin-tasks tbody tr img.thumb"); n != 2 {
		t.Errorf("%d of the account's two finished tasks show a thumbnail", n)
	}
	if got := b.text("#admin-ledger"); strings.Count(got, "charge") != 2 || !strings.Contains(got, "grant") {
		t.Errorf("the account's ledger reads %q", got)
	}
	if got := evalIn[string](b, `document.querySelector('#main').innerText`); !strings.Contains(got, "held@example.com") {
		t.Errorf("the account's members are not shown")
	}
	accountHash := evalIn[string](b, `location.hash`)

	// The operator's pages on a phone: nothing past the screen's edge, no
	// table scrolling sideways, every field labelled.
	b.do("a phone", chromedp.EmulateViewport(390, 844))
	for _, pg := range []struct{ hash, ready string }{{"#/admin/accounts", "#accounts-list tbody tr"}, {accountHash, "#admin-ledger tbody tr"},
		{"#/admin/review", "#review-empty"}, {"#/admin/engines", ".engine"}} {
		evalIn[chromedp.Void](b, `location.hash = `+js(pg.hash))
		b.do("open "+pg.hash, chromedp.WaitVisible(chromedp.CSS(pg.ready)))
		b.waitFor("the focus on the heading of "+pg.hash, `document.activeElement && document.activeElement.tagName === 'H1'`)
		if bad := evalIn[[]string](b, overflowJS); len(bad) > 0 {
			t.Errorf("%s at 390 px: %v", pg.hash, bad)
		}
		if bad := evalIn[[]string](b, unlabelledJS); len(bad) > 0 {
			t.Errorf("%s: fields without a label: %v", pg.hash, bad)
		}
	}
	b.noErrors()
}

// overflowJS lists the visible elements that reach past the viewport's
// right edge, and the elements (table wrappers, secrets) that scroll
// sideways.
const overflowJS = `(() => {
	const w = document.documentElement.clientWidth, out = [];
	if (document.documentElement.scrollWidth > w) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + w);
	for (const e of document.querySelectorAll('#app *')) {
		const r = e.getBoundingClientRect();
		if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === 'hidden') continue;
		if (e.closest('thead')) continue; // read by screen readers only on phones
		if (r.right > w + 0.5) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + e.className + ' right ' + Math.round(r.right));
	}
	for (const e of document.querySelectorAll('#app *')) {
		if (e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)) {
			out.push('scrolls sideways: ' + e.tagName.toLowerCase() + '.' + e.className + ' ' + e.scrollWidth + ' > ' + e.clientWidth);
		}
	}
	return out.slice(0, 10);
})()`

// unlabelledJS lists the form fields without a label.
const unlabelledJS = `Array.from(document.querySelectorAll('#app input, #app select, #app textarea'))
	.filter(e => e.type !== 'hidden' && !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
	.map(e => e.tagName.toLowerCase() + '[name=' + e.name + ']#' + e.id)`

// TestConsolePhoneAndAccessibility walks the holder's pages at 1280 and
// 390 px (a key name and a prompt holding markup show as text on each):
// at 390 px nothing reaches past the screen's edge and nothing scrolls
// sideways (a new key's secret included), the overview's share bars show,
// a key's row edit has visible labels, and the header and navigation
// leave most of the screen to the page. On every page each field has a
// label, the focus is on the page's heading after navigating, only status
// regions are aria-live, and the skip link moves the focus to the
// heading. The spend-per-day chart has words and its choices fit one row;
// a missing page is titled Not found. The playground: a required option
// with no default says what to choose (no error before any input); a
// price over the balance warns and disables Generate; a refusal shows
// once, in plain words, the field by its label, without the operator's
// flag, and Generate has the focus back; the model search narrows the
// picker.
func TestConsolePhoneAndAccessibility(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0")
	base := p.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "phone@example.com", 10, false), "phone password 1")
	// A key name and a prompt with markup: shown as text, never run.
	key := b.newKey(base, `phone key <img src=x onerror="window.__xss=1">`)
	r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux",
		"prompt": "a very long prompt that goes on and on about a lighthouse on a cliff over a stormy sea at dawn, with gulls <script>window.__xss=2</script><img src=x onerror=window.__xss=3>"}, nil)
	wantCode(t, r, http.StatusOK)
	jobID := r.str("jobId")

	pages := []struct{ hash, ready string }{
		{"#/", "#overview-balance"}, {"#/playground/flux", "#pg-cost"}, {"#/tasks", "#tasks-list tbody tr"},
		{"#/tasks/" + jobID, ".outputs img"}, {"#/gallery", "#gallery .tile"}, {"#/ledger", "#ledger tbody tr"},
		{"#/keys", "#keys-list tbody tr"}, {"#/webhooks", "#webhook-form"}, {"#/account", "#sessions-list tbody tr"},
	}
	for _, size := range []struct{ w, h int64 }{{1280, 860}, {390, 844}} {
		b.do("viewport", chromedp.EmulateViewport(size.w, size.h))
		for _, pg := range pages {
			// Navigate inside the page (a hash change), as a click does.
			evalIn[chromedp.Void](b, `location.hash = `+js(pg.hash))
			b.do("open "+pg.hash, chromedp.WaitVisible(chromedp.CSS(pg.ready)))
			b.waitFor("the focus on the heading of "+pg.hash, `document.activeElement && document.activeElement.tagName === 'H1'`)
			if bad := evalIn[[]string](b, unlabelledJS); len(bad) > 0 {
				t.Errorf("%s: fields without a label: %v", pg.hash, bad)
			}
			if ran := evalIn[bool](b, `window.__xss !== undefined || !!document.querySelector('#app img[src="x"], #app script')`); ran {
				t.Errorf("%s: markup from the API became elements", pg.hash)
			}
			if live := evalIn[[]string](b, `Array.from(document.querySelectorAll('[aria-live]')).filter(e => e.querySelector('h1, nav, form')).map(e => e.id || e.tagName)`); len(live) > 0 {
				t.Errorf("%s: aria-live regions holding whole pages or forms: %v", pg.hash, live)
			}
			if size.w == 390 {
				if bad := evalIn[[]string](b, overflowJS); len(bad) > 0 {
					t.Errorf("%s at 390 px: %v", pg.hash, bad)
				}
				if top := evalIn[float64](b, `document.querySelector('#main').getBoundingClientRect().top + scrollY`); top > 160 {
					t.Errorf("%s at 390 px: the header and navigation take %.0f px", pg.hash, top)
				}
			}
		}
		if size.w == 390 {
			b.shot("account-phone") // the last page walked
		}
	}
	// Still on the phone: the overview's share bars show; a new key's
	// secret wraps instead of scrolling sideways; a key's edit in its row
	// has visible labels.
	b.open(base, "#/", "#overview-balance")
	b.waitFor("the spend by model", `!!document.querySelector('main .bar-track')`)
	if w := evalIn[float64](b, `document.querySelector('main .bar-track').getBoundingClientRect().width`); w < 40 {
		t.Errorf("at 390 px the spend by model's share bar is %.0f px wide", w)
	}
	b.open(base, "#/keys", "#key-form")
	b.fill("#key-form input[name=name]", "phone")
	b.click("#key-form button[type=submit]")
	b.do("the new key", chromedp.WaitVisible(chromedp.CSS("#key-created .secret-value")))
	if bad := evalIn[[]string](b, overflowJS); len(bad) > 0 {
		t.Errorf("a new key's secret at 390 px: %v", bad)
	}
	b.waitFor("the keys listed", `document.querySelectorAll('#keys-list tr[data-key-id]').length === 2`)
	b.click("#keys-list button[data-action=edit]")
	b.do("the edit", chromedp.WaitVisible(chromedp.CSS("#keys-list .row-edit")))
	if bad := evalIn[[]string](b, `Array.from(document.querySelectorAll('#keys-list .row-edit input'))
		.filter(i => !(i.labels && i.labels.length && i.labels[0].offsetWidth > 0 && i.labels[0].innerText.trim())).map(i => i.type)`); len(bad) > 0 {
		t.Errorf("a key's edit has fields without a visible label: %v", bad)
	}
	b.do("desktop", chromedp.EmulateViewport(1280, 860))

	// The overview's spend per day: its choices sit in one row, and the
	// chart says in words what it shows.
	b.open(base, "#/", "#daychart")
	b.waitFor("the chart drawn", `document.querySelectorAll('#daychart .daybar').length === 30`)
	if w := evalIn[float64](b, `document.querySelector('#daychart-days').getBoundingClientRect().width`); w > 250 {
		t.Errorf("the chart's period select is %.0f px wide", w)
	}
	if label := evalIn[string](b, `(document.querySelector('#daychart').getAttribute('role') || '') + ': ' + (document.querySelector('#daychart').getAttribute('aria-label') || '')`); !strings.HasPrefix(label, "img: ") || !strings.Contains(label, "credits") {
		t.Errorf("the chart has no words for a screen reader: %q", label)
	}

	// A page that does not exist says so in the browser's title too.
	evalIn[chromedp.Void](b, `location.hash = '#/nope'`)
	b.waitFor("not found", `document.querySelector('#main h1').textContent === 'Not found'`)
	if got := evalIn[string](b, `document.title`); !strings.HasPrefix(got, "Not found") {
		t.Errorf("the title of a missing page is %q", got)
	}

	// The skip link is the first stop of Tab and moves the focus to the heading.
	b.open(base, "#/keys", "#keys-list tbody tr")
	if first := evalIn[string](b, `document.querySelector('#app a, #app button, #app input').id`); first != "skip-link" {
		t.Errorf("the first focusable element is #%s, not the skip link", first)
	}
	evalIn[chromedp.Void](b, `document.querySelector('#skip-link').focus()`)
	b.do("press Enter", chromedp.KeyEvent("\r"))
	b.waitFor("the focus on the heading", `document.activeElement.tagName === 'H1' && location.hash === '#/keys'`)

	// A required option without a default: an empty state, no error.
	b.open(base, "#/playground/image-upscaler", "#pg-form")
	b.do("the empty price", chromedp.WaitVisible(chromedp.CSS("#pg-price-empty")))
	if got := b.text("#pg-price-empty"); !strings.Contains(got, "Choose scale") {
		t.Errorf("the upscaler's price reads %q", got)
	}
	if n := b.count("#main .problem"); n != 0 {
		t.Errorf("the upscaler shows %d errors before any input", n)
	}
	// A loopback URL: refused once, in words, without the operator's flag.
	b.fill("#pg-url-imageUrl", "http://127.0.0.1:9/in.png")
	b.choose("#pg-opt-scale", "2")
	b.waitFor("the price", `!!document.querySelector('#pg-cost')`)
	b.click("#pg-submit")
	b.waitFor("the refusal", `document.querySelectorAll('#main .problem').length > 0 && !['submitting', 'processing'].includes((document.querySelector('#pg-result .status') || {dataset: {}}).dataset.status)`)
	text := evalIn[string](b, `document.querySelector('#main').innerText`)
	if n := b.count("#main .problem"); n != 1 {
		t.Errorf("the refusal shows %d times:\n%s", n, text)
	}
	if strings.Contains(text, "--allow-private-inputs") || strings.Contains(text, "Bad Request") {
		t.Errorf("the refusal speaks to the operator or in HTTP's words:\n%s", text)
	}
	// Generate, disabled while the request was out, has the focus back.
	if got := evalIn[string](b, `document.activeElement.id || document.activeElement.tagName`); got != "pg-submit" {
		t.Errorf("after the refusal the focus is on %s, not Generate", got)
	}
	// The field by its label, not by its API name ("input imageUrl: ...").
	if problem := b.text("#main .problem"); strings.Contains(problem, "imageUrl") || !strings.Contains(problem, "Image: ") {
		t.Errorf("the refusal does not name the field by its label: %q", problem)
	}

	// A price over the balance (10 credits): a warning, Generate disabled.
	b.open(base, "#/playground/flux", "#pg-form")
	b.waitFor("the price", `!!document.querySelector('#pg-cost')`)
	b.choose("#pg-opt-numOutputs", "4")
	b.do("the warning", chromedp.WaitVisible(chromedp.CSS("#pg-over-balance")))
	if !evalIn[bool](b, `document.querySelector('#pg-submit').disabled`) {
		t.Errorf("Generate is enabled for a price over the balance")
	}
	b.choose("#pg-opt-numOutputs", "1")
	b.waitFor("the warning gone, Generate enabled", `!document.querySelector('#pg-over-balance') && !document.querySelector('#pg-submit').disabled`)

	if got := b.text(".model-info"); strings.Contains(got, "spec:") || strings.Contains(got, "Upstream:") {
		t.Errorf("the model's pricing note speaks jargon to a holder: %q", got)
	}

	// The model search narrows the grouped picker; Enter opens the first match.
	b.fill("#pg-model-search", "kling")
	b.waitFor("only kling models", `(() => { const v = Array.from(document.querySelectorAll('#pg-model option')).filter(o => !o.hidden);
		return v.length > 0 && v.every(o => o.dataset.search.includes('kling')); })()`)
	b.do("Enter", chromedp.KeyEvent("\r"))
	b.waitFor("a kling model's playground", `location.hash.startsWith('#/playground/kling')`)
	b.noErrors()
}
