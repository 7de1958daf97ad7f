package sqlstore

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"

	"github.com/gengate/gengate"
)

var _ gengate.SigningKeyStore = (*DB)(nil)

// SigningKeys returns the install's signing keys (table signing_keys),
// newest first, storing the one fresh makes when there is none. Two
// processes that find none at the same moment each store theirs: both
// are kept and published, and the newest signs.
func (s *DB) SigningKeys(ctx context.Context, fresh func() (*gengate.SigningKey, error)) ([]*gengate.SigningKey, error) {
	keys, err := s.signingKeys(ctx)
	if err != nil || len(keys) > 0 {
		return keys, err
	}
	k, err := fresh()
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, func(ctx context.Context, db dbtx) error {
		_, err := db.ExecContext(ctx, `INSERT INTO signing_keys (id, public_key, private_key, created_at) VALUES ($1, $2, $3, $4)`,
			k.ID, base64.RawURLEncoding.EncodeToString(k.Public), k.Sealed, ms(k.CreatedAt))
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.signingKeys(ctx)
}

func (s *DB) signingKeys(ctx context.Context) ([]*gengate.SigningKey, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT id, public_key, private_key, created_at FROM signing_keys
		ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*gengate.SigningKey
	for rows.Next() {
		k := &gengate.SigningKey{}
		var pub string
		var created int64
		if err := rows.Scan(&k.ID, &pub, &k.Sealed, &created); err != nil {
			return nil, err
		}
		raw, err := base64.RawURLEncoding.DecodeString(pub)
		if err != nil || len(raw) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("signing key %s: public key is not an ED25519 key", k.ID)
		}
		k.Public, k.CreatedAt = ed25519.PublicKey(raw), fromMS(created)
		out = append(out, k)
	}
	return out, rows.Err()
}
