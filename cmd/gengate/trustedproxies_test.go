package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestTrustedProxiesSignIn: with --trusted-proxies, failed sign-ins
// carrying one X-Forwarded-For address are refused with 429 while a
// sign-in carrying another is not, and the request log names the client;
// without it, every client behind the proxy shares one budget.
func TestTrustedProxiesSignIn(t *testing.T) {
	signIn := func(base, client, email string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/api/v1/auth/signin",
			strings.NewReader(`{"email":"`+email+`","password":"wrong password 1234"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, trusted := range []bool{true, false} {
		args := []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--signin-limit-address", "4"}
		if trusted {
			args = append(args, "--trusted-proxies", "127.0.0.1/32")
		}
		p := startProcess(t, args...)
		last := 0
		for i := range 5 { // distinct emails: only the address budget counts
			last = signIn(p.base, "203.0.113.7", "nobody"+string(rune('a'+i))+"@example.com")
		}
		if last != http.StatusTooManyRequests {
			t.Fatalf("trusted %v: the fifth failed sign-in from one client answered %d, want 429", trusted, last)
		}
		other := signIn(p.base, "198.51.100.9", "someone@example.com")
		if trusted && other == http.StatusTooManyRequests {
			t.Errorf("a sign-in from another client behind the trusted proxy answered 429")
		}
		if !trusted && other != http.StatusTooManyRequests {
			t.Errorf("without --trusted-proxies the header was believed: another client's sign-in answered %d", other)
		}
		if trusted {
			logs, _ := os.ReadFile(p.stderr)
			found := false
			for _, line := range strings.Split(string(logs), "\n") {
				var l struct{ Msg, Path, Client string }
				if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "request" && l.Path == "/api/v1/auth/signin" && l.Client == "198.51.100.9" {
					found = true
				}
			}
			if !found {
				t.Errorf("no request log line names the client 198.51.100.9; %s", p.logTail())
			}
		}
	}
}
