package sqlstore_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestStoredEmailsNormalized: emails stored before the normal form (as an
// older gengate wrote them, only lower-cased) are brought to it when the
// database is opened, so a look-alike stays no separate member reachable
// by sign-in: fullwidth ｕ1@x.test becomes u1@x.test; one with a
// zero-width space or a trailing dot, which the rules now refuse, and one
// whose normal form is another member's, are kept as they were and cannot
// be found by any email; a plain one is untouched. Both databases.
func TestStoredEmailsNormalized(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			s, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			a := newAccount(t, s, 0)
			old := map[string]string{ // member id: the email as stored before
				"m-plain": "plain@x.test", "m-wide": "\uff55\uff11@x.test", "m-zw": "u2@x.test\u200b",
				"m-dot": "u3@x.test.", "m-clash": "\uff50lain@x.test",
			}
			for id, email := range old {
				if _, err := s.SQL().ExecContext(ctx, `INSERT INTO members (id, account_id, email, role, password_hash, created_at, email_form)
					VALUES ($1, $2, $3, 'owner', '', 0, 0)`, id, a.ID, email); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			s, err = sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for email, want := range map[string]string{"plain@x.test": "m-plain", "u1@x.test": "m-wide", "\uff55\uff11@X.test": "m-wide"} {
				e, err := gengate.NormalizeEmail(email)
				if err != nil {
					t.Fatal(err)
				}
				if m, err := s.FindMemberByEmail(ctx, e); err != nil || m.ID != want {
					t.Errorf("sign-in email %q finds %+v, %v; want member %s", email, m, err, want)
				}
			}
			for _, email := range []string{"u2@x.test", "u3@x.test"} {
				if m, err := s.FindMemberByEmail(ctx, email); err == nil {
					t.Errorf("%s finds the look-alike member %s (%q)", email, m.ID, m.Email)
				}
			}
			for id, email := range map[string]string{"m-zw": old["m-zw"], "m-dot": old["m-dot"], "m-clash": old["m-clash"]} {
				if m, err := s.FindMember(ctx, id); err != nil || m.Email != email {
					t.Errorf("member %s: %+v, %v; want kept with %q", id, m, err, email)
				}
			}
			var left int
			if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM members WHERE email_form = 0`).Scan(&left); err != nil || left != 0 {
				t.Errorf("%d members left unchecked (%v)", left, err)
			}
		})
	}
}
