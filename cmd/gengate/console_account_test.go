package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleAccountSessions: at 1280 and at 390 px, the account page lists
// the member's sessions, this browser's marked, another (signed in by a
// program) by its User-Agent; ending that one from its row ends it (it
// answers 401) and takes its row away, while the console stays signed in.
// The rename form renames the account (trimmed; markup in the name stays
// text) and the header says the new name at once (the Rename button has
// the focus back); a name over 200 bytes
// is refused beside the form and changes nothing. Every field has a label;
// at 390 px nothing reaches past the screen's edge. Ending this browser's
// own session signs it out.
func TestConsoleAccountSessions(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0")
	base := p.base
	b := startBrowser(t)
	const email, password = "sam@example.com", "sessions password 1"
	b.useLink(setupLink(t, dir, base, email, 10, false), password)
	rows := `document.querySelectorAll('#sessions-list tbody tr').length`

	for _, size := range []struct {
		w, h int64
		name string
	}{{1280, 860, "desktop"}, {390, 844, "phone"}} {
		b.do("viewport", chromedp.EmulateViewport(size.w, size.h))
		other := signInCookie(t, base, email, password) // Go's HTTP client
		b.open(base, "#/", "#overview-balance")         // the account page anew, not the one shown
		b.open(base, "#/account", "#sessions-list tbody tr")
		b.waitFor("this browser's session and the other", rows+` === 2`)
		if got := b.text("#sessions-list tbody tr.current"); !strings.Contains(got, "Chrome") || !strings.Contains(got, "this browser") {
			t.Errorf("%s: this browser's row reads %q", size.name, got)
		}
		if got := b.text("#sessions-list tbody tr:not(.current)"); !strings.Contains(got, "Go-http-client") || strings.Contains(got, "this browser") {
			t.Errorf("%s: the other session's row reads %q", size.name, got)
		}
		if bad := evalIn[[]string](b, unlabelledJS); len(bad) > 0 {
			t.Errorf("%s: fields without a label: %v", size.name, bad)
		}
		if size.w == 390 {
			if bad := evalIn[[]string](b, overflowJS); len(bad) > 0 {
				t.Errorf("at 390 px: %v", bad)
			}
		}

		// End the other session from its row.
		b.click("#sessions-list tbody tr:not(.current) button[data-end]")
		b.waitFor("the ended session's row gone", rows+` === 1 && !!document.querySelector('#sessions-list tbody tr.current')`)
		if got := sessionStatus(t, base, other); got != http.StatusUnauthorized {
			t.Errorf("%s: the ended session answers %d, want 401", size.name, got)
		}
		if got := evalIn[int](b, `fetch('/api/v1/account').then(r => r.status)`, chromedp.EvalAwaitPromise); got != http.StatusOK {
			t.Fatalf("%s: the console's session answers %d after ending another", size.name, got)
		}

		// Rename: trimmed, markup shown as text, the header at once.
		name := "Sam's <b>studio</b> " + size.name
		b.fill("#rename-form input[name=name]", "  "+name+"  ")
		b.click("#rename-form button[type=submit]")
		b.waitFor("the new name", `document.querySelector('#account-name').textContent === `+js(name)+
			` && !!document.querySelector('#rename-done .note')`)
		if got := b.text("header .account-name"); got != name {
			t.Errorf("%s: the header names the account %q, want %q", size.name, got, name)
		}
		// The button, disabled while the rename was asked, has the focus
		// back (not the document's body).
		if got := evalIn[string](b, `document.activeElement.tagName + ' ' + document.activeElement.textContent`); got != "BUTTON Rename" {
			t.Errorf("%s: after the rename the focus is on %q", size.name, got)
		}
		if n := b.count("#app b"); n != 0 {
			t.Errorf("%s: markup in the name became %d elements", size.name, n)
		}
		if got := evalIn[string](b, `fetch('/api/v1/account').then(r => r.json()).then(a => a.name)`, chromedp.EvalAwaitPromise); got != name {
			t.Errorf("%s: the API names the account %q, want %q", size.name, got, name)
		}
		// Over 200 bytes (101 two-byte letters fit the field's 200
		// characters): refused beside the form, nothing changes.
		evalIn[chromedp.Void](b, `document.querySelector('#rename-form input[name=name]').value = 'é'.repeat(101)`)
		b.click("#rename-form button[type=submit]")
		b.do("the refusal", chromedp.WaitVisible(chromedp.CSS("#rename-form .problem")))
		if got := b.text("#rename-form .problem"); !strings.Contains(got, "200 bytes") {
			t.Errorf("%s: a long name's refusal reads %q", size.name, got)
		}
		if got := b.text("#account-name"); got != name {
			t.Errorf("%s: after the refusal the page names the account %q", size.name, got)
		}
	}

	// Ending this browser's own session is signing out.
	b.open(base, "#/", "#overview-balance")
	b.open(base, "#/account", "#sessions-list tbody tr.current")
	b.click("#sessions-list tbody tr.current button[data-end]")
	b.do("signed out", chromedp.WaitVisible(chromedp.CSS("#signin-form")))
	if got := evalIn[int](b, `fetch('/api/v1/auth/session').then(r => r.status)`, chromedp.EvalAwaitPromise); got != http.StatusUnauthorized {
		t.Errorf("after ending its own session the console's session answers %d, want 401", got)
	}
	b.noErrors()
}
