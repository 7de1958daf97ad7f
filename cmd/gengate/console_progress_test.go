package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestConsoleProcessingProgress watches a task while it processes (the
// sandbox with --sandbox-delay: the task stays processing that long, then
// delivers). The playground shows it processing with the time since it was
// submitted, and that time goes on; the result's link opens the task's
// page, whose elapsed time counts while the status says processing; then,
// with nothing reloaded by hand, the page shows the task succeeded with
// its output and its completion time, and no longer an elapsed time that
// counts; the focus stays on Run again as the page is drawn anew. The test waits for each condition, never for a duration: the
// delay only has to outlast the steps before the result.
func TestConsoleProcessingProgress(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--sandbox-delay", "12s")
	base := p.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "pat@example.com", 100, false), "progress password 1")

	// The playground: processing, with a time since submission that goes on.
	b.open(base, "#/playground/flux", "#pg-form")
	b.fill("#pg-prompt", "a lighthouse, slowly")
	b.waitFor("the price", `!!document.querySelector('#pg-cost')`)
	b.click("#pg-submit")
	processing := `(document.querySelector('#pg-result .status') || {dataset: {}}).dataset.status === 'processing'`
	b.waitFor("the playground's task processing, with its time", processing+` && !!document.querySelector('#pg-elapsed')`)
	pgElapsed := `document.querySelector('#pg-elapsed').textContent`
	first := evalIn[string](b, pgElapsed)
	if !regexp.MustCompile(`^ · \d+ s$`).MatchString(first) {
		t.Errorf("the playground's elapsed time reads %q", first)
	}
	b.waitFor("the playground's time going on while processing", processing+` && `+pgElapsed+` !== `+js(first))

	// The task's page, from the result's link: its elapsed time counts.
	b.click(`#pg-result a[href^="#/tasks/"]`)
	b.do("the task page", chromedp.WaitVisible(chromedp.CSS("#task-elapsed")))
	if got := b.text(".title-row .badge"); got != "processing" {
		t.Fatalf("the task page's status reads %q, want processing (raise --sandbox-delay if this machine is this slow)", got)
	}
	if got := b.text("#task-no-outputs"); !strings.Contains(got, "Still processing") {
		t.Errorf("a processing task's outputs read %q", got)
	}
	elapsed := evalIn[string](b, `document.querySelector('#task-elapsed').textContent`)
	if !regexp.MustCompile(`^\d+ s$`).MatchString(elapsed) {
		t.Errorf("the task's elapsed time reads %q", elapsed)
	}
	b.waitFor("the elapsed time counting while processing", `document.querySelector('.title-row .badge').textContent === 'processing'
		&& document.querySelector('#task-elapsed').textContent !== `+js(elapsed))

	// Then the result, on the same page. The page is drawn anew: the
	// focus stays on the control it was on.
	evalIn[chromedp.Void](b, `document.querySelector('#task-rerun').focus()`)
	b.waitFor("the result", `document.querySelector('.title-row .badge').textContent === 'succeeded' && !!document.querySelector('.outputs img')`)
	if got := evalIn[string](b, `document.activeElement.id || document.activeElement.tagName`); got != "task-rerun" {
		t.Errorf("when the task finished the focus moved from Run again to %s", got)
	}
	if n := b.count("#task-elapsed"); n != 0 {
		t.Errorf("a finished task still shows a counting elapsed time")
	}
	if got := evalIn[string](b, `document.querySelector('#main .grid2').innerText`); !strings.Contains(got, "Completed") {
		t.Errorf("the finished task's properties lack its completion time:\n%s", got)
	}
	b.waitFor("the output loaded", `(() => { const i = document.querySelector('.outputs img'); return i.complete && i.naturalWidth > 0; })()`)
	b.noErrors()
}

// TestConsoleProviderProgress: a task a provider works on (the Replicate
// fake, holding its prediction) shows on its page what the provider last
// said: its status word and the percentage its logs give, in words and as
// a bar, which follow the provider's reports up to 100 % while the task
// still processes; once the provider delivers, the page shows the result
// and no progress any more.
func TestConsoleProviderProgress(t *testing.T) {
	chromiumPath(t)
	rep := replicatetest.New(t)
	rep.Hold()
	dir := t.TempDir()
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--config", writeConfig(t, "providers:\n"+replicateConfig(rep)))
	base := p.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "rae@example.com", 1000, false), "progress password 2")
	key := b.newKey(base, "progress")
	r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a held lighthouse"},
		map[string]string{"Prefer": "respond-async"})
	wantCode(t, r, http.StatusAccepted)

	b.open(base, "#/tasks/"+r.str("jobId"), "#task-elapsed")
	b.waitFor("the provider's progress bar", `!!document.querySelector('.progress progress')`)
	if got := b.text(".progress"); !strings.Contains(got, "Provider says") || !strings.Contains(got, "processing") {
		t.Errorf("the progress reads %q", got)
	}
	b.waitFor("the bar at the provider's latest report, 100 %, while processing",
		`document.querySelector('.title-row .badge').textContent === 'processing' && document.querySelector('.progress progress').value === 100`)
	if got := b.text(".progress"); !strings.Contains(got, "Progress") || !strings.Contains(got, "100 %") {
		t.Errorf("at 100 %% the progress reads %q", got)
	}
	b.shot("task-progress")

	rep.Release()
	b.waitFor("the result", `document.querySelector('.title-row .badge').textContent === 'succeeded' && !!document.querySelector('.outputs img')`)
	if n := b.count(".progress"); n != 0 {
		t.Errorf("a finished task still shows the provider's progress")
	}
	b.noErrors()
}
