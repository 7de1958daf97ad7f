package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestLoginLinkSingleUse: of many concurrent uses of one link exactly one
// succeeds; an expired link never does; emails are unique; purging drops
// expired sessions and old links.
func TestLoginLinkSingleUse(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			ctx := context.Background()
			now := time.Now()
			a := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: now}
			m := gengate.NewMember(a.ID, "a@example.com", gengate.RoleOwner, now)
			if err := s.CreateAccountWithMember(ctx, a, 5, m); err != nil {
				t.Fatal(err)
			}
			b := &gengate.Account{ID: gengate.NewID(), Name: "b", CreatedAt: now}
			err := s.CreateAccountWithMember(ctx, b, 5, gengate.NewMember(b.ID, "a@example.com", gengate.RoleOwner, now))
			wantCode(t, "second member with the email", err, gengate.EEmailTaken)
			if _, err := s.FindAccount(ctx, b.ID); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Errorf("the refused account was kept: %v", err)
			}

			token, l := gengate.NewLoginLink(m.ID, gengate.LinkSetup, now)
			if err := s.CreateLoginLink(ctx, l); err != nil {
				t.Fatal(err)
			}
			const n = 8
			var wins int
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := s.UseLoginLink(ctx, gengate.HashKey(token), time.Now(), "hash")
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil && got.ID == m.ID:
						wins++
					case gengate.ErrorCode(err) != gengate.ENotFound:
						t.Errorf("use: %v", err)
					}
				}()
			}
			wg.Wait()
			if wins != 1 {
				t.Errorf("%d of %d concurrent uses of one link succeeded, want 1", wins, n)
			}
			if got, _ := s.FindMember(ctx, m.ID); got.PasswordHash != "hash" {
				t.Errorf("password hash %q not set with the link", got.PasswordHash)
			}

			old, ol := gengate.NewLoginLink(m.ID, gengate.LinkSignIn, now.Add(-25*time.Hour))
			if err := s.CreateLoginLink(ctx, ol); err != nil {
				t.Fatal(err)
			}
			_, err = s.UseLoginLink(ctx, gengate.HashKey(old), now, "")
			wantCode(t, "expired link", err, gengate.ENotFound)

			_, live := gengate.NewSession(m, now)
			_, dead := gengate.NewSession(m, now.Add(-gengate.SessionMaxAge))
			for _, se := range []*gengate.Session{live, dead} {
				if err := s.CreateSession(ctx, se); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := s.FindSession(ctx, dead.TokenHash, now); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Errorf("expired session found: %v", err)
			}
			if err := s.PurgeSessions(ctx, now.Add(48*time.Hour)); err != nil {
				t.Fatal(err)
			}
			var sessions, links int
			s.SQL().QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&sessions)
			s.SQL().QueryRow(`SELECT COUNT(*) FROM login_links`).Scan(&links)
			if sessions != 1 || links != 1 {
				t.Errorf("after purge: %d sessions (want the live one), %d links (want the used, unexpired one)", sessions, links)
			}
		})
	}
}
