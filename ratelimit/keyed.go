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
// Cells are made when a key is first seen and evicted when idle. A cell is idle when its
// TAT is at or before now: every permit its key took is back — at the latest one Period
// after its last call, sooner when it took fewer than Permits. An idle cell would admit a
// full burst, exactly as a new cell does: it holds no memory of the past, so evicting it
// changes nothing.
// Eviction is lazy, with no goroutine: a shard evicts its idle cells when it is full, and
// once it has added as many cells as it held at its previous sweep (so sweeping costs
// O(1) per new key, amortised). Sweep evicts every idle cell at once.
//
// Memory is bounded by MaxKeys. Keys are spread by hash (hash/maphash) over up to 64
// shards, each holding at most MaxKeys/shards of them, so Len never exceeds MaxKeys. When
// a new key finds its shard full, the shard first evicts its idle cells; if none is idle,
// the new key is refused with the limiter's rejection (TryAcquire reports false,
// Reserve returns ErrExceeded) whose retry-after is the instant the shard's first cell
// becomes idle. Refusing new keys never admits more than the configured rate for any
// key; it may refuse a key that has not spent its quota, which is the price of a bound
// on memory under a flood of distinct keys (a spoofing attack). Keys already held are
// not affected by the flood. A new key may be refused a little before Len reaches
// MaxKeys, when its own shard is full.
//
// A call for a key that has a cell takes its shard's read lock, does one map lookup and
// one compare-and-swap, and allocates nothing. A new key allocates its cell; a string
// key is copied, so that a key cut from a larger string (a header) does not keep it
// alive. Keys must be equal to themselves: a floating-point NaN key is a new key at
// every call. Go maps do not shrink, so a shard whose cells fall to a quarter of its peak
// rebuilds its map when it sweeps.
//
// With a Backend (WithBackend), each key's state lives in the backend, bound with the
// instance id "<id>:<key>" (a key other than a string is formatted with fmt.Sprint): every
// process that uses the same limiter id shares each key's quota, one backend entry per
// key. A call then asks the key's Store, outside the shard's lock; a store that answers
// Local falls back on the key's in-process cell. Cells are kept for one Period after
// their last use, so that a busy key binds its store once.
// Backend ids share one namespace: a Limiter named "api:10.0.0.1" shares the quota of key
// "10.0.0.1" of a Keyed limiter "api", and keys whose fmt.Sprint is the same (the int 1
// and the string "1" of a Keyed[any]) share one backend entry; choose names accordingly.
//
// A key that would make a full shard hold more than its share of MaxKeys is refused until
// one of the shard's cells is idle; the shard learns that from the TAT of the cells it
// holds, so a cell made idle early by a canceled reservation is found at the shard's next
// sweep, not at once: until then the refusal errs on the safe side.
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
func (k *Keyed[K]) InstanceID() string { return k.base.id }

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
