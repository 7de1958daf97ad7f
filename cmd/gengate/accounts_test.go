package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// binaryRun runs the real binary with args and returns its stdout; it
// fails the test when the command fails.
func binaryRun(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gengate %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func linkToken(t *testing.T, link string) string {
	t.Helper()
	_, token, ok := strings.Cut(link, "/#/link/")
	if !ok || len(token) != 32 {
		t.Fatalf("not a link: %q", link)
	}
	return token
}

// TestAccountsCLI runs the real binary: the first start prints a working
// set-up link for its operator beside the key; accounts create prints a
// set-up link as its last line; accounts link, list and show, keys list
// and keys revoke by full key, prefix or id work against a running server.
func TestAccountsCLI(t *testing.T) {
	dir := t.TempDir()
	srv := exec.Command(binary(t), "serve", "--data", dir, "--addr", "127.0.0.1:0", "--review-terms", "hold me",
		"--first-email", "Boss@Example.com")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	lines := startLines(stdout)
	var firstLink, base, firstKey string
	deadline := time.After(60 * time.Second)
	for base == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("server ended: %s", stderr.String())
			}
			switch {
			case strings.Contains(line, "/#/link/"):
				firstLink = line
			case strings.HasPrefix(line, "gg_live_"):
				firstKey = line
			case strings.HasPrefix(line, "gengate listening on "):
				base = strings.TrimPrefix(line, "gengate listening on ")
			}
		case <-deadline:
			t.Fatalf("no banner: %s", stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	if firstKey == "" || firstLink == "" || !strings.HasPrefix(firstLink, base+"/#/link/") {
		t.Fatalf("first start printed key %q link %q (base %s)", firstKey, firstLink, base)
	}
	r := mustAPI(t, base, "POST", "/api/v1/auth/link", "", map[string]any{"token": linkToken(t, firstLink), "password": "operator password"}, nil)
	wantCode(t, r, http.StatusOK)
	if r.json["operator"] != true || r.json["member"].(map[string]any)["email"] != "boss@example.com" {
		t.Errorf("first-start member %s", r.body)
	}

	out := binaryRun(t, "accounts", "create", "--data", dir, "--email", "Cust@Example.com", "--credits", "40", "--name", "Cust Ltd",
		"--public-url", base)
	token := linkToken(t, lastLine(out))
	r = mustAPI(t, base, "POST", "/api/v1/auth/link", "", map[string]any{"token": token, "password": "customer password"}, nil)
	wantCode(t, r, http.StatusOK)
	account := r.str("accountId")
	if r.json["operator"] != false || r.str("accountName") != "Cust Ltd" {
		t.Errorf("created member %s", r.body)
	}
	// The link was single use; accounts link prints a fresh one.
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/auth/link", "", map[string]any{"token": token}, nil), http.StatusUnauthorized)
	out = binaryRun(t, "accounts", "link", "--data", dir, "--email", "cust@example.com", "--public-url", base)
	wantCode(t, mustAPI(t, base, "POST", "/api/v1/auth/link", "", map[string]any{"token": linkToken(t, lastLine(out))}, nil), http.StatusOK)

	out = binaryRun(t, "accounts", "list", "--data", dir)
	if !strings.Contains(out, account) || !strings.Contains(out, "cust@example.com") || !strings.Contains(out, "40") ||
		!strings.Contains(out, "boss@example.com (operator)") {
		t.Errorf("accounts list:\n%s", out)
	}
	out = binaryRun(t, "keys", "create", "--data", dir, "--credits", "0", "--name", "spare")
	spare := lastLine(out)
	// A key of the customer's account, made through the API.
	r = mustAPI(t, base, "POST", "/api/v1/keys", firstKey, map[string]any{"name": "ops"}, nil)
	wantCode(t, r, http.StatusCreated)
	opsKey, opsID := r.str("key"), r.str("id")

	out = binaryRun(t, "accounts", "show", "--data", dir, "boss@example.com")
	if !strings.Contains(out, opsKey[:len("gg_live_")+6]) || strings.Contains(out, opsKey) || !strings.Contains(out, "operator") {
		t.Errorf("accounts show:\n%s", out)
	}
	out = binaryRun(t, "keys", "list", "--data", dir)
	if !strings.Contains(out, spare[:len("gg_live_")+6]) || !strings.Contains(out, opsID) || strings.Contains(out, spare) {
		t.Errorf("keys list:\n%s", out)
	}

	// Revoke by the full key, then by id: refused within --key-refresh.
	wantCode(t, mustAPI(t, base, "GET", "/api/v1/account", spare, nil, nil), http.StatusOK)
	out = binaryRun(t, "keys", "revoke", "--data", dir, spare)
	if strings.Contains(out, spare) {
		t.Errorf("keys revoke printed the whole key: %s", out)
	}
	waitRefused(t, base, spare)
	binaryRun(t, "keys", "revoke", "--data", dir, opsID)
	waitRefused(t, base, opsKey)

	// review list shows prompt and account.
	r = mustAPI(t, base, "POST", "/api/v1/generate", firstKey, map[string]any{"type": "image", "modelId": "flux", "prompt": "please hold me now"},
		map[string]string{"Prefer": "respond-async"})
	out = binaryRun(t, "review", "list", "--data", dir)
	if !strings.Contains(out, "please hold me now") || !strings.Contains(out, "default") {
		t.Errorf("review list:\n%s", out)
	}

	// The server's log never holds a password, a key, a link or session
	// token (it logged every request above).
	logs := stderr.String()
	if !strings.Contains(logs, "/api/v1/auth/link") {
		t.Fatalf("the server's log has no requests: the check sees nothing:\n%s", logs)
	}
	for what, secret := range map[string]string{"operator password": "operator password", "customer password": "customer password",
		"first link": linkToken(t, firstLink), "created link": token, "first key": firstKey, "ops key": opsKey, "spare key": spare} {
		if strings.Contains(logs, secret) {
			t.Errorf("the server's log holds the %s", what)
		}
	}
}

// TestVersionAndHelp: gengate version, --version and <cmd> --help exit 0
// and print to stdout.
func TestVersionAndHelp(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if out := binaryRun(t, args...); !strings.HasPrefix(out, "gengate ") {
			t.Errorf("gengate %s: %q", args[0], out)
		}
	}
	for _, args := range [][]string{{"serve", "--help"}, {"keys", "revoke", "--help"}, {"accounts", "create", "-h"}, {"keys", "--help"},
		{"review", "list", "--help"}} {
		out := binaryRun(t, args...)
		if !strings.Contains(out, "-") || len(out) < 20 {
			t.Errorf("gengate %s: %q", strings.Join(args, " "), out)
		}
	}
	if out := binaryRun(t, "accounts", "create", "--help"); !strings.Contains(out, "-email") || !strings.Contains(out, "-operator") {
		t.Errorf("accounts create --help:\n%s", out)
	}
}

// TestAdminEnginesStatus: the operator's engines page asks each provider
// (here two ComfyUI servers, one answering and one not) and shows which
// answers.
func TestAdminEnginesStatus(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // nothing listens there any more
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gengate.yaml")
	yaml := "providers:\n  upcomfy:\n    type: comfyui\n    baseUrl: " + up.URL + "\n  downcomfy:\n    type: comfyui\n    baseUrl: " + downURL + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0", "--config", cfg)
	// The first-start key is a plain key: operator powers need a key the
	// CLI made for that purpose (or an operator's session).
	wantCode(t, mustAPI(t, srv.base, "GET", "/api/v1/admin/engines", srv.key, nil, nil), http.StatusForbidden)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--data", dir, "--account", srv.account, "--operator", "--name", "ops"},
		noEnv, &out, &errOut); err != nil {
		t.Fatalf("keys create --operator: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	opKey := lines[len(lines)-1]
	if !strings.Contains(out.String(), "operator key") || !strings.HasPrefix(opKey, gengate.KeyPrefix) {
		t.Fatalf("keys create --operator printed %q", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"keys", "list", "--data", dir, "--account", srv.account}, noEnv, &out, &errOut); err != nil ||
		!strings.Contains(out.String(), "active, operator") {
		t.Errorf("keys list does not show the operator key (%v):\n%s", err, out.String())
	}
	r := mustAPI(t, srv.base, "GET", "/api/v1/admin/engines", opKey, nil, nil)
	wantCode(t, r, http.StatusOK)
	got := map[string]string{}
	for _, e := range r.json["data"].([]any) {
		m := e.(map[string]any)
		got[m["name"].(string)] = m["kind"].(string) + " " + m["status"].(string)
	}
	want := map[string]string{"upcomfy": "provider ok", "downcomfy": "provider unreachable", "sandbox": "sandbox ok", "builtin": "builtin ok"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("engine %s: %q, want %q (all: %v)", name, got[name], w, got)
		}
	}
}
