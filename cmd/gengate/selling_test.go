package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestTestKeyAndCodesCLI is the check from outside, through run:
// "keys create --credits 5 --test" prints a gg_test_ key whose three flux
// generations answer 200 with remainingCredits 5; "codes create --credits
// 100 --count 2" prints two codes, one of which redeems to +100 once; an
// unknown code is refused.
func TestTestKeyAndCodesCLI(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	out := cli(t, "keys", "create", "--data", dir, "--credits", "5", "--test", "--name", "ci")
	key := lastLine(out)
	if !strings.HasPrefix(key, "gg_test_") {
		t.Fatalf("keys create --test printed %q", out)
	}
	for range 3 {
		r := mustAPI(t, srv.base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a fox"}, nil)
		wantCode(t, r, http.StatusOK)
		if r.num("remainingCredits") != 5 {
			t.Fatalf("test generation answered remainingCredits %d, want 5: %v", r.num("remainingCredits"), r.json)
		}
	}

	out = cli(t, "codes", "create", "--data", dir, "--credits", "100", "--count", "2", "--expires", "30d")
	codes := strings.Fields(out)
	if len(codes) != 2 || codes[0] == codes[1] || len(codes[0]) < 12 {
		t.Fatalf("codes create printed %q", out)
	}
	r := mustAPI(t, srv.base, "POST", "/api/v1/account/redeem", srv.key, map[string]any{"code": codes[0]}, nil)
	wantCode(t, r, http.StatusOK)
	if r.num("remainingCredits") != 1100 {
		t.Fatalf("redeemed to %d, want 1100", r.num("remainingCredits"))
	}
	r = mustAPI(t, srv.base, "POST", "/api/v1/account/redeem", key, map[string]any{"code": codes[0]}, nil)
	wantCode(t, r, http.StatusConflict)
	r = mustAPI(t, srv.base, "POST", "/api/v1/account/redeem", key, map[string]any{"code": "GG-ABCD-EFGH-JKMN-PQRS"}, nil)
	wantCode(t, r, http.StatusNotFound)
	if r.str("code") != "CODE_UNKNOWN" {
		t.Errorf("unknown code answered %v", r.json)
	}
}
