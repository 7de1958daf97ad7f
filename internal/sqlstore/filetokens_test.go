package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// fileRows returns every token and token_sealed of the creations and
// uploads tables, as stored.
func fileRows(t *testing.T, s *sqlstore.DB) []string {
	t.Helper()
	var out []string
	for _, table := range []string{"creations", "uploads"} {
		rows, err := s.SQL().QueryContext(context.Background(), `SELECT token, COALESCE(token_sealed, '') FROM `+table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var tok, sealed string
			if err := rows.Scan(&tok, &sealed); err != nil {
				t.Fatal(err)
			}
			out = append(out, tok, sealed)
		}
		rows.Close()
	}
	return out
}

// finishWithOutput finishes a new task of the account with one output
// whose URL token is token, and returns the task's id and the output.
func finishWithOutput(t *testing.T, s *sqlstore.DB, accountID, token string, now time.Time) (string, gengate.Creation) {
	t.Helper()
	task := newTask(accountID, 1)
	mustCreate(t, s, task)
	c := mustClaim(t, s, task.ID, now)
	out := gengate.Creation{ID: gengate.NewCreationID(now), AccountID: accountID, TaskID: c.ID, Key: "outputs/" + c.ID + "-0.png",
		Token: token, ContentType: "image/png", Ext: "png", Size: 10, CreatedAt: now}
	c.Outputs = []gengate.Creation{out}
	c.Status, c.UpdatedAt, c.CompletedAt = gengate.StatusSucceeded, now, now
	if err := s.FinishTask(context.Background(), c, 0); err != nil {
		t.Fatal(err)
	}
	return task.ID, out
}

// TestFileTokensAtRest: an output's and an upload's URL tokens are found
// by their token and shown again on a read, while the database holds
// neither in clear; the stored digest opens nothing.
func TestFileTokensAtRest(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 10)
			now := time.Now().Truncate(time.Millisecond)
			outTok, upTok := gengate.NewFileToken(now), gengate.NewToken()
			taskID, out := finishWithOutput(t, s, a.ID, outTok, now)
			up := &gengate.Upload{ID: gengate.NewID(), AccountID: a.ID, Key: "uploads/x.png", Token: upTok, ContentType: "image/png",
				Ext: "png", Size: 5, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			if err := s.CreateUpload(ctx, up); err != nil {
				t.Fatal(err)
			}

			stored := fileRows(t, s)
			if len(stored) != 4 {
				t.Fatalf("stored %q; want a creation and an upload", stored)
			}
			for _, v := range stored {
				for _, tok := range []string{outTok, upTok, outTok[8:], upTok[8:]} {
					if strings.Contains(v, tok) {
						t.Errorf("the database holds %q, which holds the file token %q", v, tok)
					}
				}
			}

			got, err := s.FindTask(ctx, taskID)
			if err != nil || len(got.Outputs) != 1 || got.Outputs[0].Token != outTok {
				t.Fatalf("FindTask outputs = %+v, %v; want the token %s", got.Outputs, err, outTok)
			}
			if c, err := s.FindCreation(ctx, outTok); err != nil || c.ID != out.ID || c.Token != outTok {
				t.Errorf("FindCreation(token) = %+v, %v; want %s", c, err, out.ID)
			}
			if u, err := s.FindUpload(ctx, upTok, now); err != nil || u.ID != up.ID || u.Token != upTok {
				t.Errorf("FindUpload(token) = %+v, %v; want %s", u, err, up.ID)
			}
			// The whole token is the key: another token that shares its
			// first characters (an output token's time, which the digest
			// keeps in clear) finds nothing.
			for _, tok := range []string{outTok, upTok} {
				other := tok[:8] + gengate.NewToken()[:len(tok)-8]
				_, err := s.FindCreation(ctx, other)
				wantCode(t, "FindCreation(another token with the same first characters)", err, gengate.ENotFound)
				_, err = s.FindUpload(ctx, other, now)
				wantCode(t, "FindUpload(another token with the same first characters)", err, gengate.ENotFound)
			}
			for _, v := range stored {
				if v == "" || strings.HasPrefix(v, "gcm1:") {
					continue
				}
				_, err := s.FindCreation(ctx, v)
				wantCode(t, "FindCreation(a stored digest)", err, gengate.ENotFound)
				_, err = s.FindUpload(ctx, v, now)
				wantCode(t, "FindUpload(a stored digest)", err, gengate.ENotFound)
			}
		})
	}
}

// TestLegacyFileTokensSealed: rows written in clear (before migration
// 00015, or by an older process) are found by their token, and are
// rewritten by the next Open given the server key, keeping their URLs.
func TestLegacyFileTokensSealed(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			open := func() *sqlstore.DB {
				s, err := sqlstore.Open(ctx, url, dir, sqlstore.WithFileTokenKey(sqltest.FileTokenKey))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s := open()
			a := newAccount(t, s, 10)
			now := time.Now().Truncate(time.Millisecond)
			tok := gengate.NewToken() // an older output's token: 32 random characters
			taskID, _ := finishWithOutput(t, s, a.ID, tok, now)
			// As an older process wrote it: in clear, not sealed.
			if _, err := s.SQL().ExecContext(ctx, `UPDATE creations SET token = $1, token_sealed = NULL`, tok); err != nil {
				t.Fatal(err)
			}
			if c, err := s.FindCreation(ctx, tok); err != nil || c.Token != tok {
				t.Fatalf("FindCreation of a clear row = %+v, %v", c, err)
			}
			s.Close()

			s = open()
			defer s.Close()
			for _, v := range fileRows(t, s) {
				if strings.Contains(v, tok[8:]) {
					t.Errorf("after Open the database still holds %q", v)
				}
			}
			if c, err := s.FindCreation(ctx, tok); err != nil || c.Token != tok {
				t.Errorf("FindCreation after the rewrite = %+v, %v", c, err)
			}
			got, err := s.FindTask(ctx, taskID)
			if err != nil || len(got.Outputs) != 1 || got.Outputs[0].Token != tok {
				t.Errorf("FindTask outputs = %+v, %v; want the token %s kept", got, err, tok)
			}
		})
	}
}

// TestServerKeyChecked: a process opening the database with a key other
// than the one its secrets are sealed under is refused at Open, not later
// on each file; one with the same key, or none (a tool), opens it.
func TestServerKeyChecked(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			other, err := gengate.NewSecretBox([]byte("another server key, 32 bytes or more"))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				opts []sqlstore.Option
				ok   bool
			}{
				{"first key", []sqlstore.Option{sqlstore.WithFileTokenKey(sqltest.FileTokenKey)}, true},
				{"another key", []sqlstore.Option{sqlstore.WithFileTokenKey(other)}, false},
				{"the same key", []sqlstore.Option{sqlstore.WithFileTokenKey(sqltest.FileTokenKey)}, true},
				{"no key", nil, true},
			} {
				s, err := sqlstore.Open(ctx, url, dir, c.opts...)
				if c.ok != (err == nil) {
					t.Fatalf("Open with %s: %v; want ok=%v", c.name, err, c.ok)
				}
				if err != nil && !strings.Contains(err.Error(), "--webhook-key") {
					t.Errorf("Open with %s: %v; want it to name --webhook-key", c.name, err)
				}
				if s != nil {
					s.Close()
				}
			}
		})
	}
}

// TestClearTokensIndexed: Open's look for rows whose token is in clear,
// made at every start, reads the partial index of such rows (empty once
// they are rewritten), not the whole table.
func TestClearTokensIndexed(t *testing.T) {
	s := sqltest.Open(t, "sqlite")
	for _, table := range []string{"creations", "uploads"} {
		plan, err := s.ClearTokensPlan(context.Background(), table)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, table+"_clear_token") {
			t.Errorf("%s: plan %q; want the partial index %s_clear_token", table, plan, table)
		}
	}
}
