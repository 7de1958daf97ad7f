package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

func mustBox(t *testing.T, keys ...string) *gengate.SecretBox {
	t.Helper()
	var rest [][]byte
	for _, k := range keys[1:] {
		rest = append(rest, []byte(k))
	}
	b, err := gengate.NewSecretBox([]byte(keys[0]), rest...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	keyA = "server key A, the first one, 32 bytes or more"
	keyB = "server key B, the rotated-in one, 32 bytes+"
	keyC = "server key C, which this install never had!!"
)

// sealedFixture is what a rotation must carry over: an account secret, an
// endpoint (with a rotated-out secret), outputs, uploads and the
// install's signing key.
type sealedFixture struct {
	accountID, endpointID string
	accountSecret         string
	endpointSecrets       []string          // current, previous
	tasks                 map[string]string // task id: its output's token
	uploads               map[string]string // upload token: its id
	signingKey, seed      string            // the signing key's id and seed
}

func makeSealed(t *testing.T, s *sqlstore.DB, box *gengate.SecretBox) *sealedFixture {
	t.Helper()
	ctx := context.Background()
	a := newAccount(t, s, 10)
	f := &sealedFixture{accountID: a.ID, tasks: map[string]string{}, uploads: map[string]string{}}
	f.accountSecret = gengate.NewWebhookSecret()
	if _, err := s.WebhookSecret(ctx, a.ID, box.Seal(f.accountSecret, gengate.WebhookSecretOwner(a.ID, "")...), time.Now()); err != nil {
		t.Fatal(err)
	}
	e := &gengate.WebhookEndpoint{ID: gengate.WebhookEndpointPrefix + gengate.NewID(), AccountID: a.ID, URL: "https://example.com/hook",
		EventTypes: []string{"task.succeeded"}, CreatedAt: time.Now()}
	first, second := gengate.NewWebhookSecret(), gengate.NewWebhookSecret()
	e.Keys.Secret = box.Seal(first, gengate.WebhookSecretOwner(a.ID, e.ID)...)
	if err := s.CreateWebhookEndpoint(ctx, e, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.RotateWebhookSecret(ctx, a.ID, e.ID, box.Seal(second, gengate.WebhookSecretOwner(a.ID, e.ID)...), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	f.endpointID, f.endpointSecrets = e.ID, []string{second, first}
	now := time.Now().Truncate(time.Millisecond)
	for range 3 {
		tok := gengate.NewFileToken(now)
		id, _ := finishWithOutput(t, s, a.ID, tok, now)
		f.tasks[id] = tok
	}
	for range 2 {
		up := &gengate.Upload{ID: gengate.NewID(), AccountID: a.ID, Key: "uploads/x.png", Token: gengate.NewToken(), ContentType: "image/png",
			Ext: "png", Size: 5, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := s.CreateUpload(ctx, up); err != nil {
			t.Fatal(err)
		}
		f.uploads[up.Token] = up.ID
	}
	k, seed := testSigningKey(t, box)
	if _, err := s.SigningKeys(ctx, func() (*gengate.SigningKey, error) { return k, nil }); err != nil {
		t.Fatal(err)
	}
	f.signingKey, f.seed = k.ID, seed
	return f
}

// opened counts the fixture's sealed values the box opens to what they
// were, and reports the ones it does not.
func (f *sealedFixture) opened(t *testing.T, s *sqlstore.DB, box *gengate.SecretBox) (ok int, failed []string) {
	t.Helper()
	ctx := context.Background()
	check := func(what, sealed, want string, owner ...string) {
		if v, err := box.Open(sealed, owner...); err == nil && v == want {
			ok++
		} else {
			failed = append(failed, what)
		}
	}
	k, err := s.WebhookSecret(ctx, f.accountID, "unused", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	check("account secret", k.Secret, f.accountSecret, gengate.WebhookSecretOwner(f.accountID, "")...)
	e, err := s.WebhookEndpoint(ctx, f.accountID, f.endpointID)
	if err != nil {
		t.Fatal(err)
	}
	check("endpoint secret", e.Keys.Secret, f.endpointSecrets[0], gengate.WebhookSecretOwner(f.accountID, f.endpointID)...)
	check("endpoint previous", e.Keys.Previous, f.endpointSecrets[1], gengate.WebhookSecretOwner(f.accountID, f.endpointID)...)
	for _, table := range []string{"creations", "uploads"} {
		rows, err := s.SQL().QueryContext(ctx, `SELECT id, token_sealed FROM `+table+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, sealed string
			if err := rows.Scan(&id, &sealed); err != nil {
				t.Fatal(err)
			}
			want := ""
			for tok, upID := range f.uploads {
				if upID == id {
					want = tok
				}
			}
			if table == "creations" {
				want = "" // checked through FindTask below, by the token it shows
				if _, err := box.OpenFileToken(sealed, id); err == nil {
					ok++
				} else {
					failed = append(failed, table+" "+id)
				}
				continue
			}
			check(table+" "+id, sealed, want, gengate.FileTokenOwner(id)...)
		}
		rows.Close()
	}
	keys, err := s.SigningKeys(ctx, func() (*gengate.SigningKey, error) { return nil, errors.New("no key: the fixture's is gone") })
	if err != nil || len(keys) != 1 || keys[0].ID != f.signingKey {
		t.Fatalf("SigningKeys = %+v, %v; want the fixture's %s", keys, err, f.signingKey)
	}
	check("signing key", keys[0].Sealed, f.seed, gengate.SigningKeyOwner(f.signingKey)...)
	return ok, failed
}

// TestServerKeyRotationCrash: a rotation cut short after some batches
// (an injected failure, as a kill would) loses nothing: every record
// opens under the keyring of the new and the old key, the tasks show
// their output URLs unchanged; run again it finishes, after which the new
// key alone opens everything, the database's key check included, and the
// old key alone no longer opens the database.
func TestServerKeyRotationCrash(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			open := func(box *gengate.SecretBox) (*sqlstore.DB, error) {
				return sqlstore.Open(ctx, url, dir, sqlstore.WithFileTokenKey(box))
			}
			s, err := open(mustBox(t, keyA))
			if err != nil {
				t.Fatal(err)
			}
			f := makeSealed(t, s, mustBox(t, keyA))
			s.Close()
			const records = 1 + 1 + 3 + 2 + 1

			ring := mustBox(t, keyB, keyA)
			s, err = open(ring)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.FailResealAfter(3)
			if _, err := s.ResealSecrets(ctx); err == nil {
				t.Fatal("the rotation with a failure injected after 3 batches succeeded")
			}
			if ok, failed := f.opened(t, s, ring); len(failed) > 0 {
				t.Fatalf("after a rotation cut short, the keyring opens %d, not %v", ok, failed)
			}
			okNew, _ := f.opened(t, s, mustBox(t, keyB))
			okOld, _ := f.opened(t, s, mustBox(t, keyA))
			if okNew == 0 || okOld == 0 {
				t.Fatalf("cut short, the new key opens %d values and the old one %d; want both some (a rotation midway)", okNew, okOld)
			}
			for id, tok := range f.tasks {
				got, err := s.FindTask(ctx, id)
				if err != nil || len(got.Outputs) != 1 || got.Outputs[0].Token != tok {
					t.Fatalf("FindTask %s midway: %+v, %v; want its token %s", id, got, err, tok)
				}
			}

			s.FailResealAfter(-1)
			rep, err := s.ResealSecrets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Resealed+rep.Current != records || len(rep.Lost) != 0 || rep.Resealed == 0 || rep.Current == 0 || !rep.CheckResealed {
				t.Errorf("the rerun reports %+v; want %d records, some re-sealed by it, some before, none lost, the check moved", rep, records)
			}
			if ok, failed := f.opened(t, s, mustBox(t, keyB)); len(failed) > 0 {
				t.Fatalf("after the rotation the new key alone opens %d, not %v", ok, failed)
			}
			rep, err = s.ResealSecrets(ctx)
			if err != nil || rep.Resealed != 0 || rep.Current != records {
				t.Errorf("a third pass: %+v, %v; want nothing to do", rep, err)
			}
			s.Close()

			if _, err := open(mustBox(t, keyA)); err == nil {
				t.Error("the old key alone still opens the database after the rotation")
			}
			s2, err := open(mustBox(t, keyB))
			if err != nil {
				t.Fatalf("the new key alone: %v", err)
			}
			defer s2.Close()
			for tok, id := range f.uploads {
				if u, err := s2.FindUpload(ctx, tok, time.Now()); err != nil || u.ID != id {
					t.Errorf("FindUpload after the rotation: %+v, %v", u, err)
				}
			}
		})
	}
}

// TestServerKeyLostReissued: records sealed under a key the install does
// not have are listed, are the SERVER_KEY_MISMATCH error where they are
// read (the file itself still served by its URL), are left alone by a
// rotation, and re-issued get new values: a new signing secret, a new
// file URL (the old one no longer works); a lost signing key is deleted
// (the next use makes a new one).
func TestServerKeyLostReissued(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			box := sqltest.FileTokenKey
			f := makeSealed(t, s, box)
			other := mustBox(t, keyC)
			var lostTask, lostTok, lostFile string
			for id, tok := range f.tasks {
				lostTask, lostTok = id, tok
				break
			}
			if err := s.SQL().QueryRowContext(ctx, `SELECT id FROM creations WHERE task_id = $1`, lostTask).Scan(&lostFile); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SQL().ExecContext(ctx, `UPDATE creations SET token_sealed = $1 WHERE id = $2`, other.SealFileToken(lostTok, lostFile), lostFile); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SQL().ExecContext(ctx, `UPDATE webhook_endpoints SET secret = $1 WHERE id = $2`,
				other.Seal("whsec_lost", gengate.WebhookSecretOwner(f.accountID, f.endpointID)...), f.endpointID); err != nil {
				t.Fatal(err)
			}

			if _, err := s.SQL().ExecContext(ctx, `UPDATE signing_keys SET private_key = $1 WHERE id = $2`,
				other.Seal(f.seed, gengate.SigningKeyOwner(f.signingKey)...), f.signingKey); err != nil {
				t.Fatal(err)
			}

			want := []sqlstore.SealedRecord{{Kind: sqlstore.SealedWebhookEndpoint, ID: f.endpointID, AccountID: f.accountID},
				{Kind: sqlstore.SealedOutput, ID: lostFile, AccountID: f.accountID},
				{Kind: sqlstore.SealedSigningKey, ID: f.signingKey}}
			lost, err := s.LostSecrets(ctx)
			if err != nil || !slices.Equal(lost, want) {
				t.Fatalf("LostSecrets = %+v, %v; want %+v", lost, err, want)
			}
			_, err = s.FindTask(ctx, lostTask)
			wantCode(t, "FindTask with a lost output token", err, gengate.EServerKey)
			if c, err := s.FindCreation(ctx, lostTok); err != nil || c.ID != lostFile {
				t.Errorf("FindCreation by the lost token's URL: %+v, %v; want the file served", c, err)
			}
			rep, err := s.ResealSecrets(ctx)
			if err != nil || !slices.Equal(rep.Lost, want) {
				t.Errorf("ResealSecrets: %+v, %v; want the lost %+v reported", rep, err, want)
			}

			done, err := s.ReissueLost(ctx, time.Now())
			if err != nil || !slices.Equal(done, want) {
				t.Fatalf("ReissueLost = %+v, %v; want %+v", done, err, want)
			}
			if lost, err := s.LostSecrets(ctx); err != nil || len(lost) != 0 {
				t.Errorf("after the re-issue LostSecrets = %+v, %v", lost, err)
			}
			got, err := s.FindTask(ctx, lostTask)
			if err != nil || len(got.Outputs) != 1 || got.Outputs[0].Token == lostTok {
				t.Fatalf("FindTask after the re-issue: %+v, %v; want a new token", got, err)
			}
			if _, err := s.FindCreation(ctx, lostTok); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Errorf("the old URL after the re-issue: %v; want NOT_FOUND", err)
			}
			if c, err := s.FindCreation(ctx, got.Outputs[0].Token); err != nil || c.ID != lostFile {
				t.Errorf("the new URL: %+v, %v", c, err)
			}
			e, err := s.WebhookEndpoint(ctx, f.accountID, f.endpointID)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := box.Open(e.Keys.Secret, gengate.WebhookSecretOwner(f.accountID, f.endpointID)...); err != nil || v == "whsec_lost" || e.Keys.Previous != "" {
				t.Errorf("the endpoint after the re-issue: secret %q %v, previous %q; want a new secret, no previous", v, err, e.Keys.Previous)
			}
			fresh, _ := testSigningKey(t, box)
			if keys, err := s.SigningKeys(ctx, func() (*gengate.SigningKey, error) { return fresh, nil }); err != nil || len(keys) != 1 || keys[0].ID != fresh.ID {
				t.Errorf("the signing keys after the re-issue: %+v, %v; want a new one", keys, err)
			}
		})
	}
}
