package sqlstore_test

import (
	"context"
	"strconv"
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

			_, live := gengate.NewSession(m, "", now)
			_, dead := gengate.NewSession(m, "", now.Add(-gengate.SessionMaxAge))
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

// TestMemberSessions: a member's list of sessions holds their unexpired
// sessions only, newest first, paged by a cursor, with the browser and the
// last use; a use moves the last use; a member ends one of their own
// sessions by its id, and not another member's (of the same account or
// another), nor an expired one; an account is renamed. Both databases.
func TestMemberSessions(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := sqltest.Open(t, d)
			ctx := context.Background()
			now := time.Now().Truncate(time.Millisecond)
			a := &gengate.Account{ID: gengate.NewID(), Name: "a", CreatedAt: now}
			ann := gengate.NewMember(a.ID, "ann@example.com", gengate.RoleOwner, now)
			if err := s.CreateAccountWithMember(ctx, a, 5, ann); err != nil {
				t.Fatal(err)
			}
			bob := gengate.NewMember(a.ID, "bob@example.com", gengate.RoleOwner, now) // same account
			if err := s.CreateMember(ctx, bob); err != nil {
				t.Fatal(err)
			}
			var mine []*gengate.Session
			for i := range 3 {
				_, se := gengate.NewSession(ann, "Browser "+strconv.Itoa(i), now.Add(time.Duration(i-3)*time.Hour))
				mine = append(mine, se)
			}
			_, expired := gengate.NewSession(ann, "old", now.Add(-gengate.SessionMaxAge))
			_, bobs := gengate.NewSession(bob, "Bob's", now)
			for _, se := range append(mine, expired, bobs) {
				if err := s.CreateSession(ctx, se); err != nil {
					t.Fatal(err)
				}
			}

			list := func(after gengate.TaskCursor, limit int) []gengate.Session {
				t.Helper()
				got, err := s.ListMemberSessions(ctx, ann.ID, now, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			first := list(gengate.TaskCursor{}, 2)
			if len(first) != 2 || first[0].ID != mine[2].ID || first[1].ID != mine[1].ID {
				t.Fatalf("first page %+v, want the two newest of ann's sessions", first)
			}
			rest := list(gengate.TaskCursor{CreatedAt: first[1].CreatedAt, ID: first[1].ID}, 2)
			if len(rest) != 1 || rest[0].ID != mine[0].ID {
				t.Fatalf("second page %+v, want ann's oldest live session only (not the expired one, not bob's)", rest)
			}
			got := first[0]
			if got.UserAgent != "Browser 2" || !got.CreatedAt.Equal(mine[2].CreatedAt) || !got.LastSeenAt.Equal(mine[2].CreatedAt) ||
				!got.ExpiresAt.Equal(mine[2].ExpiresAt) || got.AccountID != a.ID || got.MemberID != ann.ID {
				t.Errorf("listed session %+v, stored %+v", got, mine[2])
			}

			// A use moves the last use and the expiry.
			seen := now.Add(time.Minute)
			if err := s.ExtendSession(ctx, mine[0].ID, seen, seen.Add(gengate.SessionIdle)); err != nil {
				t.Fatal(err)
			}
			se, _, err := s.FindSession(ctx, mine[0].TokenHash, now)
			if err != nil {
				t.Fatal(err)
			}
			if !se.LastSeenAt.Equal(seen) || !se.ExpiresAt.Equal(seen.Add(gengate.SessionIdle)) || se.UserAgent != "Browser 0" {
				t.Errorf("after a use: %+v", se)
			}

			// Ending: another member's session and an expired one are not
			// found, and stay; one's own ends.
			wantCode(t, "bob's session ended by ann", s.DeleteMemberSession(ctx, ann.ID, bobs.ID, now), gengate.ENotFound)
			wantCode(t, "an expired session", s.DeleteMemberSession(ctx, ann.ID, expired.ID, now), gengate.ENotFound)
			wantCode(t, "an unknown session", s.DeleteMemberSession(ctx, ann.ID, gengate.NewID(), now), gengate.ENotFound)
			if _, _, err := s.FindSession(ctx, bobs.TokenHash, now); err != nil {
				t.Errorf("bob's session after ann's attempt: %v", err)
			}
			if err := s.DeleteMemberSession(ctx, ann.ID, mine[1].ID, now); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.FindSession(ctx, mine[1].TokenHash, now); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Errorf("the ended session is still found: %v", err)
			}
			if n := len(list(gengate.TaskCursor{}, 10)); n != 2 {
				t.Errorf("%d sessions listed after ending one of three, want 2", n)
			}

			if err := s.RenameAccount(ctx, a.ID, "Ann's studio"); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.FindAccount(ctx, a.ID); got.Name != "Ann's studio" {
				t.Errorf("renamed account is named %q", got.Name)
			}
			wantCode(t, "renaming an unknown account", s.RenameAccount(ctx, gengate.NewID(), "x"), gengate.ENotFound)
		})
	}
}
