package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGenerateResults covers the 200 results of section 2.2 and 2.3: image
// URLs that download as real images of the asked format, count and aspect
// ratio, a video URL that downloads as an MP4, with jobId and
// remainingCredits.
func TestGenerateResults(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	acct, key := s.account(1000)
	balance := 1000

	tests := []struct {
		name   string
		body   map[string]any
		cost   int
		format string // image format, "" for video
		aw, ah int
		count  int
	}{
		{"flux default png 1:1", map[string]any{"type": "image", "modelId": "flux", "prompt": "a red fox"},
			4, "png", 1, 1, 1},
		{"flux 3 jpeg 16:9", map[string]any{"type": "image", "modelId": "flux", "prompt": "a red fox",
			"aspectRatio": "16:9", "numOutputs": 3, "outputFormat": "jpeg"}, 12, "jpeg", 16, 9, 3},
		{"nano-banana webp 9:16", map[string]any{"type": "image", "modelId": "nano-banana", "prompt": "a lighthouse",
			"aspectRatio": "9:16", "outputFormat": "webp"}, 4, "webp", 9, 16, 1},
		{"flux-schnell 2 png 4:3", map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "hills",
			"aspectRatio": "4:3", "numOutputs": 2}, 4, "png", 4, 3, 2},
		{"kling video", map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "waves at night", "inputs": map[string]any{}},
			9, "", 16, 9, 1},
		{"wan t2v video", map[string]any{"type": "video", "modelId": "wan-2-5-t2v", "prompt": "a paper boat", "aspectRatio": "9:16"},
			9, "", 9, 16, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.generate(key, tc.body, nil)
			wantStatus(t, r, http.StatusOK)
			balance -= tc.cost
			if got := r.num("remainingCredits"); got != balance {
				t.Errorf("remainingCredits %d, want %d", got, balance)
			}
			if got := s.balance(acct); got != balance {
				t.Errorf("balance %d, want %d", got, balance)
			}
			id := r.str("jobId")
			if !isUUID(id) {
				t.Fatalf("jobId %q is not a UUID", id)
			}
			if !strings.Contains(r.Header.Get("Vary"), "Prefer") {
				t.Errorf("Vary %q lacks Prefer", r.Header.Get("Vary"))
			}
			if tc.format == "" {
				if _, ok := r.JSON["images"]; ok {
					t.Errorf("video result has images: %s", r.Body)
				}
				wantVideo(t, r.str("video"))
			} else {
				if _, ok := r.JSON["video"]; ok {
					t.Errorf("image result has video: %s", r.Body)
				}
				urls := images(t, r)
				if len(urls) != tc.count {
					t.Fatalf("%d images, want %d", len(urls), tc.count)
				}
				seen := map[string]bool{}
				for _, u := range urls {
					if seen[u] {
						t.Errorf("image URL %s listed twice", u)
					}
					seen[u] = true
					wantImage(t, u, tc.format, tc.aw, tc.ah)
				}
			}
			// The task record agrees.
			g := s.do(call{Method: "GET", Path: jobPath(id), Key: key})
			wantStatus(t, g, http.StatusOK)
			if g.str("status") != "succeeded" || g.num("cost") != tc.cost {
				t.Errorf("GET %s: %s", id, g.Body)
			}
		})
	}
	entries := s.ledgerCheck(acct)
	if n := len(charges(entries, "charge")); n != len(tests) {
		t.Errorf("%d charged tasks, want %d", n, len(tests))
	}
}

// TestGenerateInputImage sends an input image as a data: URL and, with
// private inputs allowed, from a real HTTP server; both generate.
func TestGenerateInputImage(t *testing.T) {
	t.Parallel()
	png := testPNG(t, 64, 48)
	img := serveBytes(t, "image/png", png)
	s := newStack(t, stackOpts{allowPrivate: true})
	_, key := s.account(100)
	for _, url := range []string{dataURL("image/png", png), img.URL + "/x.png"} {
		r := s.generate(key, map[string]any{"type": "image", "modelId": "photo-restoration", "imageUrl": url}, nil)
		wantStatus(t, r, http.StatusOK)
		urls := images(t, r)
		if len(urls) != 1 {
			t.Fatalf("%d images, want 1", len(urls))
		}
		wantImage(t, urls[0], "png", 4, 3)
	}
	// Inputs are deleted once the task is done; only the outputs stay.
	if n := s.fileCount(); n != 2 {
		t.Errorf("%d files stored, want the 2 outputs", n)
	}
}

// TestRespondAsync: Prefer: respond-async answers 202 at once with the task,
// its Location, Retry-After, Preference-Applied and Vary: Prefer.
func TestRespondAsync(t *testing.T) {
	s := newStack(t, stackOpts{sandboxDelay: 2 * time.Second})
	acct, key := s.account(100)
	// The task takes 2 s and the sync wait is 2 min: a call that waited
	// would answer 200, so the 202 shows it answered at once.
	r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, async)
	id := wantAccepted(t, r)
	if got := r.Header.Get("Preference-Applied"); got != "respond-async" {
		t.Errorf("Preference-Applied %q, want respond-async", got)
	}
	if !strings.Contains(r.Header.Get("Vary"), "Prefer") {
		t.Errorf("Vary %q lacks Prefer", r.Header.Get("Vary"))
	}
	if got := s.balance(acct); got != 96 {
		t.Errorf("balance %d after accepting, want 96 (charged at acceptance)", got)
	}
	// The workers finish it; then POST returns the result.
	s.waitDone(acct, id)
	p := s.do(call{Method: "POST", Path: jobPath(id), Key: key})
	wantStatus(t, p, http.StatusOK)
	if p.str("jobId") != id || p.num("remainingCredits") != 96 || len(images(t, p)) != 1 {
		t.Errorf("POST statusUrl: %s", p.Body)
	}
}

// TestRespondAsyncWinsOverWait: respond-async answers at once whatever
// else Prefer holds (the spec: it "requests an immediate saved task"). The
// task would finish at once, so a call that waited would answer 200.
func TestRespondAsyncWinsOverWait(t *testing.T) {
	for _, prefer := range []string{"respond-async, wait=10", "wait=10, respond-async", "wait=10,respond-async;x=1"} {
		t.Run(prefer, func(t *testing.T) {
			s := newStack(t, stackOpts{})
			_, key := s.account(100)
			r := s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, map[string]string{"Prefer": prefer})
			wantAccepted(t, r)
			if got := r.Header.Get("Preference-Applied"); got != "respond-async" {
				t.Errorf("Preference-Applied %q, want respond-async", got)
			}
		})
	}
}

// waitDone waits, woken by the service's events, until the task has left
// the active states.
func (s *stack) waitDone(accountID, id string) {
	s.t.Helper()
	o, err := s.svc.Wait(context.Background(), accountID, id, time.Minute)
	if err != nil {
		s.t.Fatal(err)
	}
	if o.Task.Status.Active() {
		s.t.Fatalf("task %s still %s after a minute", id, o.Task.Status)
	}
}

// TestPreferWait: Prefer: wait=0 answers at once; wait=N waits up to N
// seconds, capped by the sync limit. Each case holds its task where the
// test wants it (never run, or running for an hour) or lets the wait be
// far longer than the task, so that the answer's status and body show
// which ended the wait, whatever the machine's speed; no elapsed time is
// compared. How long each wait is comes from TestPreferWaitFor.
func TestPreferWait(t *testing.T) {
	flux := map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}
	t.Run("wait=0", func(t *testing.T) {
		s := newStack(t, stackOpts{})
		_, key := s.account(100)
		r := s.generate(key, flux, map[string]string{"Prefer": "wait=0"})
		wantAccepted(t, r)
		if got := r.Header.Get("Preference-Applied"); got != "wait=0" {
			t.Errorf("Preference-Applied %q, want wait=0", got)
		}
	})
	t.Run("wait=0 under a sub-second sync limit", func(t *testing.T) {
		// A 900 ms limit is 0 whole seconds: wait=0 is within it.
		s := newStack(t, stackOpts{noWorkers: true, syncWait: 900 * time.Millisecond})
		_, key := s.account(100)
		r := s.generate(key, flux, map[string]string{"Prefer": "wait=0"})
		wantAccepted(t, r)
		if got := r.Header.Get("Preference-Applied"); got != "wait=0" {
			t.Errorf("Preference-Applied %q, want wait=0", got)
		}
	})
	t.Run("wait=N outlasts the task", func(t *testing.T) {
		// Ten minutes for a task with no delay: only its end ends the wait.
		s := newStack(t, stackOpts{syncWait: time.Hour})
		_, key := s.account(100)
		r := s.generate(key, flux, map[string]string{"Prefer": "wait=600"})
		wantStatus(t, r, http.StatusOK)
		if n := len(images(t, r)); n != 1 {
			t.Errorf("%d images, want 1", n)
		}
		if got := r.Header.Get("Preference-Applied"); got != "wait=600" {
			t.Errorf("Preference-Applied %q, want wait=600", got)
		}
	})
	t.Run("wait=1 ends while the task runs", func(t *testing.T) {
		// The task runs for an hour and the sync limit is an hour: only
		// wait=1 ends the call, with the saved task, still running.
		s := newStack(t, stackOpts{sandboxDelay: time.Hour, syncWait: time.Hour})
		_, key := s.account(100)
		r := s.generate(key, flux, map[string]string{"Prefer": "wait=1"})
		id := wantAccepted(t, r)
		if got := r.Header.Get("Preference-Applied"); got != "wait=1" {
			t.Errorf("Preference-Applied %q, want wait=1", got)
		}
		g := s.do(call{Method: "GET", Path: jobPath(id), Key: key})
		wantStatus(t, g, http.StatusOK)
		if g.str("jobId") != id || g.str("status") != "processing" {
			t.Errorf("the saved task: %s", g)
		}
	})
	t.Run("huge wait capped by sync limit", func(t *testing.T) {
		// wait=18446744073 s overflows nanoseconds; the task never runs,
		// so only the 1 s sync limit ends the call.
		s := newStack(t, stackOpts{noWorkers: true, syncWait: time.Second})
		_, key := s.account(100)
		r := s.generate(key, flux, map[string]string{"Prefer": "wait=18446744073"})
		wantAccepted(t, r)
		if got := r.Header.Get("Preference-Applied"); got != "wait=1" {
			t.Errorf("Preference-Applied %q, want wait=1", got)
		}
	})
	t.Run("wait capped by sync limit", func(t *testing.T) {
		// The task runs for an hour and wait=3600 asks for as long: only
		// the 1 s sync limit ends the call.
		s := newStack(t, stackOpts{sandboxDelay: time.Hour, syncWait: time.Second})
		_, key := s.account(100)
		r := s.generate(key, flux, map[string]string{"Prefer": "wait=3600"})
		wantAccepted(t, r)
		if got := r.Header.Get("Preference-Applied"); got != "wait=1" {
			t.Errorf("Preference-Applied %q, want wait=1", got)
		}
	})
}

// TestSyncWait: without Prefer the call waits up to the sync limit: 200
// when the task is faster, 202 when it is slower. As in TestPreferWait,
// the test holds each task so that only the case's own rule can end the
// call: no elapsed time is compared.
func TestSyncWait(t *testing.T) {
	kling := map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "x"}
	t.Run("slower than the wait", func(t *testing.T) {
		// No worker runs until the call has answered: only the 200 ms
		// sync limit can end it, with the task still processing.
		s := newStack(t, stackOpts{noWorkers: true, syncWait: 200 * time.Millisecond})
		acct, key := s.account(100)
		r := s.generate(key, kling, nil)
		id := wantAccepted(t, r)
		if r.Header.Get("Preference-Applied") != "" {
			t.Errorf("Preference-Applied %q without Prefer", r.Header.Get("Preference-Applied"))
		}
		s.startWorkers(4)
		s.waitDone(acct, id)
		p := s.do(call{Method: "POST", Path: jobPath(id), Key: key})
		wantStatus(t, p, http.StatusOK)
		wantVideo(t, p.str("video"))
		if p.num("remainingCredits") != 91 {
			t.Errorf("remainingCredits %d, want 91", p.num("remainingCredits"))
		}
	})
	t.Run("faster than the wait", func(t *testing.T) {
		// An hour's sync limit for a 300 ms task: only its end ends the call.
		s := newStack(t, stackOpts{sandboxDelay: 300 * time.Millisecond, syncWait: time.Hour})
		_, key := s.account(100)
		r := s.generate(key, kling, nil)
		wantStatus(t, r, http.StatusOK)
		wantVideo(t, r.str("video"))
	})
}

// TestNumOutputsOneOnSingleOutputModels: the spec's general numOutputs
// field is taken by a video model and a fixed-price image model as 1, at the
// price of a request without it; 2 is refused before any charge.
func TestNumOutputsOneOnSingleOutputModels(t *testing.T) {
	s := newStack(t, stackOpts{})
	acct, key := s.account(100)
	r := s.generate(key, map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "x", "numOutputs": 1}, nil)
	wantStatus(t, r, http.StatusOK)
	wantVideo(t, r.str("video"))
	r = s.generate(key, map[string]any{"type": "image", "modelId": "nano-banana", "prompt": "x", "numOutputs": 1}, nil)
	wantStatus(t, r, http.StatusOK)
	if n := len(images(t, r)); n != 1 {
		t.Errorf("%d images, want 1", n)
	}
	before := s.balance(acct)
	r = s.generate(key, map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "x", "numOutputs": 2}, nil)
	wantProblem(t, r, http.StatusBadRequest, "UNSUPPORTED_MODEL_OPTION")
	if got := s.balance(acct); got != before {
		t.Errorf("balance %d after a refused request, want %d", got, before)
	}
}
