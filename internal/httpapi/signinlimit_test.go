package httpapi

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSignInLimiterBounded: the limiter keys its counters by a hash, so
// 2,000 attempts with 64 KB emails keep no email (the heap grows by the
// counters alone, 2 × 2,000 × 256 bytes, not by 128 MB of emails); and
// its counters never outgrow --signin-limit-memory: once they are all
// still counting, an attempt that needs a new one is refused, while the
// ones already counted go on being counted.
func TestSignInLimiterBounded(t *testing.T) {
	t.Run("keys hashed", func(t *testing.T) {
		l := newSignInLimiter(AccountsConfig{})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		now := time.Now()
		for i := range 2000 {
			email := fmt.Sprintf("%d@", i) + strings.Repeat("x", 64<<10)
			if d := l.attempt(email, fmt.Sprintf("10.0.%d.%d", i/250, i%250), now); d != 0 {
				t.Fatalf("attempt %d refused", i)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("2,000 attempts with 64 KB emails: %d buckets, heap +%d KB", len(l.buckets), growth>>10)
		if growth > 8<<20 {
			t.Errorf("the heap grew by %d MB keeping 4,000 counters: the emails are kept", growth>>20)
		}
		runtime.KeepAlive(l)
	})
	t.Run("memory bounded", func(t *testing.T) {
		l := newSignInLimiter(AccountsConfig{SignInMemory: 64 << 10}) // 256 counters
		if l.maxBuckets != 256 {
			t.Fatalf("maxBuckets %d, want 256", l.maxBuckets)
		}
		now := time.Now()
		refused := 0
		for i := range 1000 {
			if l.attempt(fmt.Sprintf("u%d@x.test", i), fmt.Sprintf("10.1.%d.%d", i/250, i%250), now) > 0 {
				refused++
			}
			if len(l.buckets) > l.maxBuckets {
				t.Fatalf("%d counters after attempt %d, over %d", len(l.buckets), i, l.maxBuckets)
			}
		}
		if refused != 1000-128 {
			t.Errorf("%d attempts refused, want %d (128 fit, two counters each)", refused, 1000-128)
		}
		// A counted email is still counted: its 10 attempts run out.
		for range 9 {
			l.attempt("u0@x.test", "10.1.0.0", now)
		}
		if l.attempt("u0@x.test", "10.1.0.0", now) == 0 {
			t.Error("an 11th attempt on a counted email was let through")
		}
		// Counters that have refilled are dropped for new ones.
		later := now.Add(DefaultSignInWindow * 2)
		if d := l.attempt("new@x.test", "10.9.9.9", later); d != 0 {
			t.Errorf("after the window, a new attempt was refused (%s)", d)
		}
	})
}
