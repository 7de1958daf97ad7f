package sqlstore

// File URL tokens at rest (gengate.FileTokenDigest). The creations and
// uploads tables keep a file's token as its digest (token, the column the
// file is looked up by, UNIQUE) and sealed under the server's key
// (token_sealed, opened to show the file's URL again). Rows written before
// migration 00015, or by an older process during an upgrade, hold the
// token in clear and no token_sealed: Open rewrites them when it is given
// the server's key (sealFileTokens), and until then a lookup still finds them by their
// clear token, which only ever matches a row whose token_sealed is NULL.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gengate/gengate"
)

// WithFileTokenKey sets the box file tokens are sealed with: the server's
// key (serve's --webhook-key or <data>/webhook.key), the same for every
// process sharing the database. Without it a process seals under a key of
// its own, made at Open: it can show the URLs of the files it made, not
// those of others (tools and tests that open a database alone), and it
// leaves the rows that hold a token in clear as they are.
func WithFileTokenKey(box *gengate.SecretBox) Option {
	return func(o *options) { o.fileBox = box }
}

// processBox is a box under a random key, for a DB opened without
// WithFileTokenKey.
func processBox() (*gengate.SecretBox, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return gengate.NewSecretBox(key)
}

// storedToken is what a file's row keeps of its token: its digest and the
// token sealed for the file.
func (s *DB) storedToken(token, fileID string) (digest, sealed string) {
	return gengate.FileTokenDigest(token), s.files.SealFileToken(token, fileID)
}

// openToken gives back a file's token from its row's columns.
func (s *DB) openToken(stored string, sealed sql.NullString, fileID string) (string, error) {
	if !sealed.Valid { // a row not yet rewritten: its token is in clear
		return stored, nil
	}
	tok, err := s.files.OpenFileToken(sealed.String, fileID)
	if err != nil {
		return "", fmt.Errorf("file %s: its URL token: %w", fileID, err)
	}
	return tok, nil
}

// fileLookup is a presented URL token in the two forms a row may hold
// it: its digest and, for rows not yet rewritten, the token in clear. A
// presented digest is no token: both are empty, and it finds nothing.
type fileLookup struct{ digest, clear string }

func lookupToken(token string) fileLookup {
	if gengate.IsFileTokenDigest(token) {
		return fileLookup{}
	}
	return fileLookup{gengate.FileTokenDigest(token), token}
}

// tokenLookup is the WHERE term that finds a file by a fileLookup's two
// forms, its arguments $1 and $2.
const tokenLookup = `token IN ($1, $2)`

// matches reports whether a row found by tokenLookup is the presented
// token's: by its digest, or, for a row not yet rewritten, by its clear
// token.
func (l fileLookup) matches(stored string, sealed sql.NullString) bool {
	if sealed.Valid {
		return stored == l.digest
	}
	return stored == l.clear
}

// sealFileTokens rewrites the rows whose token is in clear: the token
// becomes its digest and is sealed in token_sealed. Each row is rewritten
// once, whichever process gets to it first.
func (s *DB) sealFileTokens(ctx context.Context) error {
	for _, table := range []string{"creations", "uploads"} {
		for {
			rows, err := s.db.QueryContext(ctx, clearTokensQuery(table))
			if err != nil {
				return fmt.Errorf("seal file tokens: %w", err)
			}
			type clearRow struct{ id, token string }
			var todo []clearRow
			for rows.Next() {
				var r clearRow
				if err := rows.Scan(&r.id, &r.token); err != nil {
					rows.Close()
					return fmt.Errorf("seal file tokens: %w", err)
				}
				todo = append(todo, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("seal file tokens: %w", err)
			}
			if len(todo) == 0 {
				break
			}
			err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
				for _, r := range todo {
					digest, sealed := s.storedToken(r.token, r.id)
					if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET token = $1, token_sealed = $2 WHERE id = $3 AND token = $4 AND token_sealed IS NULL`,
						digest, sealed, r.id, r.token); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("seal file tokens: %w", err)
			}
		}
	}
	return nil
}

// serverKeyCheck is the value sealed in the server_key table, for the
// owner serverKeyOwner.
const (
	serverKeyCheck = "gengate server key"
	serverKeyOwner = "server key"
)

// checkServerKey refuses a server key other than the one the database's
// secrets are sealed under: the first process to open the database with
// a key records a value sealed under it, and every later one must open it.
func (s *DB) checkServerKey(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO server_key (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`,
		s.files.Seal(serverKeyCheck, serverKeyOwner)); err != nil {
		return fmt.Errorf("server key: %w", err)
	}
	var sealed string
	if err := s.db.QueryRowContext(ctx, `SELECT sealed FROM server_key WHERE id = 1`).Scan(&sealed); err != nil {
		return fmt.Errorf("server key: %w", err)
	}
	if v, err := s.files.Open(sealed, serverKeyOwner); err != nil || v != serverKeyCheck {
		return errors.New("server key: this database's file URL tokens and webhook secrets are sealed under another key; " +
			"give this process the same --webhook-key (or <data>/webhook.key) as the install's other processes")
	}
	return nil
}

// clearTokensQuery is sealFileTokens' query of the table's rows whose
// token is in clear, served by the partial index <table>_clear_token
// (migration 00016), which is empty once they are rewritten.
func clearTokensQuery(table string) string {
	return `SELECT id, token FROM ` + table + ` WHERE token_sealed IS NULL LIMIT 500`
}
