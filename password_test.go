package gengate

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	h1, h2 := HashPassword("correct horse"), HashPassword("correct horse")
	if h1 == h2 {
		t.Error("two hashes of one password are equal: no per-password salt")
	}
	if !strings.HasPrefix(h1, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h1, "correct horse") {
		t.Errorf("hash %q is not a PHC argon2id string", h1)
	}
	for _, tc := range []struct {
		hash, pw string
		want     bool
	}{
		{h1, "correct horse", true},
		{h2, "correct horse", true},
		{h1, "correct horsE", false},
		{h1, "", false},
		{"", "", false},
		{"garbage", "correct horse", false},
		{dummyPasswordHash, "correct horse", false},
		{h1, "correct horse" + strings.Repeat("x", MaxPasswordLength), false},
	} {
		if got := CheckPassword(tc.hash, tc.pw); got != tc.want {
			t.Errorf("CheckPassword(%.20q, %.20q) = %v, want %v", tc.hash, tc.pw, got, tc.want)
		}
	}
	// The dummy costs what a real check costs: same parameters.
	salt, hash, m, tm, p, err := parsePHC(dummyPasswordHash)
	if err != nil || len(salt) != argonSaltLen || len(hash) != argonKeyLen || m != argonMemory || tm != argonTime || p != argonThreads {
		t.Errorf("dummy hash parses to salt %d hash %d m=%d t=%d p=%d err %v", len(salt), len(hash), m, tm, p, err)
	}
}

func TestPasswordRulesAndEmails(t *testing.T) {
	for pw, ok := range map[string]bool{"short": false, "exactly10!": true, strings.Repeat("a", 257): false} {
		if err := CheckPasswordRules(pw); (err == nil) != ok {
			t.Errorf("CheckPasswordRules(%d bytes) = %v", len(pw), err)
		}
	}
	for in, want := range map[string]string{" Ann@Example.COM ": "ann@example.com", "a@b": "a@b", "no-at": "", "@x": "", "a@": "",
		"a b@c": "", "a@b@c": "",
		// One member however it is spelled: fullwidth letters and at sign,
		// capitals, the Kelvin sign; look-alikes with invisible characters
		// or a trailing dot are refused, not made separate members.
		"\uff55\uff11@x.test": "u1@x.test", "u1\uff20x.test": "u1@x.test", "U1@X.TEST": "u1@x.test", "\u212a@x.test": "k@x.test",
		"u1@x.test\u200b": "", "u\u200b1@x.test": "", "u1@x.te\u200dst": "", "\ufeffu1@x.test": "", "u1\u00ad@x.test": "",
		"u1@x.test\u202e": "", "u1@x.test.": "", "u1@.x.test": "", "u1@x..test": "", "u1@x.test\x00": "", "u1\xff@x.test": ""} {
		got, err := NormalizeEmail(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// BenchmarkCheckPassword measures one sign-in's password work (the same
// for an unknown email: BurnPasswordCheck).
func BenchmarkCheckPassword(b *testing.B) {
	h := HashPassword("correct horse battery")
	for b.Loop() {
		CheckPassword(h, "correct horse battery")
	}
}
