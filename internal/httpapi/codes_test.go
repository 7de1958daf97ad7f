package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// TestRedemptionCodes: an operator makes codes (a holder may not); a code
// redeems once to its credits as a ledger entry of kind redemption; of 8
// concurrent redemptions of one code from two accounts exactly one wins,
// on both databases, and each account's ledger equals its balance; used,
// unknown and expired codes are refused each with its own code, changing
// nothing; attempts are paced per account.
func TestRedemptionCodes(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		op := s.holder(0, true)
		ann, bob := s.holder(10, false), s.holder(10, false)

		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/admin/codes", Key: ann.key, Body: map[string]any{"credits": 100}}),
			http.StatusForbidden, gengate.EForbidden)
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/admin/codes", Key: op.key, Body: map[string]any{"credits": 0, "count": 2}}),
			http.StatusBadRequest, gengate.EInvalid)
		made := s.do(call{Method: "POST", Path: "/api/v1/admin/codes", Key: op.key, Body: map[string]any{"credits": 100, "count": 2}})
		wantStatus(t, made, http.StatusCreated)
		codes := made.JSON["codes"].([]any)
		if len(codes) != 2 || codes[0] == codes[1] || len(codes[0].(string)) < 12 {
			t.Fatalf("codes: %s", made.Body)
		}
		first, second := codes[0].(string), codes[1].(string)
		var n int
		if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM redemption_codes WHERE hash = $1`, first).Scan(&n); err != nil || n != 0 {
			t.Fatalf("a code is stored in clear (%d rows, %v)", n, err)
		}

		// The same code, 8 times at once, 4 from each account.
		var wg sync.WaitGroup
		answers := make([]response, 8)
		for i := range answers {
			h := ann
			if i%2 == 1 {
				h = bob
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: h.key, Body: map[string]any{"code": first}})
			}()
		}
		wg.Wait()
		won := 0
		for _, r := range answers {
			switch r.Status {
			case http.StatusOK:
				won++
				if r.num("remainingCredits") != 110 {
					t.Errorf("winner's balance %s", r)
				}
			default:
				wantProblem(t, r, http.StatusConflict, gengate.ECodeUsed)
			}
		}
		if won != 1 || s.balance(ann.account)+s.balance(bob.account) != 120 {
			t.Fatalf("%d redemptions won; balances %d and %d", won, s.balance(ann.account), s.balance(bob.account))
		}
		for _, h := range []*holder{ann, bob} {
			entries := s.ledgerCheck(h.account)
			if len(entries) == 2 && (entries[1].Kind != gengate.LedgerRedemption || entries[1].Amount != 100) {
				t.Errorf("redemption entry %+v", entries[1])
			}
		}
		r := s.do(call{Method: "GET", Path: "/api/v1/account/ledger", Key: ann.key})
		wantStatus(t, r, http.StatusOK)

		// Typed as a person would: lower case, spaces for dashes.
		typed := strings.ToLower(strings.ReplaceAll(second, "-", " "))
		r = s.bySession(bob, true, call{Method: "POST", Path: "/api/v1/account/redeem", Body: map[string]any{"code": typed}})
		wantStatus(t, r, http.StatusOK)

		before := s.balance(ann.account) + s.balance(bob.account)
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: ann.key, Body: map[string]any{"code": second}}),
			http.StatusConflict, gengate.ECodeUsed)
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: ann.key, Body: map[string]any{"code": "GG-0000-0000-0000-0000"}}),
			http.StatusNotFound, gengate.ECodeUnknown)
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: ann.key, Body: map[string]any{"code": ""}}),
			http.StatusBadRequest, gengate.EInvalid)

		// Expired: a code made to last an hour, redeemed by a clock two
		// hours on.
		expiring, err := s.svc.CreateCodes(context.Background(), 50, 1, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		s.svc.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: ann.key, Body: map[string]any{"code": expiring[0]}}),
			http.StatusGone, gengate.ECodeExpired)
		s.svc.Now = nil
		if after := s.balance(ann.account) + s.balance(bob.account); after != before {
			t.Errorf("refused redemptions changed balances: %d → %d", before, after)
		}
		made = s.do(call{Method: "POST", Path: "/api/v1/admin/codes", Key: op.key, Body: map[string]any{"credits": 5, "expiresAt": time.Now().Add(time.Hour).Format(time.RFC3339)}})
		wantStatus(t, made, http.StatusCreated)

		// Paced per account: a burst of 3, then 429, for this account only.
		s.svc.RedeemLimit = httpapi.NewLimiter(0.001, 3)
		for range 3 {
			wantProblem(t, s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: ann.key, Body: map[string]any{"code": "GG-1111-1111-1111-1111"}}),
				http.StatusNotFound, gengate.ECodeUnknown)
		}
		r = s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: ann.key, Body: map[string]any{"code": made.JSON["codes"].([]any)[0]}})
		wantProblem(t, r, http.StatusTooManyRequests, gengate.ERateLimited)
		if r.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		wantStatus(t, s.do(call{Method: "POST", Path: "/api/v1/account/redeem", Key: bob.key, Body: map[string]any{"code": made.JSON["codes"].([]any)[0]}}), http.StatusOK)
		s.ledgerCheck(ann.account)
		s.ledgerCheck(bob.account)
	})
}
