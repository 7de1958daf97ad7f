package main

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestMigrateData moves a used SQLite installation to PostgreSQL with
// migrate-data, then serves the PostgreSQL database: the old key works,
// a replayed Idempotency-Key finds its task, the balance is the same, and
// the output URL still serves its file (from the old --storage).
func TestMigrateData(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	key := srv.key
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "a fox"}
	idem := map[string]string{"Idempotency-Key": "move-me-1"}
	r := mustAPI(t, srv.base, "POST", "/api/v1/generate", key, body, idem)
	wantCode(t, r, http.StatusOK)
	jobID, credits := r.str("jobId"), r.num("remainingCredits")
	if jobID == "" || len(outputURLs(r)) != 1 {
		t.Fatalf("generate: %s", r.body)
	}
	out := cli(t, "keys", "create", "--data", dir, "--credits", "5", "--name", "second")
	key2 := lastLine(out)
	srv.shutdown(t)

	pg := sqltest.URL(t, "postgres")

	// A dry run counts and writes nothing.
	out = cli(t, "migrate-data", "--from", dir, "--to", pg, "--dry-run")
	for _, want := range []string{"dry run", "11 rows would be copied; the destination is empty"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	wantCounts(t, out, map[string]int{"accounts": 2, "api_keys": 2, "members": 1, "sessions": 0, "login_links": 1, "tasks": 1, "ledger": 3, "creations": 1, "uploads": 0, "task_progress": 0,
		"task_webhooks": 0, "webhook_secrets": 0, "webhook_endpoints": 0, "webhook_events": 0, "webhook_attempts": 0,
		"webhook_backoff": 0, "redemption_codes": 0, "purchases": 0, "upstream_costs": 0, "signing_keys": 0})

	out = cli(t, "migrate-data", "--from", dir, "--to", pg)
	for _, want := range []string{"SQLite " + filepath.Join(dir, "gengate.db"), "PostgreSQL postgres://",
		"copied 11 rows in one transaction, verified", "NOT copied", filepath.Join(dir, "files")} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate-data output lacks %q:\n%s", want, out)
		}
	}
	wantCounts(t, out, map[string]int{"accounts": 2, "api_keys": 2, "members": 1, "sessions": 0, "login_links": 1, "tasks": 1, "ledger": 3, "creations": 1, "uploads": 0, "task_progress": 0,
		"task_webhooks": 0, "webhook_secrets": 0, "webhook_endpoints": 0, "webhook_events": 0, "webhook_attempts": 0,
		"webhook_backoff": 0, "redemption_codes": 0, "purchases": 0, "upstream_costs": 0, "signing_keys": 0})
	t.Logf("migrate-data printed:\n%s", out)

	// Twice is refused, and changes nothing.
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"migrate-data", "--from", dir, "--to", pg}, noEnv, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "nothing copied") {
		t.Fatalf("second migrate-data = %v; want a refusal (destination not empty)", err)
	}
	err = run(context.Background(), []string{"migrate-data", "--from", dir, "--to", pg, "--dry-run"}, noEnv, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("dry run into the copy = %v; want it to say a real run would be refused", err)
	}

	// Without the old server key a serve of the copy stops at start with
	// the instruction, instead of starting and failing every sealed read:
	// migrate-data carried the key check.
	noKey, cancelNoKey := context.WithTimeout(context.Background(), 30*time.Second)
	err = run(noKey, []string{"serve", "--database", pg, "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, noEnv, &stdout, &stderr)
	cancelNoKey()
	if err == nil || !strings.Contains(err.Error(), "sealed under another key") || !strings.Contains(err.Error(), "--webhook-key") {
		t.Fatalf("serve of the copy with a new key = %v; want a refusal naming the key to give", err)
	}

	// Serve the PostgreSQL copy, with the old output files.
	// With the old server's key, as migrate-data says: the files' URL
	// tokens are sealed under it.
	serverKey, err := os.ReadFile(filepath.Join(dir, webhookKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pgSrv := runServer(t, "--database", pg, "--data", t.TempDir(), "--storage", filepath.Join(dir, "files"), "--addr", "127.0.0.1:0",
		"--webhook-key", strings.TrimSpace(string(serverKey)))
	if pgSrv.key != "" {
		t.Errorf("the copy looked empty to serve: it printed a first-start key")
	}
	r = mustAPI(t, pgSrv.base, "POST", "/api/v1/generate", key, body, idem)
	wantCode(t, r, http.StatusOK)
	if r.str("jobId") != jobID || r.num("remainingCredits") != credits {
		t.Errorf("replay on the copy: %s; want job %s, %d credits left", r.body, jobID, credits)
	}
	urls := outputURLs(r)
	if len(urls) != 1 {
		t.Fatalf("replay on the copy has outputs %v", urls)
	}
	if data, err := download(urls[0]); err != nil || !isMedia(data) {
		t.Errorf("output %s on the copy: %v", urls[0], err)
	}
	r = mustAPI(t, pgSrv.base, "GET", "/api/generation/jobs/"+jobID, key, nil, nil)
	if r.str("status") != "succeeded" {
		t.Errorf("job on the copy: %s", r.body)
	}
	// The second key works, and new work is charged on the copy.
	r = mustAPI(t, pgSrv.base, "POST", "/api/v1/generate", key2, map[string]any{"type": "image", "modelId": "z-image-turbo", "prompt": "x"}, nil)
	wantCode(t, r, http.StatusOK)
	if r.num("remainingCredits") != 4 {
		t.Errorf("second key on the copy: %s; want 4 credits left", r.body)
	}
}

// TestMigrateDataUsage: bad arguments are clear errors that touch nothing.
func TestMigrateDataUsage(t *testing.T) {
	dir := t.TempDir()
	cli(t, "keys", "create", "--data", dir, "--credits", "1", "--init")
	missing := filepath.Join(t.TempDir(), "nothing-here")
	file := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", t.TempDir()}, "--from is required"},
		{[]string{"--from", dir}, "--to is required"},
		{[]string{"--from", missing, "--to", t.TempDir()}, "no gengate database"},
		{[]string{"--from", dir, "--to", dir}, "same database"},
		{[]string{"--from", filepath.Join(dir, "gengate.db"), "--to", dir}, "same database"},
		{[]string{"--from", dir, "--to", "mysql://x"}, "want a postgres:// URL"},
		{[]string{"--from", file, "--to", t.TempDir()}, "is a file"},
		{[]string{"--from", dir, "--to", t.TempDir(), "extra"}, "unexpected argument"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"migrate-data"}, c.args...), noEnv, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("migrate-data %q = %v; want an error containing %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a missing --from directory was created")
	}

	// SQLite to SQLite, into a directory that does not exist yet; a dry
	// run does not create it.
	to := filepath.Join(t.TempDir(), "new")
	out := cli(t, "migrate-data", "--from", dir, "--to", to, "--dry-run")
	if !strings.Contains(out, "would be copied into a new database") {
		t.Errorf("dry run into a new directory:\n%s", out)
	}
	if _, err := os.Stat(to); !os.IsNotExist(err) {
		t.Errorf("the dry run created %s", to)
	}
	out = cli(t, "migrate-data", "--from", dir, "--to", to)
	if !strings.Contains(out, "copied 3 rows") || !strings.Contains(out, filepath.Join(to, "files")) {
		t.Errorf("migrate-data into a new directory:\n%s", out)
	}
}

// wantCounts checks the TABLE ROWS lines migrate-data printed.
func wantCounts(t *testing.T, out string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				got[f[0]] = n
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("printed counts %v; want %v in:\n%s", got, want, out)
	}
}

// TestMigrateDataCarriesServerKey: SQLite to SQLite, migrate-data copies
// the server key into the new directory, and a server there answers the
// migrated task and serves its file (the token opens under the key).
func TestMigrateDataCarriesServerKey(t *testing.T) {
	dir, dir2 := t.TempDir(), filepath.Join(t.TempDir(), "new")
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	r := mustAPI(t, srv.base, "POST", "/api/v1/generate", srv.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "keep me"}, nil)
	wantCode(t, r, http.StatusOK)
	jobID := r.str("jobId")
	srv.shutdown(t)

	out := cli(t, "migrate-data", "--from", dir, "--to", dir2)
	if !strings.Contains(out, "server key: copied") {
		t.Errorf("migrate-data does not say it copied the server key:\n%s", out)
	}
	old, _ := os.ReadFile(filepath.Join(dir, webhookKeyFile))
	st, err := os.Stat(filepath.Join(dir2, webhookKeyFile))
	if got, _ := os.ReadFile(filepath.Join(dir2, webhookKeyFile)); err != nil || string(got) != string(old) || st.Mode().Perm() != 0o600 {
		t.Fatalf("the new directory's key: %v (mode %v), want the old one, 0600", err, st)
	}
	srv2 := runServer(t, "--data", dir2, "--storage", filepath.Join(dir, "files"), "--addr", "127.0.0.1:0")
	r = mustAPI(t, srv2.base, "GET", "/api/generation/jobs/"+jobID, srv.key, nil, nil)
	wantCode(t, r, http.StatusOK)
	urls := outputURLs(r)
	if len(urls) != 1 {
		t.Fatalf("the migrated task has outputs %v: %s", urls, r.body)
	}
	if data, err := download(urls[0]); err != nil || !isMedia(data) {
		t.Errorf("output %s after the move: %v", urls[0], err)
	}
}
