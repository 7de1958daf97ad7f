package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// TestKeysNeverWiden: a key limited to 10 credits a day cannot lift or
// raise its own limit or another key's, a key it makes is limited to at
// most 10 (by default exactly 10) and cannot spend more, and no key made
// through the API is an operator's, even when an operator's session makes
// it: only the CLI's operator keys and operator sessions grant credits.
func TestKeysNeverWiden(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(1000, false)
		op := s.holder(0, true)

		r := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "ten", "spendLimit": 10}})
		wantStatus(t, r, http.StatusCreated)
		ten, tenID := r.str("key"), r.str("id")
		patch := func(key, id string, body map[string]any) response {
			return s.do(call{Method: "PATCH", Path: "/api/v1/keys/" + id, Key: key, Body: body})
		}
		wantProblem(t, patch(ten, tenID, map[string]any{"spendLimit": nil}), http.StatusForbidden, gengate.EKeyWider)
		wantProblem(t, patch(ten, tenID, map[string]any{"spendLimit": 11}), http.StatusForbidden, gengate.EKeyWider)
		wantStatus(t, patch(ten, tenID, map[string]any{"spendLimit": 10, "name": "still ten"}), http.StatusOK)

		// What it makes is at most as wide as itself.
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/keys", Key: ten, Body: map[string]any{"name": "wide", "spendLimit": 11}}),
			http.StatusForbidden, gengate.EKeyWider)
		r = s.do(call{Method: "POST", Path: "/api/v1/keys", Key: ten, Body: map[string]any{"name": "child", "spendLimit": nil}})
		wantStatus(t, r, http.StatusCreated)
		child, childID := r.str("key"), r.str("id")
		if r.num("spendLimit") != 10 || r.JSON["operator"] != nil {
			t.Errorf("a key made by a key limited to 10: %s", r.Body)
		}
		wantProblem(t, patch(ten, childID, map[string]any{"spendLimit": nil}), http.StatusForbidden, gengate.EKeyWider)
		wantProblem(t, patch(child, childID, map[string]any{"spendLimit": 100}), http.StatusForbidden, gengate.EKeyWider)
		// The child cannot spend more than 10 a day (flux costs 4).
		for range 2 {
			wantAccepted(t, s.generate(child, flux("a fox"), async))
		}
		wantProblem(t, s.generate(child, flux("a fox"), async), http.StatusPaymentRequired, gengate.ESpendLimit)
		// A key without a limit may lift one: it is not widening itself.
		wantStatus(t, patch(h.key, childID, map[string]any{"spendLimit": nil}), http.StatusOK)

		// An operator's session makes a plain key: no operator powers.
		r = s.bySession(op, true, call{Method: "POST", Path: "/api/v1/keys", Body: map[string]any{"name": "from console"}})
		wantStatus(t, r, http.StatusCreated)
		console := r.str("key")
		credits := call{Method: "POST", Path: "/api/v1/admin/accounts/" + h.account + "/credits", Body: map[string]any{"credits": 1000000}}
		for name, key := range map[string]string{"console-made key": console, "owner's key": h.key, "limited key": ten} {
			c := credits
			c.Key = key
			if r := s.do(c); r.Status != http.StatusForbidden || r.str("code") != gengate.EForbidden {
				t.Errorf("%s granted credits: %d %s", name, r.Status, r.Body)
			}
			for _, path := range []string{"/api/v1/admin/accounts", "/api/v1/admin/accounts/" + h.account + "/link"} {
				method := "GET"
				if path != "/api/v1/admin/accounts" {
					method = "POST"
				}
				if r := s.do(call{Method: method, Path: path, Key: key, Body: map[string]any{}}); r.Status != http.StatusForbidden {
					t.Errorf("%s on %s %s: %d", name, method, path, r.Status)
				}
			}
		}
		acct, err := s.store.FindAccount(context.Background(), h.account)
		if err != nil || acct.Balance != 1000-8 {
			t.Fatalf("balance %v %v, want 992: a refused grant moved credits", acct, err)
		}
		// The operator's session, and the CLI's operator key, do grant.
		wantStatus(t, s.bySession(op, true, credits), http.StatusOK)
		c := credits
		c.Key = op.key
		wantStatus(t, s.do(c), http.StatusOK)
	})
}

// TestKeyCapAndPaging: an account holds at most --max-keys active keys,
// however many requests race for the last places (both databases); a
// revoked key frees its place; GET /api/v1/keys pages by limit and cursor
// without repeating or skipping a key.
func TestKeyCapAndPaging(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		s.svc.MaxKeys = 5
		h := s.holder(10, false) // one active key
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.send(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": fmt.Sprint("k", i)}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				codes[r.Status]++
				mu.Unlock()
				if r.Status == http.StatusConflict && r.str("code") != gengate.EKeyLimit {
					t.Errorf("409 with code %q", r.str("code"))
				}
			}()
		}
		wg.Wait()
		if codes[http.StatusCreated] != 4 || codes[http.StatusConflict] != 8 {
			t.Fatalf("answers %v, want 4 created and 8 KEY_LIMIT_REACHED", codes)
		}
		// Paging: 5 keys, two at a time.
		seen := map[string]bool{}
		path, pages := "/api/v1/keys?limit=2", 0
		for {
			r := s.do(call{Method: "GET", Path: path, Key: h.key})
			wantStatus(t, r, http.StatusOK)
			pages++
			for _, k := range listOf(t, r) {
				id := k["id"].(string)
				if seen[id] {
					t.Errorf("key %s on two pages", id)
				}
				seen[id] = true
			}
			next := r.str("nextCursor")
			if next == "" {
				break
			}
			path = "/api/v1/keys?limit=2&cursor=" + next
		}
		if len(seen) != 5 || pages != 3 {
			t.Errorf("%d keys over %d pages, want 5 over 3", len(seen), pages)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/keys?cursor=bogus", Key: h.key}), http.StatusBadRequest, gengate.EInvalid)
		// A revoked key frees a place.
		var victim string
		for id := range seen {
			victim = id
			break
		}
		wantStatus(t, s.do(call{Method: "DELETE", Path: "/api/v1/keys/" + victim, Key: h.key}), http.StatusNoContent)
		key := h.key
		if r := s.do(call{Method: "GET", Path: "/api/v1/account", Key: key}); r.Status != http.StatusOK {
			key = "" // the victim was h.key itself: use the session
		}
		c := call{Method: "POST", Path: "/api/v1/keys", Key: key, Body: map[string]any{"name": "again"}}
		if key == "" {
			wantStatus(t, s.bySession(h, true, c), http.StatusCreated)
		} else {
			wantStatus(t, s.do(c), http.StatusCreated)
		}
	})
}

// TestFreePacePerAccount: the free-model pace counts an account's calls
// whatever key makes them, so minting keys does not multiply it.
func TestFreePacePerAccount(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	s.svc.FreeLimit = httpapi.NewLimiter(0.001, 2) // two at once, then one every 1000 s
	h := s.holder(100, false)
	r := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "second"}})
	wantStatus(t, r, http.StatusCreated)
	second := r.str("key")
	free := map[string]any{"type": "image", "modelId": "remove-bg", "imageUrl": dataURL("image/png", testPNG(t, 16, 16))}
	wantAccepted(t, s.generate(h.key, free, async))
	wantAccepted(t, s.generate(second, free, async))
	wantProblem(t, s.generate(second, free, async), http.StatusTooManyRequests, gengate.ERateLimited)
	wantProblem(t, s.generate(h.key, free, async), http.StatusTooManyRequests, gengate.ERateLimited)
	other := s.holder(100, false)
	wantAccepted(t, s.generate(other.key, free, async))
}
