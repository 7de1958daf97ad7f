package main

import (
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// assertNoSecrets fails t for every secret (key, file token, session,
// password) that appears in logs.
func assertNoSecrets(t *testing.T, logs string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if len(s) < 8 {
			t.Fatalf("secret %q is too short to search for", s)
		}
		if strings.Contains(logs, s) {
			t.Errorf("the logs hold the secret %q", s)
		}
	}
}

// fileToken is the token of an output URL: /files/<token>.<ext>.
func fileToken(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || !strings.HasPrefix(u.Path, "/files/") {
		t.Fatalf("output URL %q", raw)
	}
	tok, _, _ := strings.Cut(path.Base(u.Path), ".")
	return tok
}

// TestLogsHoldNoSecrets runs traffic through the real server (generate,
// job reads, file GET, HEAD and ranges, wrong keys and tokens, keys
// created while it runs) and greps everything it logged for every secret
// the traffic carried.
func TestLogsHoldNoSecrets(t *testing.T) {
	dir := t.TempDir()
	const metricsToken = "metrics-token-in-logs-test"
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0", "--first-email", "ops@example.com", "--metrics-token", metricsToken)
	base := srv.base
	secrets := []string{srv.key, metricsToken}

	// The account area: a set-up link, passwords (right and wrong),
	// sessions and their CSRF tokens, a key made through the API.
	const password, wrongPassword = "operator password 1", "wrong password 2"
	link := linkToken(t, srv.link)
	secrets = append(secrets, link, password, wrongPassword)
	sessions := func(r httpResult) {
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Value != "" {
				secrets = append(secrets, c.Value)
			}
		}
		if csrf := r.str("csrfToken"); csrf != "" {
			secrets = append(secrets, csrf)
		}
	}
	r := mustAPI(t, base, "POST", "/api/v1/auth/link", "", map[string]any{"token": link, "password": password}, nil)
	wantCode(t, r, http.StatusOK)
	sessions(r)
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/auth/signin", "", map[string]any{"email": "ops@example.com", "password": wrongPassword}, nil), http.StatusUnauthorized)
	r = mustAPI(t, base, "POST", "/api/v1/auth/signin", "", map[string]any{"email": "ops@example.com", "password": password}, nil)
	wantCode(t, r, http.StatusOK)
	sessions(r)
	if len(secrets) < 7 {
		t.Fatalf("sign-in gave no session to look for: %v", r.header)
	}
	r = mustAPI(t, base, "POST", "/api/v1/keys", srv.key, map[string]any{"name": "made by the API"}, nil)
	wantCode(t, r, http.StatusCreated)
	secrets = append(secrets, r.str("key"))
	wantCode(t, mustAPI(t, base, "GET", "/metrics", metricsToken, nil, nil), http.StatusOK)
	key2 := lastLine(cli(t, "keys", "create", "--data", dir, "--credits", "50", "--name", "second"))
	secrets = append(secrets, key2)
	var fileTokens []string // outputs' URL tokens: stored as digests and sealed only
	for i, key := range []string{srv.key, key2, r.str("key")} {
		r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "fox " + string(rune('a'+i))}, nil)
		wantCode(t, r, http.StatusOK)
		wantCode(t, mustAPI(t, base, "GET", "/api/generation/jobs/"+r.str("jobId"), key, nil, nil), http.StatusOK)
		for _, u := range outputURLs(r) {
			secrets = append(secrets, fileToken(t, u))
			fileTokens = append(fileTokens, fileToken(t, u))
			if _, err := download(u); err != nil {
				t.Fatal(err)
			}
			p := strings.TrimPrefix(u, base)
			wantCode(t, mustAPI(t, base, "HEAD", p, "", nil, nil), http.StatusOK)
			wantCode(t, mustAPI(t, base, "GET", p, "", nil, map[string]string{"Range": "bytes=0-0"}), http.StatusPartialContent)
			wantCode(t, mustAPI(t, base, "GET", p+"?token="+key, "", nil, nil), http.StatusOK)
		}
	}
	// Refused calls carry secrets too: a wrong key, a wrong file token, a
	// key in a path and a query string.
	wrongKey := "gg_live_" + strings.Repeat("Zz9", 10) + "Q1"
	wrongToken := "Wr0ngT0kenWr0ngT0kenWr0ngT0ken42"
	secrets = append(secrets, wrongKey, wrongToken)
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/generate", wrongKey, map[string]any{"type": "image", "modelId": "flux"}, nil), http.StatusUnauthorized)
	wantCode(t, mustAPI(t, base, "GET", "/files/"+wrongToken+".png", "", nil, nil), http.StatusNotFound)
	wantCode(t, mustAPI(t, base, "GET", "/"+srv.key, "", nil, nil), http.StatusNotFound)
	wantCode(t, mustAPI(t, base, "GET", "/api/v1/models?key="+key2, srv.key, nil, nil), http.StatusOK)

	// Webhook signing secrets: the account's, and the one a rotation
	// answers; neither is logged, nor found in clear in any file of the
	// data directory (the database, its WAL), which holds them sealed, as
	// it holds the outputs' file tokens.
	whsec := mustAPI(t, base, "GET", "/api/v1/webhooks/secret", srv.key, nil, nil).str("secret")
	rotated := mustAPI(t, base, "POST", "/api/v1/webhooks/secret/rotate", srv.key, nil, nil).str("secret")
	if !strings.HasPrefix(whsec, "whsec_") || !strings.HasPrefix(rotated, "whsec_") || whsec == rotated {
		t.Fatalf("webhook secrets %q, %q", whsec, rotated)
	}
	secrets = append(secrets, whsec, rotated)

	srv.shutdown(t)
	logs := srv.stderr.String()
	if !strings.Contains(logs, `"/files/<redacted>.`) {
		t.Fatalf("the logs hold no request line for a file, so the test proves nothing:\n%s", logs)
	}
	assertNoSecrets(t, logs, secrets...)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, sec := range []string{whsec, rotated, strings.TrimPrefix(whsec, "whsec_"), strings.TrimPrefix(rotated, "whsec_")} {
			if strings.Contains(string(data), sec) {
				t.Errorf("%s holds a webhook secret in clear", path)
			}
		}
		for _, tok := range fileTokens {
			if strings.Contains(string(data), tok[8:]) { // its first 8 characters are its time
				t.Errorf("%s holds a file token in clear", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
