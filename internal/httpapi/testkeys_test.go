package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/fetch"
)

// TestTestKeys: a key made with POST /api/v1/keys {"test": true} starts
// gg_test_; its generations run on the sandbox although fal serves the
// model for live keys (the fake fal sees none of them), charge nothing,
// answer the unchanged balance, carry "test": true, are found by the task
// list's test filter, and send their webhook events as live tasks do.
func TestTestKeys(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		f := faltest.New(t)
		s := newStack(t, stackOpts{dialect: dialect, allowPrivate: true, engines: map[string]gengate.Engine{
			"fal": fal.New(fal.Config{APIKey: f.Key(), BaseURL: f.URL(), AllowPrivateOutputs: true})}})
		s.svc.Webhooks.Guard = fetch.TargetGuard(true)
		s.startWebhooks(nil)
		h := s.holder(5, false)
		k := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "ci", "test": true}})
		wantStatus(t, k, http.StatusCreated)
		test := k.str("key")
		if !strings.HasPrefix(test, gengate.TestKeyPrefix) || len(test) != len(gengate.TestKeyPrefix)+32 || k.JSON["test"] != true {
			t.Fatalf("test key answer: %s", k.Body)
		}
		// A quote with the test key prices what its generation will be
		// charged: nothing, on the sandbox; the live key's, fal's price.
		for _, c := range []struct {
			key, engine string
			cost        int
		}{{test, "sandbox", 0}, {h.key, "fal", 4}} {
			q := s.do(call{Method: "POST", Path: "/api/v1/quote", Key: c.key, Body: flux("a quoted cat")})
			wantStatus(t, q, http.StatusOK)
			if q.num("cost") != c.cost || q.str("engine") != c.engine || q.num("remainingCredits") != 5 {
				t.Errorf("quote with %s: %s; want cost %v on %s", c.key[:8], q.Body, c.cost, c.engine)
			}
		}
		rcv := newReceiver(t)
		var ids []string
		for i := range 3 {
			body := flux("a test cat")
			body["numOutputs"] = 2
			if i == 0 {
				body["webhookUrl"] = rcv.URL + "/hook"
			}
			r := s.generate(test, body, nil)
			wantStatus(t, r, http.StatusOK)
			if r.num("remainingCredits") != 5 || len(r.JSON["images"].([]any)) != 2 {
				t.Fatalf("test generation: %s", r)
			}
			ids = append(ids, r.str("jobId"))
		}
		if got := f.SubmissionsByPrompt()["a test cat"]; got != 0 {
			t.Errorf("fal got %d submissions of a test key's tasks, want 0", got)
		}
		rec := s.do(call{Method: "GET", Path: jobPath(ids[0]), Key: test})
		if rec.JSON["test"] != true || rec.str("engine") != "sandbox" || rec.num("cost") != 0 || rec.JSON["placeholder"] != true {
			t.Errorf("test task record: %s", rec.Body)
		}
		for _, e := range s.ledgerCheck(h.account)[1:] { // after the grant: charges of 0, as for a free model
			if e.Amount != 0 {
				t.Errorf("a test key's task moved credits: %+v", e)
			}
		}
		if s.balance(h.account) != 5 {
			t.Errorf("balance %d after test generations, want 5", s.balance(h.account))
		}

		// A live call of the same account goes to fal and is charged.
		live := s.generate(h.key, flux("a live cat"), async)
		liveID := wantAccepted(t, live)
		if s.balance(h.account) != 1 {
			t.Errorf("live charge: balance %d, want 1", s.balance(h.account))
		}
		if rec := s.do(call{Method: "GET", Path: jobPath(liveID), Key: h.key}); rec.JSON["test"] != nil || rec.str("engine") != "fal" {
			t.Errorf("live task record: %s", rec.Body)
		}

		list := func(q string) []string {
			r := s.do(call{Method: "GET", Path: "/api/generation/jobs" + q, Key: h.key})
			wantStatus(t, r, http.StatusOK)
			var out []string
			for _, d := range r.JSON["data"].([]any) {
				out = append(out, d.(map[string]any)["jobId"].(string))
			}
			return out
		}
		if got := list("?test=true"); len(got) != 3 || got[2] != ids[0] {
			t.Errorf("?test=true: %v, want %v", got, ids)
		}
		if got := list("?test=false"); len(got) != 1 || got[0] != liveID {
			t.Errorf("?test=false: %v, want [%s]", got, liveID)
		}
		if got := list(""); len(got) != 4 {
			t.Errorf("all tasks: %v", got)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/generation/jobs?test=yes", Key: h.key}), http.StatusBadRequest, gengate.EInvalid)

		waitFor(t, "the test task's webhook", func() bool { return len(rcv.deliveries()) == 1 })
		if !strings.Contains(string(rcv.deliveries()[0].body), `"test":true`) {
			t.Errorf("webhook payload: %s", rcv.deliveries()[0].body)
		}
		keys := s.do(call{Method: "GET", Path: "/api/v1/keys", Key: test})
		wantStatus(t, keys, http.StatusOK)
	})
}
