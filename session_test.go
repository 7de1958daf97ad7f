package gengate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestSessionRenewed: a use writes when it moves the expiry by more than
// an hour, or when the last use written is more than an hour old, and at
// most about once an hour otherwise; the expiry never passes the maximum
// age.
func TestSessionRenewed(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	_, fresh := NewSession(&Member{ID: "m", AccountID: "a"}, "ua", start)
	for _, c := range []struct {
		name       string
		expires    time.Time
		seen       time.Time
		now        time.Time
		wantUntil  time.Time
		wantWrites bool
	}{
		{"a use within the hour", fresh.ExpiresAt, start, start.Add(30 * time.Minute), start.Add(30*time.Minute + SessionIdle), false},
		{"a use after the hour", fresh.ExpiresAt, start, start.Add(61 * time.Minute), start.Add(61*time.Minute + SessionIdle), true},
		{"at the maximum age, last use recent", start.Add(SessionMaxAge), start.Add(20 * 24 * time.Hour),
			start.Add(20*24*time.Hour + 30*time.Minute), start.Add(SessionMaxAge), false},
		{"at the maximum age, last use old", start.Add(SessionMaxAge), start.Add(20 * 24 * time.Hour),
			start.Add(20*24*time.Hour + 2*time.Hour), start.Add(SessionMaxAge), true},
		{"never seen (a session older than the column)", fresh.ExpiresAt, time.Time{}, start.Add(time.Minute), start.Add(time.Minute + SessionIdle), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := *fresh
			s.ExpiresAt, s.LastSeenAt = c.expires, c.seen
			until, writes := s.Renewed(c.now)
			if !until.Equal(c.wantUntil) || writes != c.wantWrites {
				t.Errorf("Renewed(%v) = %v, %v; want %v, %v", c.now, until, writes, c.wantUntil, c.wantWrites)
			}
		})
	}
	if !fresh.LastSeenAt.Equal(start) || fresh.UserAgent != "ua" {
		t.Errorf("a new session: last seen %v, user agent %q", fresh.LastSeenAt, fresh.UserAgent)
	}
}

// TestBoundUserAgent: a session keeps a User-Agent trimmed, without
// control characters or invalid UTF-8, and at most MaxUserAgentLength
// bytes, cut between characters.
func TestBoundUserAgent(t *testing.T) {
	long := strings.Repeat("é", MaxUserAgentLength) // 2 bytes each
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0 \t", "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"},
		{"curl/8.5.0\r\nX-Injected: 1", "curl/8.5.0X-Injected: 1"},
		{"bad \xff byte", "bad  byte"},
		{long, strings.Repeat("é", MaxUserAgentLength/2)},
		{strings.Repeat("a", MaxUserAgentLength-1) + "é", strings.Repeat("a", MaxUserAgentLength-1)},
	} {
		got := BoundUserAgent(c.in)
		if got != c.want {
			t.Errorf("BoundUserAgent(%.40q) = %.40q (%d bytes), want %.40q (%d bytes)", c.in, got, len(got), c.want, len(c.want))
		}
		if len(got) > MaxUserAgentLength || !utf8.ValidString(got) {
			t.Errorf("BoundUserAgent(%.40q) is %d bytes, valid UTF-8 %v", c.in, len(got), utf8.ValidString(got))
		}
	}
}

// TestCheckAccountName: a new account name is trimmed, not empty, at most
// MaxNameLength bytes, one line without control characters or
// bidirectional overrides; each refusal names the field.
func TestCheckAccountName(t *testing.T) {
	for _, c := range []struct{ in, want, field string }{
		{"Ann's studio", "Ann's studio", ""},
		{"  Ann  ", "Ann", ""},
		{"Ann 👩‍💻 studio", "Ann 👩‍💻 studio", ""}, // a zero-width joiner inside an emoji is fine
		{strings.Repeat("x", MaxNameLength), strings.Repeat("x", MaxNameLength), ""},
		{"", "", FieldRequired},
		{" \t\n ", "", FieldRequired},
		{strings.Repeat("x", MaxNameLength+1), "", FieldTooLong},
		{"two\nlines", "", FieldValue},
		{"bell\a", "", FieldValue},
		{"evil\u202egnp.exe", "", FieldValue},
		{"isolate\u2067x", "", FieldValue},
		{"bad \xff", "", FieldValue},
	} {
		got, err := CheckAccountName(c.in)
		if c.field == "" {
			if err != nil || got != c.want {
				t.Errorf("CheckAccountName(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Code != EInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "name" || e.Fields[0].Code != c.field {
			t.Errorf("CheckAccountName(%q) = %q, %v; want INVALID_REQUEST on name with %s", c.in, got, err, c.field)
		}
	}
}

// TestRenameAccountRefusals: only a member who manages the account (its
// owner or an operator) may rename it; another role and an API key (no
// member) are refused with FORBIDDEN before anything is read or written
// (the service here has no store: reaching it would panic).
func TestRenameAccountRefusals(t *testing.T) {
	s := &Service{}
	for _, m := range []*Member{nil, {ID: "m", AccountID: "a", Role: "member"}, {ID: "m", AccountID: "a", Role: ""}} {
		if _, err := s.RenameAccount(context.Background(), m, "New name"); ErrorCode(err) != EForbidden {
			t.Errorf("rename by %+v: %v, want FORBIDDEN", m, err)
		}
	}
	for _, role := range []string{RoleOwner, RoleOperator} {
		if !(&Member{Role: role}).ManagesAccount() {
			t.Errorf("a member with role %s does not manage the account", role)
		}
	}
	if _, err := s.MemberSessions(context.Background(), nil, TaskCursor{}, 10); ErrorCode(err) != EForbidden {
		t.Errorf("sessions without a member: %v, want FORBIDDEN", err)
	}
	if err := s.EndSession(context.Background(), nil, "x"); ErrorCode(err) != EForbidden {
		t.Errorf("ending a session without a member: %v, want FORBIDDEN", err)
	}
}
