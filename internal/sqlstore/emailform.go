package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gengate/gengate"
)

// Values of members.email_form (migration 00018).
const (
	emailUnchecked = 0 // written before the normal form: Open checks it
	emailNormal    = 1 // in gengate.NormalizeEmail's form
	emailKept      = 2 // kept as it was: refused by the rules, or its form is another member's
)

// normalizeEmails brings the emails stored before the normal form to it,
// once, whichever process opens the database first: a look-alike address
// (fullwidth letters, a zero-width character, a trailing dot) must not
// stay a separate member reachable by sign-in. An address whose normal
// form is refused, or is another member's, is kept as it was and marked
// (emailKept): no member is deleted or merged, and sign-in looks up only
// the normal form, so it cannot be signed in to by email.
func (s *DB) normalizeEmails(ctx context.Context) error {
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT id, email FROM members WHERE email_form = 0 LIMIT 500`)
		if err != nil {
			return fmt.Errorf("normalize emails: %w", err)
		}
		type row struct{ id, email string }
		var todo []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.email); err != nil {
				rows.Close()
				return fmt.Errorf("normalize emails: %w", err)
			}
			todo = append(todo, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("normalize emails: %w", err)
		}
		if len(todo) == 0 {
			return nil
		}
		err = s.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			for _, r := range todo {
				email, form := r.email, emailNormal
				e, err := gengate.NormalizeEmail(r.email)
				switch {
				case err != nil:
					form = emailKept
				case e != r.email:
					var n int
					if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM members WHERE email = $1 AND id <> $2`, e, r.id).Scan(&n); err != nil {
						return err
					}
					if n > 0 {
						form = emailKept
					} else {
						email = e
					}
				}
				if _, err := tx.ExecContext(ctx, `UPDATE members SET email = $1, email_form = $2 WHERE id = $3 AND email_form = 0`,
					email, form, r.id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("normalize emails: %w", err)
		}
	}
}
