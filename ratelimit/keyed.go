package ratelimit

import (
	"context"
	"hash/maphash"
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
)

// DefaultMaxKeys is how many keys a Keyed limiter holds at most when MaxKeys is not set.
const DefaultMaxKeys = 100_000

// MaxKeys bounds how many keys a Keyed limiter holds at once. Default 100,000
// (DefaultMaxKeys). See Keyed for what happens at the bound. It bounds the limiter's
// memory: with IPv4 addresses as string keys, about 67 bytes per key held, and under 100
// bytes per key of MaxKeys while keys come and go (maps keep room for the keys they once
// held); longer keys add their own bytes beyond 16. A negative n fails NewKeyed with
// R4C-ATR-007. A Limiter ignores it.
func MaxKeys(n int) Option { return func(s *settings) { s.maxKeys = n } }

// Keyed is a rate limiter per key: one GCRA cell for each client id, IP address or API
// key, each with the semantics of a Limiter built with the same options — Permits per
// Period with a burst of Permits, refusals that say when to come back, reservations
// within MaxWait that can be canceled. Keys do not share permits: one key spending its
// quota leaves the others untouched.
//
// Cells are made when a key is first seen and evicted, lazily and with no goroutine, once
// idle (every permit back: an idle cell admits a full burst, as a new one does). Memory
// is bounded by MaxKeys: a new key that finds its shard full of busy cells is refused
// with the limiter's rejection, and keys already held keep their quota. A call for a key
// that has a cell allocates nothing. The package documentation, under "Per-key limits",
// says how eviction, the key bound and a Backend work in detail.
//
// A Keyed limiter is safe for concurrent use; its configuration is fixed when it is built.
type Keyed[K comparable] struct {
	// base holds what every key shares: the configuration, the clock, the instance id,
	// the preallocated rejections and the listener. Its own TAT is unused.
	base     *Limiter
	backend  Backend
	maxKeys  int
	perShard int
	mask     uint64
	seed     maphash.Seed
	shards   []keyedShard[K]
}

// NewKeyed builds a keyed limiter from opts: the options of New (Permits and Period are
// required) plus MaxKeys. An invalid configuration returns a *policy.ConfigError:
// R4C-ATR-003 (permits < 1), R4C-ATR-002 (period ≤ 0), R4C-REG-001 (period shorter than
// 1ns per permit), R4C-ATR-004 (maxWait < 0), R4C-ATR-007 (maxKeys < 0). Its instance id
// is WithInstanceID's, else Name's, else "ratelimiter".
func NewKeyed[K comparable](opts ...Option) (*Keyed[K], error) {
	return kind.New(defaults, buildKeyed[K], opts)
}

func buildKeyed[K comparable](s settings) (*Keyed[K], error) {
	if s.maxKeys < 0 {
		return nil, policy.Errorf(policy.CodeOutOfRange, "rateLimiter.maxKeys", strconv.Itoa(s.maxKeys),
			"maxKeys must not be negative (0 means the default, %d)", DefaultMaxKeys)
	}
	backend := s.backend
	s.backend = nil // each key binds its own store
	base, err := build(s)
	if err != nil {
		return nil, err
	}
	n := s.maxKeys
	if n == 0 {
		n = DefaultMaxKeys
	}
	shards := maxShards
	for shards > 1 && n/shards < minPerShard {
		shards /= 2
	}
	return &Keyed[K]{
		base:     base,
		backend:  backend,
		maxKeys:  n,
		perShard: n / shards,
		mask:     uint64(shards - 1),
		seed:     maphash.MakeSeed(),
		shards:   make([]keyedShard[K], shards),
	}, nil
}

// InstanceID returns the limiter's instance id, which its events and rejections carry.
func (k *Keyed[K]) InstanceID() string { return k.base.events.ID }

// Config returns the configuration every key's cell follows.
func (k *Keyed[K]) Config() Config { return k.base.cfg }

// MaxKeys returns the bound on the number of keys held at once.
func (k *Keyed[K]) MaxKeys() int { return k.maxKeys }

// Clock returns the limiter's time source.
func (k *Keyed[K]) Clock() clock.Clock { return k.base.clk }

// Backend returns the limiter's backend, or nil for an in-process limiter.
func (k *Keyed[K]) Backend() Backend { return k.backend }

// Rejection returns the limiter's one rejection error, shared by every key: it matches
// ErrExceeded and is made once, when the limiter is built.
func (k *Keyed[K]) Rejection() error { return k.base.rej.Plain }

// TryAcquire takes a permit for key that is free now and reports whether it did; it never
// waits, whatever MaxWait is. A refusal publishes a RateLimiterRejected event. For a key
// that has a cell it never allocates. A disabled limiter always returns true.
func (k *Keyed[K]) TryAcquire(key K) bool {
	l := k.base
	if !l.enabled {
		return true
	}
	var d decision
	if k.backend != nil {
		d = k.takeRemote(key, 0)
	} else {
		d = k.take(key, 0)
	}
	if !d.ok {
		l.publishRejected(d.now, d.wait, l.rej.Plain)
	}
	return d.ok
}

// Reserve takes the next permit for key if it comes within MaxWait, without waiting for
// it, and returns its Reservation: wait Delay() before the call, or Cancel() it to give
// the permit back. When the permit does not come within MaxWait, or the key is new and
// the limiter is full, nothing is reserved and Reserve returns the limiter's rejection
// (matching ErrExceeded) with a refused Reservation whose Delay() is the retry-after: how
// long until the key's next permit is free or, for a new key refused by a full limiter,
// until a cell of its shard becomes idle. Events and allocations are TryAcquire's. A
// disabled limiter returns a reservation with no delay.
func (k *Keyed[K]) Reserve(key K) (Reservation, error) {
	l := k.base
	if !l.enabled {
		return Reservation{ok: true}, nil
	}
	var d decision
	if k.backend != nil {
		d = k.takeRemote(key, l.maxWait)
	} else {
		d = k.take(key, l.maxWait)
	}
	if !d.ok {
		l.publishRejected(d.now, d.wait, l.rej.Plain)
		return Reservation{delay: time.Duration(d.wait)}, l.rej.Plain
	}
	if d.wait > 0 {
		l.publishWaited(d.now, d.wait)
	}
	if d.c == nil { // the backend let the call pass unlimited: nothing to give back
		return Reservation{ok: true}, nil
	}
	return Reservation{l: l, c: d.c, prev: d.prev, next: d.next, at: d.at,
		delay: time.Duration(d.wait), ok: true, remote: d.remote}, nil
}

// AvailablePermits returns how many calls for key would pass right now without waiting,
// from 0 to Permits; Permits for a key without a cell, even when the limiter is full and
// would refuse it. With a backend it asks the key's store. A disabled limiter reports
// Permits.
func (k *Keyed[K]) AvailablePermits(key K) int {
	l := k.base
	if !l.enabled {
		return l.cfg.Permits
	}
	s := k.shard(key)
	s.mu.RLock()
	c := s.cells[key]
	var tat int64
	if c != nil {
		tat = c.tat.Load()
	}
	now := l.now()
	s.mu.RUnlock()
	if k.backend != nil {
		var rc *remoteCell
		if c != nil {
			rc = c.remote
		} else {
			rc = k.bind(key)
		}
		if rc != nil {
			if n, ok := rc.store.Available(context.Background()); ok {
				return n
			}
		}
	}
	return gcraAvailable(tat, l.interval, l.tau, now, l.cfg.Permits)
}

// Len returns how many keys have a cell now, idle ones included until they are evicted.
func (k *Keyed[K]) Len() int {
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.RLock()
		n += len(s.cells)
		s.mu.RUnlock()
	}
	return n
}

// Sweep evicts every idle cell now and returns how many it evicted. Cells are evicted
// lazily as new keys come, so Sweep is never needed for correctness or for the bound on
// memory; it gives back the memory of idle keys sooner, e.g. from a periodic timer.
func (k *Keyed[K]) Sweep() int {
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		n += k.sweep(s, k.base.now())
		s.mu.Unlock()
	}
	return n
}
