package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
)

// TestTimestampsOneForm: the answers that carried times to the
// nanosecond (an endpoint's creation, a secret's rotation: times not read
// back from the database) and those read back (task, lists, keys, the
// account) all carry them as 2006-01-02T15:04:05.000Z. Every answer any
// test of this package reads is held to the same form (validateAnswer,
// checkTimestamps); this test makes sure the answers that had another
// form are among them, and that the check sees a wrong form.
func TestTimestampsOneForm(t *testing.T) {
	s := newStack(t, stackOpts{})
	s.svc.Webhooks.Guard = fetch.TargetGuard(true)
	h := s.holder(100, false)
	rcv := newReceiver(t)
	r := s.do(call{Method: "POST", Path: "/api/v1/webhooks", Key: h.key, Body: map[string]any{"url": rcv.URL,
		"eventTypes": []string{gengate.EventSucceeded}}})
	wantStatus(t, r, http.StatusCreated)
	ep := r.str("id")
	for _, c := range []call{
		{Method: "POST", Path: "/api/v1/webhooks/" + ep + "/rotate", Key: h.key},
		{Method: "POST", Path: "/api/v1/webhooks/secret/rotate", Key: h.key},
		{Method: "GET", Path: "/api/v1/webhooks", Key: h.key},
		{Method: "GET", Path: "/api/v1/keys", Key: h.key},
		{Method: "GET", Path: "/api/v1/account", Key: h.key},
		{Method: "GET", Path: "/api/v1/account/ledger", Key: h.key},
	} {
		if r := s.do(c); r.Status != http.StatusOK {
			t.Errorf("%s %s: %d %s", c.Method, c.Path, r.Status, r.Body)
		}
	}
	id := s.generate(h.key, flux("a cat"), nil).str("jobId")
	s.do(call{Method: "GET", Path: "/api/generation/jobs/" + id, Key: h.key})
	s.do(call{Method: "GET", Path: "/api/generation/jobs", Key: h.key})

	for _, bad := range []string{`{"createdAt": "2026-11-28T04:05:06.789123456Z"}`, `{"a": {"at": "2026-11-28T04:05:06Z"}}`,
		`{"data": [{"updatedAt": "2026-11-28T05:05:06.789+01:00"}]}`} {
		if checkTimestamps([]byte(bad)) == "" {
			t.Errorf("checkTimestamps passes %s", bad)
		}
	}
	if msg := checkTimestamps([]byte(`{"createdAt": "2026-11-28T04:05:06.780Z", "day": "2026-11-28", "prompt": "2026"}`)); msg != "" {
		t.Errorf("checkTimestamps refuses the one form: %s", msg)
	}
}
