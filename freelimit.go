package gengate

import (
	"fmt"
	"math"
	"time"
)

// Limiter paces calls per key: Wait reports how long the key must wait
// before its next call, or 0 when this one may go now (and is counted).
type Limiter interface {
	Wait(key string, now time.Time) time.Duration
}

// DefaultFreeRate and DefaultFreeBurst are the pace of free-model calls per
// account (--free-rate-limit, --free-rate-burst): a free call costs the
// server work no credit pays for (a builtin image operation can take a core
// for seconds), so one account, whatever keys it calls with, may start one
// every two seconds, five at once.
const (
	DefaultFreeRate  = 0.5
	DefaultFreeBurst = 5
)

// paceFree refuses a call of a free model over the account's pace with
// RATE_LIMITED, before anything is fetched, stored or charged. Paid calls
// are bounded by their balance and are not counted; idempotent replays
// never reach it.
func (s *Service) paceFree(key *APIKey, cost int) error {
	if cost != 0 || s.FreeLimit == nil {
		return nil
	}
	// Counted per account: minting more keys does not multiply the pace.
	d := s.FreeLimit.Wait("account:"+key.AccountID, s.now())
	if d <= 0 {
		return nil
	}
	secs := int(math.Ceil(d.Seconds()))
	return &Error{Code: ERateLimited,
		Message: fmt.Sprintf("too many calls of free models for this account; retry in %d s", secs),
		Extra:   map[string]any{"retryAfter": secs}}
}
