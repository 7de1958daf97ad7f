package httpapi_test

import (
	"net/http"
	"testing"
	"time"
)

// TestAdvanceAnswersPromptly: POST on a statusUrl with no worker to run
// the task (an API-only process) answers 202 after --poll-wait, not after
// the 2-minute sync limit; Prefer: wait=N waits N seconds (within the sync
// limit) and says so; respond-async answers at once.
func TestAdvanceAnswersPromptly(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, pollWait: 300 * time.Millisecond})
	_, key := s.account(100)
	id := wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "poll"}, async))
	for _, c := range []struct {
		prefer, applied string
		least, most     time.Duration
	}{
		{"", "", 300 * time.Millisecond, 30 * time.Second},
		{"wait=1", "wait=1", time.Second, 30 * time.Second},
		{"respond-async", "respond-async", 0, 30 * time.Second},
	} {
		h := map[string]string{}
		if c.prefer != "" {
			h["Prefer"] = c.prefer
		}
		start := time.Now()
		r := s.do(call{Method: "POST", Path: jobPath(id), Key: key, Header: h})
		took := time.Since(start)
		if wantAccepted(t, r) != id {
			t.Errorf("Prefer %q: another task: %s", c.prefer, r.Body)
		}
		if got := r.Header.Get("Preference-Applied"); got != c.applied {
			t.Errorf("Prefer %q: Preference-Applied %q, want %q", c.prefer, got, c.applied)
		}
		// The sync limit is 2 minutes: an answer within 30 s came from
		// the poll wait; one before the wait's end did not wait.
		if took < c.least || took > c.most {
			t.Errorf("Prefer %q: answered after %s, want between %s and %s", c.prefer, took, c.least, c.most)
		}
		if r.Status != http.StatusAccepted {
			t.Errorf("Prefer %q: %d", c.prefer, r.Status)
		}
	}
}
