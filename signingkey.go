package gengate

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"time"
)

// The install's signing keys: ED25519 key pairs that sign the webhooks a
// provider-compatible API sends as its provider signs them (a fal queue
// request's: docs/fal.md, "Webhooks"), where the receiver checks the
// signature with public keys it fetches (a JWKS) instead of a shared
// secret. gengate cannot sign as the provider, so it publishes its own
// public keys and a receiver changes only where it fetches them.
//
// An install makes its key on first use; the store keeps its private
// half (the seed) sealed under the server key (SecretBox, as the webhook
// secrets), so that a copy of the database signs nothing, and its public
// half in the clear, to publish. The newest key signs; every stored key
// is published, so two processes that made one at the same moment each
// sign with a key the receivers find.

// SigningKey is one of the install's signing keys.
type SigningKey struct {
	// ID is the key's id, its JWK "kid": "sk_" and a UUID.
	ID string
	// Public is the ED25519 public key.
	Public ed25519.PublicKey
	// Sealed is the private key's seed, sealed for SigningKeyOwner(ID).
	Sealed    string
	CreatedAt time.Time
}

// SigningKeyPrefix starts every signing key's id.
const SigningKeyPrefix = "sk_"

// SigningKeyOwner is the owner a signing key's seed is sealed for.
func SigningKeyOwner(id string) []string { return []string{"signing-key", id} }

// newSigningKey makes a key pair, its seed sealed in box.
func newSigningKey(box *SecretBox, now time.Time) (*SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	k := &SigningKey{ID: SigningKeyPrefix + NewID(), Public: pub, CreatedAt: now}
	k.Sealed = box.Seal(base64.StdEncoding.EncodeToString(priv.Seed()), SigningKeyOwner(k.ID)...)
	return k, nil
}

// SigningKeys returns the install's signing keys, newest first (the one
// that signs), making the first on first use.
func (s *Service) SigningKeys(ctx context.Context) ([]*SigningKey, error) {
	st, ok := s.Store.(SigningKeyStore)
	if !ok {
		return nil, Errorf(EInternal, "this store keeps no signing keys")
	}
	box, err := s.box()
	if err != nil {
		return nil, err
	}
	return st.SigningKeys(ctx, func() (*SigningKey, error) { return newSigningKey(box, s.now()) })
}

// SignWithKey signs message with the install's newest signing key and
// returns the signature and the key's id.
func (s *Service) SignWithKey(ctx context.Context, message []byte) ([]byte, string, error) {
	keys, err := s.SigningKeys(ctx)
	if err != nil {
		return nil, "", err
	}
	if len(keys) == 0 {
		return nil, "", Errorf(EInternal, "no signing key")
	}
	k := keys[0]
	seed, err := s.Webhooks.Box.Open(k.Sealed, SigningKeyOwner(k.ID)...)
	if err != nil {
		return nil, "", err
	}
	raw, err := base64.StdEncoding.DecodeString(seed)
	if err != nil || len(raw) != ed25519.SeedSize {
		return nil, "", Errorf(EInternal, "signing key %s: not an ED25519 seed", k.ID)
	}
	return ed25519.Sign(ed25519.NewKeyFromSeed(raw), message), k.ID, nil
}
