package gengate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SecretBox keeps secrets the server must read back (webhook signing
// secrets, the keys of an HMAC it computes) encrypted at rest: AES-256-GCM
// under a server key, with a random nonce per seal and the owner's ids as
// associated data, so a sealed value copied onto another account's row
// does not open. The server key is the operator's (--webhook-key, or the
// file <data>/webhook.key made on first start; docs/server-key.md).
//
// A box holds a keyring: the current key, which seals, and the previous
// keys of a rotation, which still open what they sealed, so that records
// re-sealed under the new key and records not yet re-sealed both open
// while a rotation runs.
type SecretBox struct {
	ring atomic.Pointer[[]cipher.AEAD] // the current key first

	// load, when set, reads the keyring again (Watch).
	load     func() ([][]byte, error)
	loadMu   sync.Mutex
	loadedAt atomic.Int64 // unix nanoseconds of the last load
}

// sealedPrefix starts every sealed value (its format's version).
const sealedPrefix = "gcm1:"

// keyReloadEvery is how often, at most, Seal asks a watched box's loader
// for its keys, so that a process learns a rotated key within it.
const keyReloadEvery = time.Second

// NewSecretBox returns a box that seals under key and opens what key or
// one of the previous keys sealed. Each key must hold at least 32 bytes;
// the box is keyed by its SHA-256.
func NewSecretBox(key []byte, previous ...[]byte) (*SecretBox, error) {
	b := &SecretBox{}
	ring, err := makeRing(append([][]byte{key}, previous...))
	if err != nil {
		return nil, err
	}
	b.ring.Store(&ring)
	return b, nil
}

func makeRing(keys [][]byte) ([]cipher.AEAD, error) {
	if len(keys) == 0 {
		return nil, errors.New("secret box: no key")
	}
	ring := make([]cipher.AEAD, 0, len(keys))
	for _, key := range keys {
		if len(key) < 32 {
			return nil, errors.New("secret box key: at least 32 bytes are needed")
		}
		k := sha256.Sum256(key)
		block, err := aes.NewCipher(k[:])
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		ring = append(ring, aead)
	}
	return ring, nil
}

// Watch makes the box ask load for its keys (the current one first) at
// most once a second before it seals, and whenever a value opens under
// none of the keys it has: a process whose keys come from a file learns a
// rotated key without a restart. load returns nil keys when nothing
// changed; an error keeps the keys the box has.
func (b *SecretBox) Watch(load func() ([][]byte, error)) {
	b.load = load
	b.loadedAt.Store(time.Now().UnixNano())
}

// reload asks the loader for the keys when the last load is older than
// every (0: always), and reports whether the keyring changed.
func (b *SecretBox) reload(every time.Duration) bool {
	if b.load == nil {
		return false
	}
	if every > 0 && time.Since(time.Unix(0, b.loadedAt.Load())) < every {
		return false
	}
	b.loadMu.Lock()
	defer b.loadMu.Unlock()
	if every > 0 && time.Since(time.Unix(0, b.loadedAt.Load())) < every {
		return false
	}
	b.loadedAt.Store(time.Now().UnixNano())
	keys, err := b.load()
	if err != nil || keys == nil {
		return false
	}
	ring, err := makeRing(keys)
	if err != nil {
		return false
	}
	b.ring.Store(&ring)
	return true
}

// Keys is how many keys the box holds: 1, or more while a rotation's
// previous keys still open.
func (b *SecretBox) Keys() int { return len(*b.ring.Load()) }

// Seal encrypts secret for the owner (ids joined as associated data)
// under the current key.
func (b *SecretBox) Seal(secret string, owner ...string) string {
	b.reload(keyReloadEvery)
	aead := (*b.ring.Load())[0]
	nonce := make([]byte, aead.NonceSize())
	if _, err := cryptorand(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	out := aead.Seal(nonce, nonce, []byte(secret), ownerData(owner))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value Seal made for the same owner, under any key of
// the keyring.
func (b *SecretBox) Open(sealed string, owner ...string) (string, error) {
	plain, _, err := b.open(sealed, owner)
	return plain, err
}

// Reseal opens sealed and, when a previous key sealed it, seals it again
// under the current key: resealed is the new value and changed is true.
// A value the current key sealed is left as it is (changed false).
func (b *SecretBox) Reseal(sealed string, owner ...string) (resealed string, changed bool, err error) {
	plain, which, err := b.open(sealed, owner)
	if err != nil {
		return "", false, err
	}
	if which == 0 {
		return sealed, false, nil
	}
	return b.Seal(plain, owner...), true, nil
}

// open returns the plain value and the index in the keyring of the key
// that opened it.
func (b *SecretBox) open(sealed string, owner []string) (string, int, error) {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, sealedPrefix))
	if err != nil || !strings.HasPrefix(sealed, sealedPrefix) || len(raw) < 12 {
		return "", 0, errors.New("sealed secret: not a sealed value")
	}
	for attempt := 0; attempt < 2; attempt++ {
		for i, aead := range *b.ring.Load() {
			n := aead.NonceSize()
			if plain, err := aead.Open(nil, raw[:n], raw[n:], ownerData(owner)); err == nil {
				return string(plain), i, nil
			}
		}
		// A key rotated in since the last load may open it.
		if attempt == 0 && !b.reload(0) {
			break
		}
	}
	return "", 0, &Error{Code: EServerKey, Message: "this record is sealed under a server key this server was not given; " +
		"the operator must start it with the install's key (--webhook-key or <data>/webhook.key), " +
		"or list and re-issue the lost records (gengate server-key lost: docs/server-key.md)"}
}

func ownerData(owner []string) []byte {
	return []byte("gengate secret\x00" + strings.Join(owner, "\x00"))
}
