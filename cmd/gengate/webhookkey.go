package main

import (
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
// webhook signing secrets when --webhook-key is not set.
const webhookKeyFile = "webhook.key"

// webhookBox returns the box sealing webhook signing secrets: keyed by
// --webhook-key when set (at least 32 characters), otherwise by
// <data>/webhook.key, made (0600, 32 random bytes) on the first start.
// Every process of a multi-process install must use the same key: set
// --webhook-key on all of them, or give them the same file.
func webhookBox(cfg *Config) (*gengate.SecretBox, error) {
	if cfg.WebhookKey != "" {
		if len(cfg.WebhookKey) < 32 {
			return nil, errors.New("--webhook-key must be at least 32 characters")
		}
		return gengate.NewSecretBox([]byte(cfg.WebhookKey))
	}
	key, err := readOrMakeKey(filepath.Join(cfg.Data, webhookKeyFile))
	if err != nil {
		return nil, fmt.Errorf("webhook key: %w (or set --webhook-key)", err)
	}
	return gengate.NewSecretBox(key)
}

// readOrMakeKey reads the key file, or makes it (32 random bytes, base64)
// when it does not exist (keyfile.ReadOrCreate: processes starting
// together agree on one); the file is made 0600 on every start, as the
// database's files are.
func readOrMakeKey(path string) ([]byte, error) {
	b, err := keyfile.ReadOrCreate(path, func() ([]byte, error) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		return []byte(base64.StdEncoding.EncodeToString(raw) + "\n"), nil
	})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSpace(string(b))), nil
}
