package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/gengate/gengate"
)

// limiter holds a token bucket per API key for generate calls. Buckets live
// in this process: with N API processes a key may make N times the rate.
type limiter struct {
	every rate.Limit
	burst int
	mu    sync.Mutex
	keys  map[string]*rate.Limiter
}

func newLimiter(perSecond float64, burst int) *limiter {
	if burst < 1 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &limiter{every: rate.Limit(perSecond), burst: burst, keys: map[string]*rate.Limiter{}}
}

// NewLimiter returns a per-key pace of perSecond calls with bursts of
// burst (default the rate, rounded up), kept in this process: the
// service's pace of free-model calls.
func NewLimiter(perSecond float64, burst int) gengate.Limiter { return newLimiter(perSecond, burst) }

// Wait is wait, for gengate.Limiter.
func (l *limiter) Wait(key string, now time.Time) time.Duration { return l.wait(key, now) }

// wait returns how long the key must wait before its next call, or 0 when
// the call may go now (and is counted).
func (l *limiter) wait(keyID string, now time.Time) time.Duration {
	l.mu.Lock()
	b, ok := l.keys[keyID]
	if !ok {
		b = rate.NewLimiter(l.every, l.burst)
		l.keys[keyID] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// rateLimit refuses generate calls over the key's rate with 429 and
// Retry-After, before anything is read, stored or charged.
func (a *api) rateLimit(next http.Handler) http.Handler {
	if a.limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := a.limiter.wait(limitID(r), time.Now()); d > 0 {
			secs := int(math.Ceil(d.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, r, a.log, gengate.Errorf(gengate.ERateLimited, "too many generate calls for this API key; retry in %d s", secs))
			return
		}
		next.ServeHTTP(w, r)
	})
}
