package gengate

import (
	"strings"
	"testing"
)

// TestAppendSecret: a secret's 32 characters are drawn as
// crypto/rand.Int(rand.Reader, 62) drew them (a byte's low six bits, 62
// and 63 skipped), reading again when a read's bytes run out; keys and
// tokens are their prefix and 32 base62 characters.
func TestAppendSecret(t *testing.T) {
	reads := 0
	seq := func(p []byte) (int, error) { // 0xff, then 0, 1, 2, … 255, 0, …
		for i := range p {
			if reads == 0 {
				p[i] = 0xff
			} else {
				p[i] = byte((reads-1)*len(p) + i)
			}
		}
		reads++
		return len(p), nil
	}
	got := appendSecret([]byte("p_"), seq)
	var want strings.Builder
	want.WriteString("p_")
	for c := 0; want.Len() < 34; c++ {
		if c&63 < 62 {
			want.WriteByte(base62[c&63])
		}
	}
	if got != want.String() || reads != 2 {
		t.Errorf("appendSecret = %q after %d reads; want %q after 2 (a read of only skipped bytes, then one)", got, reads, want.String())
	}
	for _, s := range []string{NewKeySecret(), KeyPrefix + NewToken()} {
		rest, ok := strings.CutPrefix(s, KeyPrefix)
		if !ok || len(rest) != 32 || strings.Trim(rest, base62) != "" {
			t.Errorf("secret %q: want %s and 32 base62 characters", s, KeyPrefix)
		}
	}
	if a, b := NewToken(), NewToken(); a == b {
		t.Errorf("two tokens are the same: %s", a)
	}
}
