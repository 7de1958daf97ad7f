package main

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// waitRefused waits until the server answers 401 UNAUTHORIZED to the key
// (a revocation made by another process reaches a server's key cache
// within --key-refresh, 1 s by default) and returns how long that took.
// The 30 s deadline is only there to end a test that would never pass.
func waitRefused(t *testing.T, base, key string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		r := mustAPI(t, base, "GET", "/api/v1/keys", key, nil, nil)
		if r.status == http.StatusUnauthorized {
			if r.str("code") != gengate.EUnauthorized {
				t.Fatalf("revoked key: %s", r.body)
			}
			return time.Since(start)
		}
		wantCode(t, r, http.StatusOK)
		if time.Since(start) > 30*time.Second {
			t.Fatalf("a revoked key was still accepted 30 s after its revocation by another process")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKeyRevokedAcrossProcesses: a key that a server has authenticated
// (and so keeps in memory) is refused by it once another process revokes
// it: on PostgreSQL another server process (through its API); on SQLite
// the CLI, the other process that writes the same database file. The test
// waits for the refusal; the design bounds it by --key-refresh (1 s).
func TestKeyRevokedAcrossProcesses(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dbURL, data := sqltest.URL(t, dialect), t.TempDir()
			var a *process
			if dialect == "postgres" {
				a = startProcess(t, "--database", dbURL, "--data", data, "--addr", "127.0.0.1:0")
			} else {
				a = startProcess(t, "--data", data, "--addr", "127.0.0.1:0")
			}
			if a.key == "" {
				t.Fatalf("no first-start key; %s", a.logTail())
			}
			// A second key of the account, to be revoked; the server
			// authenticates it a few times, so it is in its memory.
			r := mustAPI(t, a.base, "POST", "/api/v1/keys", a.key, map[string]any{"name": "to revoke"}, nil)
			wantCode(t, r, http.StatusCreated)
			key, id := r.str("key"), r.str("id")
			for range 3 {
				wantCode(t, mustAPI(t, a.base, "GET", "/api/v1/keys", key, nil, nil), http.StatusOK)
			}

			var took time.Duration
			if dialect == "postgres" {
				// Another process of the install: its own --data, the
				// install's server key (docs/security.md).
				bData := t.TempDir()
				copyFile(t, filepath.Join(data, webhookKeyFile), filepath.Join(bData, webhookKeyFile))
				b := startProcess(t, "--database", dbURL, "--data", bData, "--addr", "127.0.0.1:0")
				wantCode(t, mustAPI(t, b.base, "DELETE", "/api/v1/keys/"+id, a.key, nil, nil), http.StatusNoContent)
				took = waitRefused(t, a.base, key)
			} else {
				binaryRun(t, "keys", "revoke", "--data", data, id)
				took = waitRefused(t, a.base, key)
			}
			t.Logf("refused %v after the other process's revocation returned (--key-refresh 1s)", took.Round(time.Millisecond))
			wantCode(t, mustAPI(t, a.base, "GET", "/api/v1/keys", a.key, nil, nil), http.StatusOK)
		})
	}
}
