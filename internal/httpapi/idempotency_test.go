package httpapi_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/gengate/gengate"
)

func withKey(k string, h map[string]string) map[string]string {
	m := map[string]string{"Idempotency-Key": k}
	for n, v := range h {
		m[n] = v
	}
	return m
}

// TestIdempotencyReplay: the same key and body name the same task, charged
// once, whatever Prefer says; the same key with another body is 422.
func TestIdempotencyReplay(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	acct, key := s.account(100)
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "a boat", "numOutputs": 2}

	first := s.generate(key, body, withKey("k-1", async))
	id := wantAccepted(t, first)
	// Without Prefer the replay waits for the same task and returns its
	// result; keys in another order are the same body.
	reordered := `{"numOutputs":2,"prompt":"a boat","modelId":"flux","type":"image"}`
	r := s.generate(key, reordered, withKey("k-1", nil))
	wantStatus(t, r, http.StatusOK)
	if r.str("jobId") != id || r.num("remainingCredits") != 92 {
		t.Errorf("replay: %s; want jobId %s and 92 credits", r.Body, id)
	}
	again := s.generate(key, body, withKey("k-1", async))
	wantStatus(t, again, http.StatusOK) // finished now: a replay returns the task as it is
	if again.str("jobId") != id {
		t.Errorf("replay jobId %q, want %q", again.str("jobId"), id)
	}
	if s.taskCount() != 1 || s.balance(acct) != 92 {
		t.Errorf("after replays: %d tasks, balance %d; want 1 task, 92", s.taskCount(), s.balance(acct))
	}

	// Same key, other settings.
	other := map[string]any{"type": "image", "modelId": "flux", "prompt": "a boat", "numOutputs": 3}
	r = s.generate(key, other, withKey("k-1", nil))
	wantProblem(t, r, http.StatusUnprocessableEntity, gengate.EKeyReused)
	if r.str("jobId") != id {
		t.Errorf("422 jobId %q, want %q", r.str("jobId"), id)
	}
	// Keys are per account: another account may use the same key.
	acct2, key2 := s.account(100)
	r = s.generate(key2, other, withKey("k-1", nil))
	wantStatus(t, r, http.StatusOK)
	if r.str("jobId") == id {
		t.Error("another account's key named the first account's task")
	}
	if s.taskCount() != 2 || s.balance(acct) != 92 || s.balance(acct2) != 88 {
		t.Errorf("%d tasks, balances %d and %d; want 2, 92, 88", s.taskCount(), s.balance(acct), s.balance(acct2))
	}
	entries := s.ledgerCheck(acct)
	if c := charges(entries, "charge"); len(c) != 1 || c[id] != 1 {
		t.Errorf("charges %v, want one for %s", c, id)
	}
}

// TestIdempotencyRefusedStoresNoKey: a request refused with 400 or 402
// keeps no key, so the same key with a fixed body succeeds.
func TestIdempotencyRefusedStoresNoKey(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	acct, key := s.account(3)

	wantProblem(t, s.generate(key, map[string]any{"type": "image", "modelId": "no-such-model", "prompt": "x"}, withKey("fix-me", nil)),
		http.StatusBadRequest, gengate.EInvalid)
	wantProblem(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, withKey("fix-me", nil)),
		http.StatusPaymentRequired, gengate.EInsufficient)
	wantProblem(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "outputFormat": "gif"}, withKey("fix-me", nil)),
		http.StatusBadRequest, gengate.EUnsupportedOption)
	if s.taskCount() != 0 || s.balance(acct) != 3 {
		t.Fatalf("refused requests left %d tasks, balance %d", s.taskCount(), s.balance(acct))
	}
	id := wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "x"}, withKey("fix-me", async)))
	r := s.generate(key, map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "x"}, withKey("fix-me", async))
	if got := wantAccepted(t, r); got != id {
		t.Errorf("replay jobId %q, want %q", got, id)
	}
	if s.taskCount() != 1 || s.balance(acct) != 1 {
		t.Errorf("%d tasks, balance %d; want 1 task, 1 credit", s.taskCount(), s.balance(acct))
	}
}

// TestIdempotencyConcurrent: the same key sent 20 times at once makes one
// task and one charge, and every answer names it.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(100)
		body := map[string]any{"type": "image", "modelId": "flux", "prompt": "same"}
		const n = 20
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([]response, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = s.send(call{Method: "POST", Path: "/api/v1/generate", Key: key, Body: body,
					Header: withKey("same-key", async)})
			}()
		}
		close(start)
		wg.Wait()
		ids := map[string]int{}
		for i, r := range results {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if r.Status != http.StatusAccepted && r.Status != http.StatusOK {
				t.Errorf("request %d: %s", i, r)
				continue
			}
			ids[r.str("jobId")]++
		}
		if len(ids) != 1 {
			t.Errorf("jobIds %v, want one", ids)
		}
		if s.taskCount() != 1 || s.balance(acct) != 96 {
			t.Errorf("%d tasks, balance %d; want 1 task, 96", s.taskCount(), s.balance(acct))
		}
		entries := s.ledgerCheck(acct)
		if c := charges(entries, "charge"); len(c) != 1 {
			t.Errorf("charges %v, want one", c)
		}
	})
}
