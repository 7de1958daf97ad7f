package gengate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// This file serves API-key authentication from memory: a request's key is
// looked up in the database once, then answered from this process's copy,
// with a bound on how long a revoked key can still be accepted.
//
// The bound comes from a counter in the database (Store.KeysGeneration),
// bumped in the transaction of every change to a key, by any process or
// the CLI. Run reads it every Refresh/4; a new value drops every copy. A
// copy is used only while the last read that found the counter unchanged
// started less than Refresh ago; otherwise (the database slow or down,
// Run not running) the key is read from the database as if there were no
// cache. So a key whose revocation committed at T is refused by every
// process for every request authenticated after T + Refresh, whatever the
// timing of the reads: that read started after T, so it saw the change.

// DefaultKeyRefresh is the default of serve --key-refresh: the longest a
// revoked or changed key may still be accepted by a process that had it in
// memory.
const DefaultKeyRefresh = time.Second

// DefaultKeyCacheSize is the default of serve --key-cache: the most keys
// one process keeps in memory (a few hundred bytes each).
const DefaultKeyCacheSize = 10_000

// KeyCache keeps the keys requests authenticate with in memory. Make one
// with NewKeyCache, set it as Service.Keys and run Run; the zero Service
// (Keys nil) reads every key from the database.
type KeyCache struct {
	store   keyStore
	refresh time.Duration
	size    int
	// Now is the cache's clock (nil: time.Now), which measures the refresh
	// bound; tests set it to step past the bound without waiting for it.
	Now func() time.Time

	mu    sync.Mutex
	keys  map[string]*cachedKey // by the key's hash
	known bool                  // gen has been read
	gen   int64
	// epoch counts the times keys was emptied: a key read from the
	// database while it changed is not kept (it may be older than the
	// change that emptied it).
	epoch uint64
	// confirmed is when the last read of the generation that found it as
	// known started (monotonic clock).
	confirmed time.Time

	hits, misses atomic.Int64
}

type keyStore interface {
	FindAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	KeysGeneration(ctx context.Context) (int64, error)
}

type cachedKey struct {
	key  APIKey // as read; never changed (requests get copies)
	used atomic.Int64
}

// NewKeyCache returns a cache of the store's keys whose copies are trusted
// for at most refresh (≤ 0: DefaultKeyRefresh) after the change counter
// was last read, holding at most size keys (≤ 0: DefaultKeyCacheSize).
func NewKeyCache(store keyStore, refresh time.Duration, size int) *KeyCache {
	if refresh <= 0 {
		refresh = DefaultKeyRefresh
	}
	if size <= 0 {
		size = DefaultKeyCacheSize
	}
	return &KeyCache{store: store, refresh: refresh, size: size, keys: make(map[string]*cachedKey)}
}

// Refresh is the cache's bound: a change to a key reaches this process at
// most this long after it committed.
func (c *KeyCache) Refresh() time.Duration { return c.refresh }

// Run reads the change counter every Refresh/4 until ctx ends.
func (c *KeyCache) Run(ctx context.Context) {
	t := time.NewTicker(c.refresh / 4)
	defer t.Stop()
	for {
		_ = c.Check(ctx) // a failed read leaves the copies untrusted once Refresh passes
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *KeyCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Check reads the change counter once: a new value drops every copy; the
// same value trusts them for another Refresh.
func (c *KeyCache) Check(ctx context.Context) error {
	start := c.now()
	g, err := c.store.KeysGeneration(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known || g != c.gen {
		c.dropLocked()
		c.known, c.gen = true, g
	}
	if start.After(c.confirmed) {
		c.confirmed = start
	}
	return nil
}

// Changed drops every copy at once: this process changed a key (its
// change reaches the others through the counter).
func (c *KeyCache) Changed() {
	c.mu.Lock()
	c.dropLocked()
	c.mu.Unlock()
}

func (c *KeyCache) dropLocked() {
	clear(c.keys)
	c.epoch++
}

// Find returns a copy of the unrevoked key with the hash: from memory when
// the copy is trusted, otherwise from the store (and then kept).
func (c *KeyCache) Find(ctx context.Context, hash string) (*APIKey, error) {
	c.mu.Lock()
	e := c.keys[hash]
	trusted := c.known && c.now().Sub(c.confirmed) < c.refresh
	epoch := c.epoch
	c.mu.Unlock()
	if e != nil && trusted {
		c.hits.Add(1)
		k := e.key
		k.LastUsedAt = fromUnixMilli(e.used.Load())
		return &k, nil
	}
	c.misses.Add(1)
	k, err := c.store.FindAPIKeyByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	e = &cachedKey{key: *k}
	e.used.Store(unixMilli(k.LastUsedAt))
	c.mu.Lock()
	if c.epoch == epoch {
		if len(c.keys) >= c.size {
			for h := range c.keys { // one out, whichever the map yields
				delete(c.keys, h)
				break
			}
		}
		c.keys[hash] = e
	}
	c.mu.Unlock()
	return k, nil
}

// claimTouch reports whether this request should record the key's use at
// now: of the requests that find the key's last use a KeyTouchInterval
// old, one does.
func (c *KeyCache) claimTouch(k *APIKey, now time.Time) bool {
	c.mu.Lock()
	e := c.keys[k.Hash]
	c.mu.Unlock()
	if e == nil {
		return true
	}
	return e.used.CompareAndSwap(unixMilli(k.LastUsedAt), unixMilli(now))
}

// Lookups returns how many keys were found in memory (hits) and in the
// store (misses) since the cache was made.
func (c *KeyCache) Lookups() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromUnixMilli(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
