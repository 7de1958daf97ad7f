package httpapi

import (
	"crypto/sha256"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/gengate/gengate"
)

// Sign-in limits: defaults of AccountsConfig.
const (
	DefaultSignInPerAccount = 10
	DefaultSignInPerAddress = 30
	DefaultSignInWindow     = 15 * time.Minute
	// DefaultSignInMemory is the memory the limiter's buckets may take
	// (--signin-limit-memory): 65,536 buckets of signInBucketBytes.
	DefaultSignInMemory = 16 << 20
)

// signInBucketBytes is what one bucket costs, counted high: its map
// entry (a 16-byte key, a pointer, the map's own overhead) and its
// rate.Limiter (a mutex, four numbers and a time: 72 bytes, allocated as
// 80). Keys are hashes of fixed size, so a bucket for a 64 KB email costs
// what one for a short email does.
const signInBucketBytes = 256

// signInKey names a bucket: the first 16 bytes of the SHA-256 of its kind
// and value, so that its size does not follow what a client sent.
type signInKey [16]byte

func signInKeyOf(kind, value string) signInKey {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(value))
	var k signInKey
	copy(k[:], h.Sum(nil))
	return k
}

// signInLimiter counts sign-in attempts (right or wrong) per account email
// and per client address in token buckets: n attempts at once, refilled at
// n per window. Buckets live in this process's memory: with N API
// processes an attacker gets N times the attempts, and a restart forgets
// them. Unknown emails are counted like known ones, so the limit reveals
// nothing about which exist. The buckets take at most maxBuckets ×
// signInBucketBytes: when they are all taken, the buckets that have
// refilled (that remember nothing) are dropped; when none has, an attempt
// that needs a new bucket is refused as over the limit (the attempts
// already counted are never forgotten early, which would let an attacker
// reset an email's count by flooding the table).
type signInLimiter struct {
	perAccount, perAddress int // ≤ 0: no limit
	window                 time.Duration
	maxBuckets             int
	mu                     sync.Mutex
	buckets                map[signInKey]*rate.Limiter
}

func newSignInLimiter(c AccountsConfig) *signInLimiter {
	l := &signInLimiter{perAccount: c.SignInPerAccount, perAddress: c.SignInPerAddress, window: c.SignInWindow,
		buckets: map[signInKey]*rate.Limiter{}}
	if l.perAccount == 0 {
		l.perAccount = DefaultSignInPerAccount
	}
	if l.perAddress == 0 {
		l.perAddress = DefaultSignInPerAddress
	}
	if l.window <= 0 {
		l.window = DefaultSignInWindow
	}
	memory := c.SignInMemory
	if memory <= 0 {
		memory = DefaultSignInMemory
	}
	l.maxBuckets = int(max(memory/signInBucketBytes, 2))
	return l
}

// bucket returns the bucket of key, made when missing; nil when the
// buckets are all taken and none can be dropped.
func (l *signInLimiter) bucket(key signInKey, n int, now time.Time) *rate.Limiter {
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxBuckets {
			for k, v := range l.buckets {
				if v.TokensAt(now) >= float64(v.Burst()) {
					delete(l.buckets, k)
				}
			}
			if len(l.buckets) >= l.maxBuckets {
				return nil
			}
		}
		b = rate.NewLimiter(rate.Limit(float64(n)/l.window.Seconds()), n)
		l.buckets[key] = b
	}
	return b
}

// attempt counts one attempt for the email (if any) and the address, and
// returns how long to wait when either is over its limit (the attempt is
// then not counted).
func (l *signInLimiter) attempt(email, addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var rs []*rate.Reservation
	var wait time.Duration
	for _, c := range [2]struct {
		on         bool
		kind, name string
		n          int
	}{{l.perAddress > 0, "addr", addr, l.perAddress}, {email != "" && l.perAccount > 0, "email", email, l.perAccount}} {
		if !c.on {
			continue
		}
		b := l.bucket(signInKeyOf(c.kind, c.name), c.n, now)
		if b == nil { // the table is full of buckets that remember attempts
			wait = max(wait, l.window/time.Duration(c.n))
			continue
		}
		rs = append(rs, b.ReserveN(now, 1))
	}
	for _, r := range rs {
		wait = max(wait, r.DelayFrom(now))
	}
	if wait > 0 {
		for _, r := range rs {
			r.CancelAt(now)
		}
	}
	return wait
}

func (a *api) tooMany(w http.ResponseWriter, r *http.Request, d time.Duration) {
	secs := int(math.Ceil(d.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, r, a.log, gengate.Errorf(gengate.ERateLimited, "too many sign-in attempts; retry in %d s", secs))
}

// passwordSlots is how many password hashes may run at once.
func passwordSlots(c AccountsConfig) int {
	if c.PasswordWork > 0 {
		return c.PasswordWork
	}
	return runtime.NumCPU()
}
