package sqlstore

// The records sealed under the server key (docs/server-key.md), walked
// for a rotation (ResealSecrets), for what no key opens (LostSecrets)
// and to re-issue that (ReissueLost). Each walk goes table by table in
// batches by primary key; each batch commits alone, and each row is
// rewritten only if it still holds what was read (a webhook secret a
// holder rotated meanwhile is left to its new value), so a walk cut
// short anywhere leaves every row sealed under the old key or the new
// one, both of which the keyring opens, and running it again finishes.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gengate/gengate"
)

// Kinds of sealed records, as server-key lost lists them.
const (
	SealedWebhookSecret   = "webhook-secret"   // an account's own signing secret (tasks' webhookUrl)
	SealedWebhookEndpoint = "webhook-endpoint" // an endpoint's signing secret
	SealedOutput          = "output"           // an output file's URL token
	SealedUpload          = "upload"           // an uploaded file's URL token
	SealedSigningKey      = "signing-key"      // the private half of a signing key (fal webhooks)
)

// SealedRecord is one record holding a value sealed under the server key.
type SealedRecord struct {
	Kind      string
	ID        string // the account id for SealedWebhookSecret
	AccountID string // "" for SealedSigningKey, the install's
}

// ResealReport says what a walk of the sealed records found and did.
type ResealReport struct {
	// Resealed were sealed under a previous key and are now under the
	// current one; Current already were.
	Resealed, Current int
	// Dropped are rotated-out webhook secrets (still signing beside the
	// new one for --webhook-secret-overlap) that no key opened: they no
	// longer sign, the current secret does.
	Dropped int
	// Lost are the records whose value no key of the keyring opens.
	Lost []SealedRecord
	// CheckResealed is true when the database's key check was moved to
	// the current key.
	CheckResealed bool
}

// sealedTable describes a table with sealed columns: the first is the
// record's value (lost when it does not open), a second the webhook
// secret rotated out, which may be empty.
type sealedTable struct {
	kind, table, id string
	cols            []string
	owner           func(id, accountID string) []string
	// account is the column of the owning account; "" for a table of
	// the install's, whose rows have none.
	account string
}

var sealedTables = []sealedTable{
	{SealedWebhookSecret, "webhook_secrets", "account_id", []string{"secret", "previous"},
		func(id, _ string) []string { return gengate.WebhookSecretOwner(id, "") }, "account_id"},
	{SealedWebhookEndpoint, "webhook_endpoints", "id", []string{"secret", "previous"},
		func(id, acct string) []string { return gengate.WebhookSecretOwner(acct, id) }, "account_id"},
	{SealedOutput, "creations", "id", []string{"token_sealed"},
		func(id, _ string) []string { return gengate.FileTokenOwner(id) }, "account_id"},
	{SealedUpload, "uploads", "id", []string{"token_sealed"},
		func(id, _ string) []string { return gengate.FileTokenOwner(id) }, "account_id"},
	{SealedSigningKey, "signing_keys", "id", []string{"private_key"},
		func(id, _ string) []string { return gengate.SigningKeyOwner(id) }, ""},
}

// resealBatch is how many rows a walk reads and rewrites per transaction.
const resealBatch = 500

// sealedRow is one row of a sealedTable as read.
type sealedRow struct {
	id, accountID string
	vals          []string
}

// walkSealed calls fn with each batch of the table's rows holding a
// sealed value, in primary key order.
func (s *DB) walkSealed(ctx context.Context, t sealedTable, fn func([]sealedRow) error) error {
	sel := t.id + ", ''"
	if t.account != "" {
		sel = t.id + ", " + t.account
	}
	for _, c := range t.cols {
		sel += ", COALESCE(" + c + ", '')"
	}
	q := `SELECT ` + sel + ` FROM ` + t.table + ` WHERE ` + t.id + ` > $1 AND COALESCE(` + t.cols[0] + `, '') <> '' ORDER BY ` + t.id + ` LIMIT ` + fmt.Sprint(s.resealBatchSize())
	after := ""
	for {
		rows, err := s.db.QueryContext(ctx, q, after)
		if err != nil {
			return fmt.Errorf("%s: %w", t.table, err)
		}
		var batch []sealedRow
		for rows.Next() {
			r := sealedRow{vals: make([]string, len(t.cols))}
			dest := []any{&r.id, &r.accountID}
			for i := range r.vals {
				dest = append(dest, &r.vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fmt.Errorf("%s: %w", t.table, err)
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", t.table, err)
		}
		if len(batch) == 0 {
			return nil
		}
		if err := fn(batch); err != nil {
			return err
		}
		after = batch[len(batch)-1].id
	}
}

func (s *DB) resealBatchSize() int {
	if s.resealBatch > 0 {
		return s.resealBatch
	}
	return resealBatch
}

// update is a rewrite of one row's sealed columns, conditional on the
// row still holding the values read.
type update struct {
	row  sealedRow
	vals []string
}

func (s *DB) applyUpdates(ctx context.Context, t sealedTable, ups []update) error {
	if len(ups) == 0 {
		return nil
	}
	if s.resealFault != nil {
		if err := s.resealFault(); err != nil {
			return err
		}
	}
	set, where := "", t.id+" = $1"
	for i, c := range t.cols {
		if i > 0 {
			set += ", "
		}
		set += fmt.Sprintf("%s = $%d", c, i+2)
		where += fmt.Sprintf(" AND %s = $%d", c, len(t.cols)+i+2)
	}
	q := `UPDATE ` + t.table + ` SET ` + set + ` WHERE ` + where
	return s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, u := range ups {
			args := []any{u.row.id}
			for _, v := range u.vals {
				args = append(args, v)
			}
			for _, v := range u.row.vals {
				args = append(args, v)
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("%s %s: %w", t.table, u.row.id, err)
			}
		}
		return nil
	})
}

// ResealSecrets seals every record a previous key of the keyring (the
// box given with WithFileTokenKey) sealed under its current key, and the
// database's key check with them; a record no key opens is reported as
// lost and left as it is.
func (s *DB) ResealSecrets(ctx context.Context) (ResealReport, error) {
	var rep ResealReport
	for _, t := range sealedTables {
		err := s.walkSealed(ctx, t, func(batch []sealedRow) error {
			var ups []update
			for _, r := range batch {
				owner := t.owner(r.id, r.accountID)
				vals := append([]string(nil), r.vals...)
				changed, lost := false, false
				for i, v := range r.vals {
					if v == "" {
						continue
					}
					nv, ch, err := s.files.Reseal(v, owner...)
					switch {
					case err != nil && i == 0:
						lost = true
					case err != nil: // a rotated-out webhook secret: it stops signing
						vals[i], changed = "", true
						rep.Dropped++
					case ch:
						vals[i], changed = nv, true
					}
				}
				switch {
				case lost:
					rep.Lost = append(rep.Lost, SealedRecord{t.kind, r.id, r.accountID})
				case changed:
					ups = append(ups, update{r, vals})
					rep.Resealed++
				default:
					rep.Current++
				}
			}
			return s.applyUpdates(ctx, t, ups)
		})
		if err != nil {
			return rep, fmt.Errorf("re-seal: %w", err)
		}
	}
	var err error
	rep.CheckResealed, err = s.resealCheck(ctx)
	return rep, err
}

// resealCheck seals the database's key check under the current key (the
// processes started later must have it) when a previous key opens it, or
// when none does and force is set (ReissueLost: the keyring's key becomes
// the database's).
func (s *DB) resealCheck(ctx context.Context, force ...bool) (bool, error) {
	var sealed string
	if err := s.db.QueryRowContext(ctx, `SELECT sealed FROM server_key WHERE id = 1`).Scan(&sealed); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return false, fmt.Errorf("server key check: %w", err)
	}
	_, changed, err := s.files.Reseal(sealed, serverKeyOwner)
	if err != nil && !(len(force) > 0 && force[0]) {
		return false, nil
	}
	if err == nil && !changed {
		return false, nil
	}
	err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE server_key SET sealed = $1 WHERE id = 1 AND sealed = $2`,
			s.files.Seal(serverKeyCheck, serverKeyOwner), sealed)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("server key check: %w", err)
	}
	return true, nil
}

// CheckOpens reports whether the keyring opens the database's key check,
// that is, holds the key the install's processes were started with.
func (s *DB) CheckOpens(ctx context.Context) (bool, error) {
	var sealed string
	if err := s.db.QueryRowContext(ctx, `SELECT sealed FROM server_key WHERE id = 1`).Scan(&sealed); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return true, nil
		}
		return false, err
	}
	v, err := s.files.Open(sealed, serverKeyOwner)
	return err == nil && v == serverKeyCheck, nil
}

// LostSecrets lists the records whose sealed value no key of the keyring
// opens.
func (s *DB) LostSecrets(ctx context.Context) ([]SealedRecord, error) {
	var lost []SealedRecord
	for _, t := range sealedTables {
		err := s.walkSealed(ctx, t, func(batch []sealedRow) error {
			for _, r := range batch {
				if _, err := s.files.Open(r.vals[0], t.owner(r.id, r.accountID)...); err != nil {
					lost = append(lost, SealedRecord{t.kind, r.id, r.accountID})
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return lost, nil
}

// ReissueLost gives every record no key opens a new value sealed under
// the current key: a new signing secret for a webhook secret (its
// rotated-out one dropped), a new URL token for a file (its old URL stops
// working); a signing key no key opens is deleted, and the next signature
// makes a new one (receivers learn it from the JWKS). The database's key check moves to the current key too, so a
// database whose key is gone for good can be served again. It returns
// the records re-issued.
func (s *DB) ReissueLost(ctx context.Context, now time.Time) ([]SealedRecord, error) {
	var done []SealedRecord
	for _, t := range sealedTables {
		err := s.walkSealed(ctx, t, func(batch []sealedRow) error {
			if t.kind == SealedSigningKey {
				n, err := s.dropLostKeys(ctx, t, batch)
				done = append(done, n...)
				return err
			}
			var ups []update
			for _, r := range batch {
				owner := t.owner(r.id, r.accountID)
				if _, err := s.files.Open(r.vals[0], owner...); err == nil {
					continue
				}
				vals := make([]string, len(t.cols))
				switch t.kind {
				case SealedWebhookSecret, SealedWebhookEndpoint:
					vals[0] = s.files.Seal(gengate.NewWebhookSecret(), owner...)
					vals[1] = ""
				default:
					continue // files: below, their digest changes too
				}
				ups = append(ups, update{r, vals})
				done = append(done, SealedRecord{t.kind, r.id, r.accountID})
			}
			if t.kind == SealedOutput || t.kind == SealedUpload {
				n, err := s.reissueTokens(ctx, t, batch, now)
				done = append(done, n...)
				return err
			}
			return s.applyUpdates(ctx, t, ups)
		})
		if err != nil {
			return done, fmt.Errorf("re-issue: %w", err)
		}
	}
	_, err := s.resealCheck(ctx, true)
	return done, err
}

// reissueTokens gives each file of the batch whose token no key opens a
// new URL token: its digest (what the file is found by) and its sealed
// form both change.
func (s *DB) reissueTokens(ctx context.Context, t sealedTable, batch []sealedRow, now time.Time) ([]SealedRecord, error) {
	var done []SealedRecord
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, r := range batch {
			if _, err := s.files.Open(r.vals[0], t.owner(r.id, r.accountID)...); err == nil {
				continue
			}
			token := gengate.NewToken()
			if t.kind == SealedOutput {
				token = gengate.NewFileToken(now)
			}
			digest, sealed := s.storedToken(token, r.id)
			res, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET token = $1, token_sealed = $2 WHERE id = $3 AND token_sealed = $4`,
				digest, sealed, r.id, r.vals[0])
			if err != nil {
				return fmt.Errorf("%s %s: %w", t.table, r.id, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				done = append(done, SealedRecord{t.kind, r.id, r.accountID})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// dropLostKeys deletes each signing key of the batch whose private half
// no key opens, unless it changed meanwhile.
func (s *DB) dropLostKeys(ctx context.Context, t sealedTable, batch []sealedRow) ([]SealedRecord, error) {
	var done []SealedRecord
	err := s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, r := range batch {
			if _, err := s.files.Open(r.vals[0], t.owner(r.id, r.accountID)...); err == nil {
				continue
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE id = $1 AND private_key = $2`, r.id, r.vals[0])
			if err != nil {
				return fmt.Errorf("%s %s: %w", t.table, r.id, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				done = append(done, SealedRecord{t.kind, r.id, ""})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// WithoutServerKeyCheck opens the database under the box given with
// WithFileTokenKey even when it does not open the database's key check:
// for the server-key commands, which list and re-issue what it does not
// open.
func WithoutServerKeyCheck() Option {
	return func(o *options) { o.noKeyCheck = true }
}
