package httpapi

import (
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
	// maxSignInBuckets bounds the limiter's memory: past it, buckets that
	// have refilled (forgotten nothing worth keeping) are dropped.
	maxSignInBuckets = 100000
)

// signInLimiter counts sign-in attempts (right or wrong) per account email
// and per client address in token buckets: n attempts at once, refilled at
// n per window. Buckets live in this process's memory: with N API
// processes an attacker gets N times the attempts, and a restart forgets
// them. Unknown emails are counted like known ones, so the limit reveals
// nothing about which exist.
type signInLimiter struct {
	perAccount, perAddress int // ≤ 0: no limit
	window                 time.Duration
	mu                     sync.Mutex
	buckets                map[string]*rate.Limiter
}

func newSignInLimiter(c AccountsConfig) *signInLimiter {
	l := &signInLimiter{perAccount: c.SignInPerAccount, perAddress: c.SignInPerAddress, window: c.SignInWindow,
		buckets: map[string]*rate.Limiter{}}
	if l.perAccount == 0 {
		l.perAccount = DefaultSignInPerAccount
	}
	if l.perAddress == 0 {
		l.perAddress = DefaultSignInPerAddress
	}
	if l.window <= 0 {
		l.window = DefaultSignInWindow
	}
	return l
}

func (l *signInLimiter) bucket(name string, n int) *rate.Limiter {
	b, ok := l.buckets[name]
	if !ok {
		if len(l.buckets) >= maxSignInBuckets {
			now := time.Now()
			for k, v := range l.buckets {
				if v.TokensAt(now) >= float64(v.Burst()) {
					delete(l.buckets, k)
				}
			}
		}
		b = rate.NewLimiter(rate.Limit(float64(n)/l.window.Seconds()), n)
		l.buckets[name] = b
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
	if l.perAddress > 0 {
		rs = append(rs, l.bucket("addr:"+addr, l.perAddress).ReserveN(now, 1))
	}
	if email != "" && l.perAccount > 0 {
		rs = append(rs, l.bucket("email:"+email, l.perAccount).ReserveN(now, 1))
	}
	var wait time.Duration
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
