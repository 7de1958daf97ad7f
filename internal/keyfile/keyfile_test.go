package keyfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestReadOrCreate: processes (here goroutines) starting together with
// different fresh keys all get the one that was linked first, the file is
// 0600 and alone in its directory (no temporary file left), a later call
// reads it without making a new key, and a failing fresh writes nothing.
func TestReadOrCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "server.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := ReadOrCreate(path, func() ([]byte, error) { return fmt.Appendf(nil, "key-%d", i), nil })
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		if !bytes.Equal(k, keys[0]) || len(k) == 0 {
			t.Fatalf("the callers got different keys: %q", keys)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files beside the key, want none", len(entries)-1)
	}
	again, err := ReadOrCreate(path, func() ([]byte, error) { t.Error("a new key was made for an existing file"); return nil, nil })
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("read back %q, %v; want %q", again, err, keys[0])
	}

	other := filepath.Join(dir, "other.key")
	if _, err := ReadOrCreate(other, func() ([]byte, error) { return nil, errors.New("no randomness") }); err == nil {
		t.Error("a failing fresh was not an error")
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failing fresh left a key file: %v", err)
	}
}
