package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// gengateCLI runs the real binary with args and returns its stdout.
func gengateCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gengate %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// setupLink creates an account with the real CLI and returns the set-up
// link it prints as its last line.
func setupLink(t *testing.T, dir, base, email string, credits int, operator bool) string {
	t.Helper()
	args := []string{"accounts", "create", "--data", dir, "--public-url", base, "--email", email, "--credits", strconv.Itoa(credits)}
	if operator {
		args = append(args, "--operator")
	}
	out := gengateCLI(t, args...)
	link := lastLine(out)
	if !strings.HasPrefix(link, base+"/#/link/") {
		t.Fatalf("accounts create: last line %q is not a set-up link:\n%s", link, out)
	}
	return link
}

// js quotes s as a JavaScript string.
func js(s string) string { b, _ := json.Marshal(s); return string(b) }

// click clicks the first visible element sel matches.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// fill types v into the field sel (after clearing it).
func (b *browser) fill(sel, v string) {
	b.t.Helper()
	b.do("find "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	evalIn[chromedp.Void](b, `document.querySelector(`+js(sel)+`).value = ''`)
	b.do("fill "+sel, chromedp.SendKeys(chromedp.CSS(sel), v))
}

// choose sets a <select> and fires its change event, as a user's choice does.
func (b *browser) choose(sel, v string) {
	b.t.Helper()
	b.waitFor(sel+" present", `!!document.querySelector(`+js(sel)+`)`)
	evalIn[chromedp.Void](b, `(() => { const e = document.querySelector(`+js(sel)+`); e.value = `+js(v)+`;
		e.dispatchEvent(new Event('change', {bubbles: true})); })()`)
}

// open navigates to a hash route and waits for sel.
func (b *browser) open(base, hash, sel string) {
	b.t.Helper()
	b.do("open "+hash, chromedp.Navigate(base+"/"+hash), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// count returns how many elements sel matches.
func (b *browser) count(sel string) int {
	b.t.Helper()
	return evalIn[int](b, `document.querySelectorAll(`+js(sel)+`).length`)
}

// useLink follows a set-up link and chooses a password; it returns when the
// overview shows.
func (b *browser) useLink(link, password string) {
	b.t.Helper()
	b.do("open the set-up link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#link-form")))
	b.fill("#link-form input[name=password]", password)
	b.fill("#link-form input[name=confirm]", password)
	b.click("#link-form button[type=submit]")
	b.do("signed in", chromedp.WaitVisible(chromedp.CSS("#overview-balance")))
	if loc := evalIn[string](b, `location.href`); strings.Contains(loc, "/link/") {
		b.t.Errorf("the link's token stays in the address bar: %s", loc)
	}
}

func (b *browser) signOut() {
	b.t.Helper()
	b.click("#signout")
	b.do("signed out", chromedp.WaitVisible(chromedp.CSS("#signin-form")))
}

// generate submits the playground's form and waits until the task is
// finished; it returns the status the result shows.
func (b *browser) generate() string {
	b.t.Helper()
	b.waitFor("the price", `!!document.querySelector('#pg-cost')`)
	// Two clicks as fast as a double click: the first disables the button
	// before anything is sent, so the second submits nothing.
	evalIn[chromedp.Void](b, `(() => { const s = document.querySelector('#pg-submit'); s.click(); s.click(); })()`)
	b.waitFor("the task to finish", `(() => { const s = document.querySelector('#pg-result .status');
		return !!s && !['submitting', 'processing'].includes(s.dataset.status); })()`)
	return evalIn[string](b, `document.querySelector('#pg-result .status').dataset.status`)
}

// jobsOf lists the tasks an API key's account sees.
func jobsOf(t *testing.T, base, key string) []map[string]any {
	t.Helper()
	r := mustAPI(t, base, "GET", "/api/generation/jobs?limit=100", key, nil, nil)
	wantCode(t, r, 200)
	var out []map[string]any
	for _, x := range r.json["data"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// TestConsoleBrowser drives the console in chromium against the real
// binary: a holder set up by `gengate accounts create` signs in through
// the link, makes a key, generates in the playground (a sandbox image,
// and the built-in upscaler on an uploaded file; a held one, after which
// the price box and the header say the same balance), finds the tasks and the
// ledger entries, revokes the key (the API then refuses it); an operator
// grants credits and settles a review; a second account sees nothing of
// the first. With -console-shots it writes the screenshots in docs/console/.
func TestConsoleBrowser(t *testing.T) {
	chromiumPath(t) // skip (or fail under CI) before starting anything
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--review-terms", "hold me")
	base := p.base
	holderLink := setupLink(t, dir, base, "holder@example.com", 1000, false)
	b := startBrowser(t)

	// Signed out: the sign-in form, also for a page that needs a session;
	// no sign-up on a server without --open-signup.
	b.open(base, "", "#signin-form")
	if h := b.text("h1"); h != "Sign in" {
		t.Errorf("heading %q", h)
	}
	b.shot("signin")
	b.open(base, "#/keys", "#signin-form")
	if b.count(`a[href="#/signup"]`) != 0 {
		t.Errorf("sign-in offers sign-up without --open-signup")
	}
	b.open(base, "#/signup", ".auth-card")
	b.waitFor("sign-up closed", `document.querySelector('.auth-card').innerText.includes('does not take new accounts')`)

	// The set-up link: choose a password, then signed in.
	b.do("open the set-up link", chromedp.Navigate(holderLink), chromedp.WaitVisible(chromedp.CSS("#link-form")))
	b.shot("setup-link")
	b.useLink(holderLink, "correct horse battery")
	if got := b.text("#overview-balance"); got != "1,000" && got != "1000" {
		t.Errorf("overview balance %q, want 1000", got)
	}

	// A key: the secret shows once, and it works.
	b.open(base, "#/keys", "#key-form")
	b.fill("#key-form input[name=name]", "ci")
	b.fill("#key-form input[name=spendLimit]", "500")
	b.click("#key-form button[type=submit]")
	b.do("the new key", chromedp.WaitVisible(chromedp.CSS("#key-created .secret-value")))
	key := b.text("#key-created .secret-value")
	if !strings.HasPrefix(key, "gg_live_") {
		t.Fatalf("the key shown is %q", key)
	}
	wantCode(t, mustAPI(t, base, "GET", "/api/v1/account", key, nil, nil), 200)
	b.waitFor("the key in the list", `document.querySelectorAll('#keys-list tr[data-key-id]').length === 1`)
	b.shot("keys")
	// Its spend limit changed in place.
	b.click("#keys-list button[data-action=edit]")
	b.fill("#keys-list .row-edit input[type=number]", "300")
	b.click("#keys-list .row-edit button[type=submit]")
	b.waitFor("the new limit", `!document.querySelector('#keys-list .row-edit') && document.querySelector('#keys-list tr[data-key-id] td:nth-child(6)').textContent === '300'`)

	// The playground, sandbox image model: a placeholder image.
	b.open(base, "#/playground/flux", "#pg-form")
	b.fill("#pg-prompt", "a lighthouse at dawn")
	b.choose("#pg-opt-aspectRatio", "16:9")
	b.waitFor("the 16:9 price", `!!document.querySelector('#pg-cost')`)
	if st := b.generate(); st != "succeeded" {
		t.Fatalf("flux task %s\n%s", st, b.pageState())
	}
	b.waitFor("the image shown", `(() => { const i = document.querySelector('#pg-result img.media'); return !!i && i.complete && i.naturalWidth > 0; })()`)
	if b.count("#pg-result .badge.placeholder") == 0 {
		t.Errorf("the sandbox output is not labelled as a placeholder")
	}
	if b.count("#pg-result a[download]") == 0 {
		t.Errorf("no download link")
	}
	b.shot("playground-sandbox")
	if jobs := jobsOf(t, base, key); len(jobs) != 1 {
		t.Fatalf("after a double click: %d tasks, want 1", len(jobs))
	}

	// A built-in operation on an uploaded file: image-upscaler ×2.
	img := filepath.Join(t.TempDir(), "small.png")
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, gradient(40, 30)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, pngBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.open(base, "#/playground/image-upscaler", "#pg-form")
	b.do("upload", chromedp.SetUploadFiles(chromedp.CSS("#pg-file-imageUrl"), []string{img}))
	b.waitFor("the file read", `document.querySelector('#pg-file-imageUrl').dataset.ready === 'true'`)
	b.choose("#pg-opt-scale", "2")
	if st := b.generate(); st != "succeeded" {
		t.Fatalf("upscaler task %s\n%s", st, b.pageState())
	}
	b.waitFor("the upscaled image, 80×60", `(() => { const i = document.querySelector('#pg-result img.media'); return !!i && i.complete && i.naturalWidth === 80 && i.naturalHeight === 60; })()`)
	if b.count("#pg-result .badge.placeholder") != 0 {
		t.Errorf("a built-in output is labelled as a placeholder")
	}
	// The file went up through POST /api/v1/files: the task used its URL.
	upscaleID := evalIn[string](b, `document.querySelector('#pg-result .status a').getAttribute('href').split('/').pop()`)
	uploaded := evalIn[string](b, `fetch('/api/generation/jobs/`+upscaleID+`').then(r => r.json()).then(j => (j.inputs || {}).imageUrl || '')`, chromedp.EvalAwaitPromise)
	if !strings.HasPrefix(uploaded, base+"/files/") {
		t.Errorf("the upscaler's input is %q, not an uploaded file", uploaded)
	}
	b.shot("playground")

	// A sandbox video: it plays in the page.
	b.open(base, "#/playground/kling-2-1", "#pg-form")
	b.fill("#pg-prompt", "waves on a beach")
	if st := b.generate(); st != "succeeded" {
		t.Fatalf("video task %s\n%s", st, b.pageState())
	}
	b.waitFor("the video loaded", `(() => { const v = document.querySelector('#pg-result video.media');
		return !!v && v.controls && v.readyState >= 1 && v.videoWidth > 0 && v.duration > 0; })()`)
	if b.count("#pg-result a[download]") != 1 || b.count("#pg-result .badge.placeholder") == 0 {
		t.Errorf("the video has no download link or no placeholder label")
	}

	// A prompt with a review term: held.
	b.open(base, "#/playground/flux", "#pg-form")
	b.fill("#pg-prompt", "please hold me")
	if st := b.generate(); st != "needs_review" {
		t.Fatalf("review task %s\n%s", st, b.pageState())
	}
	b.do("the review note", chromedp.WaitVisible(chromedp.CSS("#pg-review")))
	// The held task is charged: the header and the price box both say
	// the balance after it.
	held := strconv.Itoa(mustAPI(t, base, "GET", "/api/v1/account", key, nil, nil).num("remainingCredits")) + " credits"
	b.waitFor("the header's balance "+held, `document.querySelector('#balance').textContent === `+js(held))
	b.waitFor("the price box's balance "+held, `document.querySelector('#pg-price').textContent.includes('balance ' + `+js(held)+`)`)

	// Tasks: all three, then filtered by model; a task's page.
	b.open(base, "#/tasks", "#tasks-list table")
	b.waitFor("four tasks", `document.querySelectorAll('#tasks-list tbody tr').length === 4`)
	b.shot("tasks")
	b.choose("#filter-modelId", "image-upscaler")
	b.waitFor("one upscaler task", `location.hash.includes('modelId=image-upscaler') && document.querySelectorAll('#tasks-list tbody tr').length === 1`)
	b.click("#tasks-list tbody tr a")
	b.do("the task page", chromedp.WaitVisible(chromedp.CSS(".outputs img.media")))
	if got := b.text(".title-row .badge"); got != "succeeded" {
		t.Errorf("task page status %q", got)
	}
	b.shot("task")

	// Gallery: the outputs of the three finished tasks.
	b.open(base, "#/gallery", "#gallery .tile")
	b.waitFor("three tiles", `document.querySelectorAll('#gallery .tile').length === 3 && !!document.querySelector('#gallery video')`)
	b.shot("gallery")

	// Ledger: the grant and four charges (the held task's included).
	b.open(base, "#/ledger", "#ledger tbody tr")
	b.waitFor("five entries", `document.querySelectorAll('#ledger tbody tr').length === 5`)
	if got := evalIn[int](b, `Array.from(document.querySelectorAll('#ledger tbody tr td:nth-child(2)')).filter(td => td.textContent === 'charge').length`); got != 4 {
		t.Errorf("%d charges in the ledger, want 4", got)
	}
	b.shot("ledger")

	// Overview with something to show.
	b.open(base, "#/", "#overview-balance")
	b.waitFor("recent tasks", `document.querySelectorAll('main table').length === 2`)
	b.shot("overview")
	if *consoleShots {
		b.do("a phone's screen", chromedp.EmulateViewport(390, 844))
		b.shot("overview-phone")
		b.do("back to the desktop", chromedp.EmulateViewport(1280, 860))
	}

	// Revoke the key: two clicks (the second confirms); the API refuses it.
	b.open(base, "#/keys", "#keys-list tr[data-key-id]")
	b.click("#keys-list button[data-action=revoke]")
	b.click("#keys-list button[data-action=confirm-revoke]")
	b.waitFor("revoked", `!!document.querySelector('#keys-list tr[data-key-id] .badge.muted')`)
	poll(t, 5*time.Second, 50*time.Millisecond, "the revoked key refused", func() bool {
		return mustAPI(t, base, "GET", "/api/v1/account", key, nil, nil).status == 401
	})
	b.signOut()
	b.noErrors()

	// The operator: grants credits and settles the review.
	b.useLink(setupLink(t, dir, base, "op@example.com", 0, true), "operator password 1")
	b.open(base, "#/admin/accounts", "#account-form")
	b.fill("#account-form input[name=email]", "team@example.com")
	b.fill("#account-form input[name=name]", "Team")
	b.fill("#account-form input[name=credits]", "75")
	b.click("#account-form button[type=submit]")
	b.do("the set-up link", chromedp.WaitVisible(chromedp.CSS("#account-created .secret-value")))
	if link := b.text("#account-created .secret-value"); !strings.HasPrefix(link, base+"/#/link/") {
		t.Errorf("the new account's set-up link is %q", link)
	}
	b.waitFor("the new account listed", `document.querySelector('#accounts-list').innerText.includes('team@example.com')`)
	b.shot("admin-accounts")
	b.open(base, "#/admin/accounts?q=holder", "#accounts-list tbody tr")
	if got := b.count("#accounts-list tbody tr"); got != 1 {
		t.Errorf("searching holder: %d accounts", got)
	}
	b.click("#accounts-list tbody tr a")
	b.do("the account page", chromedp.WaitVisible(chromedp.CSS("#credits-form")))
	before := b.text("#admin-balance")
	b.fill("#credits-form input[name=credits]", "250")
	b.fill("#credits-form input[name=note]", "welcome bonus")
	b.click("#credits-form button[type=submit]")
	b.do("granted", chromedp.WaitVisible(chromedp.CSS("#credits-done .note")))
	after := b.text("#admin-balance")
	if num(before)+250 != num(after) {
		t.Errorf("balance %s after granting 250 to %s", after, before)
	}
	b.shot("admin-account")
	b.open(base, "#/admin/review", "#review-list .review-item")
	if got := b.count("#review-list .review-item"); got != 1 {
		t.Fatalf("%d tasks in review, want 1", got)
	}
	if !strings.Contains(b.text("#review-list .review-item .prompt"), "please hold me") {
		t.Errorf("the review item does not show the prompt")
	}
	heldID := evalIn[string](b, `document.querySelector('#review-list .review-item').dataset.jobId`)
	b.shot("admin-review")
	b.click("#review-list button[data-action=refund]")
	b.waitFor("settled", `document.querySelector('#review-list .review-item').dataset.settled === 'refund'`)
	b.open(base, "#/admin/engines", ".engine")
	b.shot("admin-engines")
	b.signOut()
	b.noErrors()

	// A second account sees nothing of the first.
	b.useLink(setupLink(t, dir, base, "other@example.com", 50, false), "another password")
	b.open(base, "#/tasks", "#tasks-list .empty")
	b.open(base, "#/gallery", "#main h1")
	b.waitFor("an empty gallery", `document.querySelectorAll('#gallery .tile').length === 0 && !document.querySelector('#main .empty').hidden`)
	b.open(base, "#/keys", "#keys-list .empty")
	b.open(base, "#/ledger", "#main h1")
	b.waitFor("only its own grant", `document.querySelectorAll('#ledger tbody tr').length === 1`)
	b.open(base, "#/tasks/"+heldID, "#main .problem")
	if got := evalIn[int](b, `fetch('/api/generation/jobs/`+heldID+`').then(r => r.status)`, chromedp.EvalAwaitPromise); got != 404 {
		t.Errorf("another account's task: %d, want 404", got)
	}
	// Nor use its uploaded file as an input.
	b.open(base, "#/playground/image-upscaler", "#pg-form")
	b.fill("#pg-url-imageUrl", uploaded)
	b.choose("#pg-opt-scale", "2")
	if st := b.generate(); st != "refused" {
		t.Errorf("another account's upload as input: %s", st)
	}
	if got := b.text("#pg-error"); !strings.Contains(got, "INPUT_FORBIDDEN") {
		t.Errorf("another account's upload as input: %q", got)
	}

	// Paging: with 26 tasks of its own, the tasks list has a second page
	// and the ledger (25 a page) loads more.
	b.open(base, "#/keys", "#key-form")
	b.fill("#key-form input[name=name]", "script")
	b.click("#key-form button[type=submit]")
	b.do("the new key", chromedp.WaitVisible(chromedp.CSS("#key-created .secret-value")))
	key2 := b.text("#key-created .secret-value")
	small := dataURL(t, gradient(8, 8))
	for i := 0; i < 26; i++ {
		r := mustAPI(t, base, "POST", "/api/v1/generate", key2, map[string]any{"type": "image", "modelId": "image-upscaler", "imageUrl": small, "scale": 2}, nil)
		wantCode(t, r, 200)
	}
	b.open(base, "#/tasks", "#tasks-list table")
	b.waitFor("a first page of 20", `document.querySelectorAll('#tasks-list tbody tr').length === 20`)
	first := evalIn[[]string](b, `Array.from(document.querySelectorAll('#tasks-list tbody tr a')).map(a => a.textContent)`)
	b.click("#tasks-next")
	b.waitFor("a second page of 6", `location.hash.includes('cursor=') && document.querySelectorAll('#tasks-list tbody tr').length === 6`)
	second := evalIn[[]string](b, `Array.from(document.querySelectorAll('#tasks-list tbody tr a')).map(a => a.textContent)`)
	seen := map[string]bool{}
	for _, id := range append(first, second...) {
		if seen[id] {
			t.Errorf("task %s on both pages", id)
		}
		seen[id] = true
	}
	if b.count("#tasks-next") != 0 {
		t.Errorf("the last page offers a next one")
	}
	b.open(base, "#/ledger", "#ledger tbody tr")
	b.waitFor("a first page of 25", `document.querySelectorAll('#ledger tbody tr').length === 25`)
	b.click("#ledger-more")
	b.waitFor("all 27 entries (the grant and 26 charges), and no more to load",
		`document.querySelectorAll('#ledger tbody tr').length === 27 && document.querySelector('#ledger-more').hidden`)
	b.signOut()

	// The holder signs in with the password: the grant and the refund are
	// in the ledger.
	b.open(base, "#/signin", "#signin-form")
	b.fill("#signin-form input[name=email]", "holder@example.com")
	b.fill("#signin-form input[name=password]", "correct horse battery")
	b.click("#signin-form button[type=submit]")
	b.do("signed in", chromedp.WaitVisible(chromedp.CSS("#overview-balance")))
	b.open(base, "#/ledger", "#ledger tbody tr")
	b.waitFor("the grant and the refund", `document.querySelectorAll('#ledger tbody tr').length === 7`)
	text := b.text("#ledger")
	if !strings.Contains(text, "welcome bonus") || !strings.Contains(text, "refund") {
		t.Errorf("ledger lacks the grant's note or the refund:\n%s", text)
	}
	// The session ends behind the page's back (the cookie is gone): the
	// next call is 401 and the page goes to the sign-in form.
	if _, err := chromedp.Call(b.ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: "gengate_session", URL: base + "/"}); err != nil {
		t.Fatal(err)
	}
	evalIn[chromedp.Void](b, `location.hash = '#/keys'`) // in the page: no reload
	b.do("back to sign-in", chromedp.WaitVisible(chromedp.CSS("#signin-form")))
	b.noErrors()

	// Open sign-up: the sign-in page offers it; the new account has the
	// --signup-credits.
	open := startProcess(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--open-signup", "--signup-credits", "20")
	b.open(open.base, "#/signin", "#signin-form")
	b.click(`a[href="#/signup"]`)
	b.do("the sign-up form", chromedp.WaitVisible(chromedp.CSS("#signup-form")))
	b.fill("#signup-form input[name=email]", "new@example.com")
	b.fill("#signup-form input[name=password]", "short")
	b.click("#signup-form button[type=submit]")
	b.do("the refusal next to the form", chromedp.WaitVisible(chromedp.CSS("#signup-form .problem")))
	b.shot("signup")
	b.fill("#signup-form input[name=password]", "long enough password")
	b.click("#signup-form button[type=submit]")
	b.do("signed up", chromedp.WaitVisible(chromedp.CSS("#overview-balance")))
	if got := b.text("#overview-balance"); got != "20" {
		t.Errorf("a signed-up account has %s credits, want 20", got)
	}
	b.noErrors()
}

// num reads a number the console formatted ("1,250").
func num(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
	return n
}
