package gengate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// SecretBox keeps secrets the server must read back (webhook signing
// secrets, the keys of an HMAC it computes) encrypted at rest: AES-256-GCM
// under a server key, with a random nonce per seal and the owner's ids as
// associated data, so a sealed value copied onto another account's row
// does not open. The server key is the operator's (--webhook-key, or the
// file <data>/webhook.key made on first start; docs/security.md).
type SecretBox struct {
	aead cipher.AEAD
}

// sealedPrefix starts every sealed value (its format's version).
const sealedPrefix = "gcm1:"

// NewSecretBox returns a box keyed by the SHA-256 of key, which must hold
// at least 32 bytes.
func NewSecretBox(key []byte) (*SecretBox, error) {
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
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts secret for the owner (ids joined as associated data).
func (b *SecretBox) Seal(secret string, owner ...string) string {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := cryptorand(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	out := b.aead.Seal(nonce, nonce, []byte(secret), ownerData(owner))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value Seal made for the same owner.
func (b *SecretBox) Open(sealed string, owner ...string) (string, error) {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, sealedPrefix))
	if err != nil || !strings.HasPrefix(sealed, sealedPrefix) || len(raw) < b.aead.NonceSize() {
		return "", errors.New("sealed secret: not a sealed value")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], ownerData(owner))
	if err != nil {
		return "", &Error{Code: EServerKey, Message: "this record is sealed under a server key this server was not given; " +
			"the operator must start it with the install's key (--webhook-key or <data>/webhook.key: docs/server-key.md)"}
	}
	return string(plain), nil
}

func ownerData(owner []string) []byte {
	return []byte("gengate secret\x00" + strings.Join(owner, "\x00"))
}
