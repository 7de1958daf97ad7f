package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gengate/gengate"
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

// readOrMakeKey reads the key file (making it 0600), or makes it when it
// does not exist;
// of processes starting together, the first to link its file wins and
// the others read it.
func readOrMakeKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		// The operator's alone, as the database (0600 on every start).
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, err
		}
		return []byte(strings.TrimSpace(string(b))), nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	tmp := fmt.Sprintf("%s.%d.%d.tmp", path, os.Getpid(), time.Now().UnixNano())
	if err := os.WriteFile(tmp, []byte(base64.StdEncoding.EncodeToString(raw)+"\n"), 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	b, err := os.ReadFile(path)
	return []byte(strings.TrimSpace(string(b))), err
}
