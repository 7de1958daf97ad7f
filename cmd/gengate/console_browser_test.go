package main

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// consoleShots, when set, makes the browser test write a screenshot of each
// console page to docs/console/ (go test ./cmd/gengate -run TestConsole -console-shots).
var consoleShots = flag.Bool("console-shots", false, "write screenshots of the console's pages to docs/console/")

// chromiumPath finds Debian's chromium. Where it is absent the browser
// tests skip, except under CI=true, where they fail.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI must run the browser tests (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); skipping the console's browser tests")
	return ""
}

// browser is one headless chromium with one tab, for a whole test.
type browser struct {
	t   *testing.T
	ctx context.Context // the tab; steps derive their deadline from it

	mu         sync.Mutex
	exceptions []string // uncaught exceptions and console errors of the page
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b := &browser{t: t, ctx: ctx}
	// The first Do starts the browser, bound to ctx (no deadline), so that
	// later steps with deadlines never end it.
	if err := chromedp.Do(ctx); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			// Refusals the page handles (401 signed out, 4xx shown next to
			// a form) are logged by the browser's network source; anything
			// else at error level (an exception, a CSP violation) fails.
			if m.IsException() || (m.Type == "error" && m.Source != "network") {
				b.mu.Lock()
				b.exceptions = append(b.exceptions, m.String())
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		<-done
	})
	return b
}

// do runs steps with a deadline; on failure it reports what the page shows.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.pageState())
	}
}

// pageState is the URL and visible text of the page, for failure messages.
func (b *browser) pageState() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if len(text) > 3000 {
		text = text[:3000]
	}
	b.mu.Lock()
	exc := strings.Join(b.exceptions, "\n")
	b.mu.Unlock()
	return "page " + loc + ":\n" + text + "\nconsole errors:\n" + exc
}

// text returns the visible text of the first element sel matches, once visible.
func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		b.t.Fatalf("text of %s: %v\n%s", sel, err, b.pageState())
	}
	return s
}

// eval evaluates a JavaScript expression in the page.
func evalIn[T any](b *browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("eval %s: %v\n%s", expr, err, b.pageState())
	}
	return v
}

// waitFor waits until the expression is true in the page.
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.t.Fatalf("waiting for %s (%s): %v\n%s", what, expr, err, b.pageState())
	}
}

// noErrors fails the test if the page threw or logged an error.
func (b *browser) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.exceptions) > 0 {
		b.t.Errorf("the page logged errors:\n%s", strings.Join(b.exceptions, "\n"))
	}
	b.exceptions = nil
}

// shot writes a full-page screenshot to docs/console/<name>.png when
// -console-shots is set.
func (b *browser) shot(name string) {
	b.t.Helper()
	if !*consoleShots {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	// Let images that are in the page finish loading first.
	_, _ = chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete) && !document.querySelector('.spinner')`))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// TestConsoleServed: GET / is the console's page with its security
// headers, and unknown /api/ paths stay JSON 404s. (The pages themselves
// are driven in a browser by TestConsoleBrowser.)
func TestConsoleServed(t *testing.T) {
	p := startProcess(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0")

	r := mustAPI(t, p.base, "GET", "/", "", nil, nil)
	wantCode(t, r, 200)
	csp := r.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline script or eval: %q", csp)
	}
	if got := r.header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options %q", got)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.body), `<div id="app"`) {
		t.Fatalf("GET / is not the console: %s %s", r.header.Get("Content-Type"), r.body)
	}
	if strings.Contains(string(r.body), "<script>") || strings.Contains(string(r.body), " style=") {
		t.Errorf("index.html has inline script or style:\n%s", r.body)
	}
	for _, path := range []string{"/api/v1/nope", "/api/", "/nope"} {
		r := mustAPI(t, p.base, "GET", path, "", nil, nil)
		wantCode(t, r, 404)
		if r.str("code") != "NOT_FOUND" {
			t.Errorf("GET %s: %s", path, r.body)
		}
	}
	wantCode(t, mustAPI(t, p.base, "GET", "/console/nope.js", "", nil, nil), 404)

}
