package blob

import (
	"crypto/rand"
	"fmt"
	"path/filepath"

	"github.com/gengate/gengate/internal/keyfile"
)

// signingKeyFile is the name, under a Local store's root, of the key that
// signs gengate's input URLs (gengate.SignInputURL). It lives with the
// files it gives access to: every process that serves a local store must
// share its directory, so they share the key too (docs/security.md).
const signingKeyFile = ".signing-key"

// SigningKey returns the store's 32-byte URL signing key, creating it on
// first use (random, 0600; keyfile.ReadOrCreate: processes starting at
// once agree on one).
func (l *Local) SigningKey() ([]byte, error) {
	p := filepath.Join(l.dir, signingKeyFile)
	key, err := keyfile.ReadOrCreate(p, func() ([]byte, error) {
		key := make([]byte, 32)
		_, err := rand.Read(key)
		return key, err
	})
	if err == nil && len(key) != 32 {
		return nil, fmt.Errorf("blob: %s holds %d bytes, want a 32-byte key (remove it to make a new one)", p, len(key))
	}
	return key, err
}
