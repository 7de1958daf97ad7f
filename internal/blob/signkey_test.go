package blob_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gengate/gengate/internal/blob"
)

// TestSigningKey: the key is made once, 32 bytes at mode 0600; stores
// opened on the same directory at once (processes starting together) all
// get that one key, and a later open reads it back; a file of another
// size is an error, not a silently shorter key.
func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := blob.NewLocal(dir)
			if err == nil {
				keys[i], err = l.SigningKey()
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	p := filepath.Join(dir, ".signing-key")
	onDisk, err := os.ReadFile(p)
	if err != nil || len(onDisk) != 32 {
		t.Fatalf("key file: %d bytes, %v", len(onDisk), err)
	}
	for i, k := range keys {
		if !bytes.Equal(k, onDisk) {
			t.Fatalf("store %d got another key than the one on disk", i)
		}
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", info.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".signing-key.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary key files left: %v", left)
	}
	if err := os.WriteFile(p, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, _ := blob.NewLocal(dir)
	if _, err := l.SigningKey(); err == nil {
		t.Fatal("a 5-byte key file was accepted")
	}
}
