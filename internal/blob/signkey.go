package blob

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// signingKeyFile is the name, under a Local store's root, of the key that
// signs gengate's input URLs (gengate.SignInputURL). It lives with the
// files it gives access to: every process that serves a local store must
// share its directory, so they share the key too (docs/security.md).
const signingKeyFile = ".signing-key"

// SigningKey returns the store's 32-byte URL signing key, creating it on
// first use (random, 0600). Two processes starting at once agree: the key
// is written to a temporary file, synced, and hard-linked into place,
// which fails if another got there first; then the one in place is read.
func (l *Local) SigningKey() ([]byte, error) {
	p := filepath.Join(l.dir, signingKeyFile)
	if key, err := readKey(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(l.dir, signingKeyFile+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Sync() // CreateTemp makes it 0600
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), p); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKey(p)
}

func readKey(p string) ([]byte, error) {
	key, err := os.ReadFile(p)
	if err == nil && len(key) != 32 {
		return nil, fmt.Errorf("blob: %s holds %d bytes, want a 32-byte key (remove it to make a new one)", p, len(key))
	}
	return key, err
}
