package sqlstore_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestFalWebhookEvents: a fal queue request's webhookUrl
// (gengate.FalWebhookEvents) gets one fal.completed event, written with
// the task's move to succeeded, failed or canceled; nothing while it is
// held for review (at creation, or as it runs), then fal.completed when
// it is settled. The account's endpoint gets gengate's final-state
// events of the same task all along. On both databases.
func TestFalWebhookEvents(t *testing.T) {
	cases := []struct {
		name     string
		held     bool           // held for review at creation
		review   bool           // held for review as it runs
		end      gengate.Status // the final state
		want     []string       // the task's own events, in delivery order
		endpoint int
	}{
		{name: "succeeded", end: gengate.StatusSucceeded, want: []string{gengate.FalCompleted}, endpoint: 1},
		{name: "failed", end: gengate.StatusFailed, want: []string{gengate.FalCompleted}, endpoint: 1},
		{name: "canceled", end: gengate.StatusCanceled, want: []string{gengate.FalCompleted}, endpoint: 1},
		{name: "held at creation", held: true, end: gengate.StatusSucceeded, want: []string{gengate.FalCompleted}, endpoint: 2},
		{name: "held as it runs", review: true, end: gengate.StatusFailed, want: []string{gengate.FalCompleted}, endpoint: 2},
	}
	for _, d := range sqltest.Dialects {
		for _, c := range cases {
			t.Run(d+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				s := sqltest.Open(t, d)
				a := newAccount(t, s, 100)
				ep := &gengate.WebhookEndpoint{ID: "ep_" + gengate.NewID(), AccountID: a.ID, URL: "https://example.com/ep",
					EventTypes: gengate.EventTypes, CreatedAt: t0, Keys: gengate.WebhookKeys{Secret: "sealed"}}
				if err := s.CreateWebhookEndpoint(ctx, ep, 10); err != nil {
					t.Fatal(err)
				}
				task := newTask(a.ID, 1)
				task.WebhookURL, task.WebhookEvents = "https://example.com/fal", gengate.FalWebhookEvents
				if c.held {
					task.Status, task.ReviewReason = gengate.StatusNeedsReview, gengate.ReviewTerms
				}
				mustCreate(t, s, task)
				if n := count(t, s, `SELECT COUNT(*) FROM task_webhooks WHERE task_id = $1 AND events = '' AND format = 'fal'`, task.ID); n != 1 {
					t.Fatalf("the task's webhook is not kept as a fal request's")
				}
				at := t0
				if c.held { // settled: back to the queue
					if got, _ := deliverInOrder(t, s, at); len(got) != 0 {
						t.Errorf("held for review at creation, the fal webhook got %q; want nothing", got)
					}
					task.Status, task.ReviewReason = gengate.StatusQueued, ""
					if err := s.SaveStep(ctx, task, true); err != nil {
						t.Fatal(err)
					}
				}
				claimed := mustClaim(t, s, task.ID, at)
				if c.review {
					at = at.Add(time.Second)
					claimed.Status, claimed.ReviewReason, claimed.UpdatedAt = gengate.StatusNeedsReview, gengate.ReviewTerms, at
					if err := s.FinishTask(ctx, claimed, 0); err != nil {
						t.Fatal(err)
					}
					if got, _ := deliverInOrder(t, s, at); len(got) != 0 {
						t.Errorf("held for review as it ran, the fal webhook got %q; want nothing", got)
					}
					claimed.Status, claimed.ReviewReason = gengate.StatusQueued, ""
					if err := s.SaveStep(ctx, claimed, true); err != nil {
						t.Fatal(err)
					}
					claimed = mustClaim(t, s, task.ID, at)
				}
				at = at.Add(time.Second)
				claimed.Status, claimed.UpdatedAt, claimed.CompletedAt = c.end, at, at
				refund := 0
				if c.end != gengate.StatusSucceeded {
					claimed.ErrorCode, claimed.ErrorMessage, refund = gengate.EFailed, "no", 1
				}
				if err := s.FinishTask(ctx, claimed, refund); err != nil {
					t.Fatal(err)
				}
				if got, _ := deliverInOrder(t, s, at); !slices.Equal(got, c.want) {
					t.Errorf("the fal webhook got %q; want %q", got, c.want)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM webhook_events WHERE endpoint_id <> ''`); n != c.endpoint {
					t.Errorf("the endpoint has %d events; want %d", n, c.endpoint)
				}
			})
		}
	}
}

// testSigningKey is a signing key as gengate makes one, its seed sealed
// in box, and the seed.
func testSigningKey(t *testing.T, box *gengate.SecretBox) (*gengate.SigningKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	k := &gengate.SigningKey{ID: gengate.SigningKeyPrefix + gengate.NewID(), Public: pub, CreatedAt: time.Now().Truncate(time.Millisecond)}
	seed := base64.StdEncoding.EncodeToString(priv.Seed())
	k.Sealed = box.Seal(seed, gengate.SigningKeyOwner(k.ID)...)
	return k, seed
}

// TestSigningKeys: the first call stores the key it is given, later ones
// return it without making another; two stored keys come newest first.
// On both databases.
func TestSigningKeys(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			k, _ := testSigningKey(t, sqltest.FileTokenKey)
			made := 0
			fresh := func() (*gengate.SigningKey, error) { made++; return k, nil }
			for range 2 {
				keys, err := s.SigningKeys(ctx, fresh)
				if err != nil || len(keys) != 1 || keys[0].ID != k.ID || !keys[0].Public.Equal(k.Public) || keys[0].Sealed != k.Sealed ||
					!keys[0].CreatedAt.Equal(k.CreatedAt) {
					t.Fatalf("SigningKeys = %+v, %v; want the key %+v", keys, err, k)
				}
			}
			if made != 1 {
				t.Errorf("fresh was called %d times; want once", made)
			}
			// A second key stored at once by another process: both are
			// kept, newest first.
			k2, _ := testSigningKey(t, sqltest.FileTokenKey)
			k2.CreatedAt = k.CreatedAt.Add(time.Millisecond)
			if _, err := s.SQL().ExecContext(ctx, `INSERT INTO signing_keys (id, public_key, private_key, created_at) VALUES ($1, $2, $3, $4)`,
				k2.ID, base64.RawURLEncoding.EncodeToString(k2.Public), k2.Sealed, k2.CreatedAt.UnixMilli()); err != nil {
				t.Fatal(err)
			}
			keys, err := s.SigningKeys(ctx, fresh)
			if err != nil || len(keys) != 2 || keys[0].ID != k2.ID || keys[1].ID != k.ID || made != 1 {
				t.Errorf("two keys: %+v, %v (fresh called %d times); want %s then %s", keys, err, made, k2.ID, k.ID)
			}
		})
	}
}

// TestFalWebhooksMigrateDown: undoing migration 00039 (a rollback) leaves
// the previous release's form: a fal request's webhook gets gengate's
// final-state event (its fal.completed event becomes one, by the task's
// state), and the signing keys go. Migrating up again works. On both
// databases.
func TestFalWebhooksMigrateDown(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url, dir := sqltest.URL(t, d), t.TempDir()
			s, err := sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatal(err)
			}
			a := newAccount(t, s, 100)
			done := newTask(a.ID, 1)
			done.WebhookURL, done.WebhookEvents = "https://example.com/fal", gengate.FalWebhookEvents
			mustCreate(t, s, done)
			c := mustClaim(t, s, done.ID, t0)
			c.Status, c.UpdatedAt, c.CompletedAt, c.ErrorCode = gengate.StatusFailed, t0, t0, gengate.EFailed
			if err := s.FinishTask(ctx, c, 1); err != nil {
				t.Fatal(err)
			}
			running := newTask(a.ID, 1)
			running.WebhookURL, running.WebhookEvents = "https://example.com/fal2", gengate.FalWebhookEvents
			mustCreate(t, s, running)
			k, _ := testSigningKey(t, sqltest.FileTokenKey)
			if _, err := s.SigningKeys(ctx, func() (*gengate.SigningKey, error) { return k, nil }); err != nil {
				t.Fatal(err)
			}

			if err := s.MigrateDownTo(ctx, 38); err != nil {
				t.Fatal(err)
			}
			var typ string
			if err := s.SQL().QueryRow(`SELECT type FROM webhook_events WHERE task_id = $1`, done.ID).Scan(&typ); err != nil || typ != gengate.EventFailed {
				t.Errorf("after the rollback the fal event is %q, %v; want %s", typ, err, gengate.EventFailed)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM task_webhooks WHERE task_id = $1 AND events = ''`, running.ID); n != 1 {
				t.Errorf("after the rollback the running request's webhook is not a plain webhookUrl")
			}
			s.Close()

			s, err = sqlstore.Open(ctx, url, dir)
			if err != nil {
				t.Fatalf("migrate up again: %v", err)
			}
			defer s.Close()
			if n := count(t, s, `SELECT COUNT(*) FROM signing_keys`); n != 0 {
				t.Errorf("%d signing keys after the rollback and up again", n)
			}
		})
	}
}
