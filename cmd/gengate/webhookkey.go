package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/keyfile"
)

// webhookKeyFile is the file in --data holding the server key that seals
// webhook signing secrets and file URL tokens when --webhook-key is not
// set. It is a keyring: the current key on its first line, and during a
// rotation the previous key on the next (docs/server-key.md).
const webhookKeyFile = "webhook.key"

// serverKeyring is a process's server keys, the current one first, and
// the file they came from ("" when --webhook-key gave them).
type serverKeyring struct {
	keys [][]byte
	path string
}

// loadKeyring reads the server keys: --webhook-key (at least 32
// characters) and --webhook-previous-key when set, otherwise the key file
// in --data, made (0600, 32 random bytes) on the first start when create is
// set. Every process of a multi-process install must use the same keys.
func loadKeyring(data, key, previous string, create bool) (*serverKeyring, error) {
	if key != "" {
		if len(key) < 32 {
			return nil, errors.New("--webhook-key must be at least 32 characters")
		}
		ring := &serverKeyring{keys: [][]byte{[]byte(key)}}
		if previous != "" {
			if len(previous) < 32 {
				return nil, errors.New("--webhook-previous-key must be at least 32 characters")
			}
			ring.keys = append(ring.keys, []byte(previous))
		}
		return ring, nil
	}
	if previous != "" {
		return nil, errors.New("--webhook-previous-key needs --webhook-key (with the key file, the previous key is its second line)")
	}
	path := filepath.Join(data, webhookKeyFile)
	var b []byte
	var err error
	if create {
		b, err = readOrMakeKey(path)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("server key: %w (or set --webhook-key)", err)
	}
	keys, err := parseKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("server key %s: %w", path, err)
	}
	return &serverKeyring{keys: keys, path: path}, nil
}

// parseKeyFile reads a key file: one key a line, the current one first;
// blank lines and lines starting with # are skipped.
func parseKeyFile(b []byte) ([][]byte, error) {
	var keys [][]byte
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) < 32 {
			return nil, errors.New("a key shorter than 32 characters")
		}
		keys = append(keys, []byte(line))
	}
	if len(keys) == 0 {
		return nil, errors.New("no key in the file")
	}
	return keys, nil
}

// box returns the keyring's SecretBox. Keys from a file are watched: the
// box reads the file again (at most once a second before it seals, and
// when a value opens under none of its keys), so a running process learns
// a rotated key without a restart.
func (r *serverKeyring) box() (*gengate.SecretBox, error) {
	box, err := gengate.NewSecretBox(r.keys[0], r.keys[1:]...)
	if err != nil || r.path == "" {
		return box, err
	}
	last, _ := os.ReadFile(r.path)
	box.Watch(func() ([][]byte, error) {
		b, err := os.ReadFile(r.path)
		if err != nil || bytes.Equal(b, last) {
			return nil, err
		}
		keys, err := parseKeyFile(b)
		if err != nil {
			return nil, err
		}
		last = b
		return keys, nil
	})
	return box, nil
}

// webhookBox returns the box sealing webhook signing secrets and file URL
// tokens under the process's server keys (loadKeyring).
func webhookBox(cfg *Config) (*gengate.SecretBox, error) {
	ring, err := loadKeyring(cfg.Data, cfg.WebhookKey, cfg.WebhookPreviousKey, true)
	if err != nil {
		return nil, err
	}
	return ring.box()
}

// newServerKey is a fresh server key: 32 random bytes, base64.
func newServerKey() ([]byte, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(raw)), nil
}

// readOrMakeKey reads the key file, or makes it (newServerKey) when it
// does not exist (keyfile.ReadOrCreate: processes starting together agree
// on one); the file is made 0600 on every start, as the database's files
// are.
func readOrMakeKey(path string) ([]byte, error) {
	b, err := keyfile.ReadOrCreate(path, func() ([]byte, error) {
		k, err := newServerKey()
		return append(k, '\n'), err
	})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, err
	}
	return b, nil
}
