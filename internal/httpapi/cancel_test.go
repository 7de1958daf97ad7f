package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gengate/gengate"
)

// TestCancelEndpoint: POST .../cancel cancels a queued task with a full
// refund (API key or session); the task's statusUrl then answers 409
// GENERATION_CANCELED (POST) and its record shows "canceled" (GET); a
// finished task is refused with TASK_FINISHED, another account's task is
// not found, and neither changes.
func TestCancelEndpoint(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(100, false)
		id := wantAccepted(t, s.generate(h.key, flux("a cat"), async))
		cost := 100 - s.balance(h.account)

		r := s.do(call{Method: "POST", Path: jobPath(id) + "/cancel", Key: h.key})
		wantStatus(t, r, http.StatusOK)
		if r.str("status") != "canceled" || r.num("remainingCredits") != 100 {
			t.Errorf("cancel: %s", r.Body)
		}
		if e, _ := r.JSON["error"].(map[string]any); e["code"] != gengate.ECanceled || e["refunded"] != true || e["creditsRefunded"] != float64(cost) {
			t.Errorf("cancel record error: %v", e)
		}
		p := s.do(call{Method: "POST", Path: jobPath(id), Key: h.key})
		wantProblem(t, p, http.StatusConflict, gengate.ECanceled)
		if p.JSON["refunded"] != true || p.num("remainingCredits") != 100 || p.str("jobStatus") != "canceled" {
			t.Errorf("POST statusUrl: %s", p.Body)
		}
		g := s.do(call{Method: "GET", Path: jobPath(id), Key: h.key})
		wantStatus(t, g, http.StatusOK)
		if g.str("status") != "canceled" || g.Header.Get("Retry-After") != "" {
			t.Errorf("GET statusUrl: %v %s", g.Header, g.Body)
		}
		// A second cancel answers the canceled task; nothing more is refunded.
		r = s.do(call{Method: "POST", Path: jobPath(id) + "/cancel", Key: h.key})
		wantStatus(t, r, http.StatusOK)
		if refunds := charges(s.ledgerCheck(h.account), gengate.LedgerRefund); refunds[id] != 1 {
			t.Errorf("refunds %v, want one for %s", refunds, id)
		}

		// By session, with its CSRF token.
		id2 := wantAccepted(t, s.generate(h.key, flux("a dog"), async))
		r = s.bySession(h, true, call{Method: "POST", Path: jobPath(id2) + "/cancel"})
		wantStatus(t, r, http.StatusOK)
		if r.str("status") != "canceled" {
			t.Errorf("session cancel: %s", r.Body)
		}

		// Another account's task: 404, unchanged.
		other := s.holder(100, false)
		id3 := wantAccepted(t, s.generate(h.key, flux("a bird"), async))
		r = s.do(call{Method: "POST", Path: jobPath(id3) + "/cancel", Key: other.key})
		wantProblem(t, r, http.StatusNotFound, gengate.ENotFound)

		// A finished task: 409 TASK_FINISHED, unchanged.
		for { // a worker's steps
			did, err := s.svc.RunNext(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !did {
				break
			}
		}
		wantStatus(t, s.do(call{Method: "POST", Path: jobPath(id3), Key: h.key}), http.StatusOK)
		before := s.balance(h.account)
		r = s.do(call{Method: "POST", Path: jobPath(id3) + "/cancel", Key: h.key})
		wantProblem(t, r, http.StatusConflict, gengate.ETaskFinished)
		g = s.do(call{Method: "GET", Path: jobPath(id3), Key: h.key})
		if g.str("status") != "succeeded" || s.balance(h.account) != before {
			t.Errorf("a refused cancel changed the task: %s, balance %d → %d", g.Body, before, s.balance(h.account))
		}

		// Only POST.
		r = s.do(call{Method: "GET", Path: jobPath(id3) + "/cancel", Key: h.key})
		wantProblem(t, r, http.StatusMethodNotAllowed, gengate.EMethodNotAllowed)
	})
}
