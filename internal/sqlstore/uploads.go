package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gengate/gengate"
)

var _ gengate.UploadStore = (*DB)(nil)

const uploadColumns = `id, account_id, blob_key, token, token_sealed, content_type, ext, size, created_at, expires_at`

// CreateUpload stores an uploaded file's record.
func (s *DB) CreateUpload(ctx context.Context, u *gengate.Upload) error {
	digest, sealed := s.storedToken(u.Token, u.ID)
	_, err := s.db.ExecContext(ctx, `INSERT INTO uploads (`+uploadColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		u.ID, u.AccountID, u.Key, digest, sealed, u.ContentType, u.Ext, u.Size, ms(u.CreatedAt), ms(u.ExpiresAt))
	return err
}

// FindUpload returns the upload with the URL token unless it expired
// before now.
func (s *DB) FindUpload(ctx context.Context, token string, now time.Time) (*gengate.Upload, error) {
	by := lookupToken(token)
	u, err := s.scanUploadFor(s.reader().QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE `+tokenLookup+` AND expires_at > $3`,
		by.digest, by.clear, ms(now)), &by)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("file", "")
	}
	return u, err
}

// ExpiredUploads returns up to limit uploads that expired before the time,
// oldest first.
func (s *DB) ExpiredUploads(ctx context.Context, before time.Time, limit int) ([]*gengate.Upload, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2`,
		ms(before), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*gengate.Upload
	for rows.Next() {
		u, err := s.scanUploadFor(rows, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// DeleteUpload deletes an upload's record.
func (s *DB) DeleteUpload(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM uploads WHERE id = $1`, id)
	return err
}

// scanUploadFor scans an upload found by the URL token presented (nil
// when it was not found by one): a row that is not that token's is
// sql.ErrNoRows (filetokens.go: fileLookup.matches).
func (s *DB) scanUploadFor(row scanner, by *fileLookup) (*gengate.Upload, error) {
	u := &gengate.Upload{}
	var created, expires int64
	var stored string
	var sealed sql.NullString
	if err := row.Scan(&u.ID, &u.AccountID, &u.Key, &stored, &sealed, &u.ContentType, &u.Ext, &u.Size, &created, &expires); err != nil {
		return nil, err
	}
	if by != nil && !by.matches(stored, sealed) {
		return nil, sql.ErrNoRows
	}
	u.CreatedAt, u.ExpiresAt = fromMS(created), fromMS(expires)
	if by != nil { // found by its token: serving it needs no server key
		u.Token = by.clear
		return u, nil
	}
	var err error
	if u.Token, err = s.openToken(stored, sealed, u.ID); err != nil {
		return nil, err
	}
	return u, nil
}
