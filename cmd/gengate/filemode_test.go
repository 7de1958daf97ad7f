package main

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestFileModesFixedOnStart starts the real server on a --data directory
// that exists with 0755 and holds 0644 files (made by hand, or by an
// older gengate), and checks that after start every directory is 0700 and
// every file 0600: the database, its WAL and shared memory, and the
// stored files.
func TestFileModesFixedOnStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	r := mustAPI(t, srv.base, "POST", "/api/v1/generate", srv.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "modes"}, nil)
	wantCode(t, r, http.StatusOK)
	key := srv.key
	srv.shutdown(t)

	// Open everything up, as a hand-made directory would be.
	var files int
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		files++
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 2 {
		t.Fatalf("only %d files under %s before the second start", files, dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "files", "outputs", "stray.png"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	srv = runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	r = mustAPI(t, srv.base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "modes again"}, nil)
	wantCode(t, r, http.StatusOK)
	// While the server runs: the WAL and shared-memory files exist.
	for _, name := range []string{"gengate.db", "gengate.db-wal", "gengate.db-shm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	checkModes(t, dir)
	srv.shutdown(t)
	checkModes(t, dir)
}

func checkModes(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", p, info.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
