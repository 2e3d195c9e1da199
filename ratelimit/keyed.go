package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// DefaultMaxKeys is how many keys a Keyed limiter holds at most when MaxKeys is not set.
const DefaultMaxKeys = 100_000

const (
	maxShards   = 64   // the most shards of a Keyed limiter (a power of two)
	minPerShard = 256  // fewer shards for a small MaxKeys, so that keys spread evenly
	minSweep    = 64   // a shard sweeps after adding at least this many cells
	minRebuild  = 1024 // a shard that held at least this many cells may shrink its map
)

// MaxKeys bounds how many keys a Keyed limiter holds at once [DefaultMaxKeys]; see Keyed
// for what happens at the bound. It bounds the limiter's memory: with IPv4 addresses as
// string keys, about 67 bytes per key held, and under 100 bytes per key of MaxKeys
// while keys come and go (maps keep room for the keys they once held); longer keys add
// their own bytes beyond 16. A negative n fails NewKeyed with R4C-ATR-007. A Limiter
// ignores it.
func MaxKeys(n int) Option { return func(s *Settings) { s.MaxKeys = n } }

// Keyed is a rate limiter per key: one GCRA cell (SPEC RL-1) for each client id, IP
// address or API key, each with the semantics of a Limiter built with the same options —
// Permits per Period with a burst of Permits (RL-2…RL-5), refusals that say when to come
// back (RL-6, RL-9b), reservations within MaxWait that can be cancelled (RL-7, RL-9).
// Keys do not share permits: one key spending its quota leaves the others untouched.
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
// key (SPEC RL-15's exception). A call then asks the key's Store, outside the shard's
// lock; a store that answers Local falls back on the key's in-process cell. Cells are
// kept for one Period after their last use, so that a busy key binds its store once.
// Backend ids share one namespace: a Limiter named "api:10.0.0.1" shares the quota of key
// "10.0.0.1" of a Keyed limiter "api", and keys whose fmt.Sprint is the same (the int 1
// and the string "1" of a Keyed[any]) share one backend entry; choose names accordingly.
//
// A key that would make a full shard hold more than its share of MaxKeys is refused until
// one of the shard's cells is idle; the shard learns that from the TAT of the cells it
// holds, so a cell made idle early by a cancelled reservation is found at the shard's next
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

// keyedShard is one part of a Keyed limiter's keys, under its own lock.
type keyedShard[K comparable] struct {
	mu      sync.RWMutex
	cells   map[K]*cell
	added   int   // cells added since the last sweep
	sweepAt int   // sweep once added reaches it
	idleAt  int64 // no cell can be evicted before this clock time
	peak    int   // the most cells held since the map was made
	_       [64]byte
}

// cell is one key's state.
type cell struct {
	tat    atomic.Int64 // the key's TAT (SPEC RL-1); with a backend, its in-process fallback
	remote *remoteCell  // the key's state in the Backend; nil in-process
}

// remoteCell is a key's binding to a Backend.
type remoteCell struct {
	store Store
	until atomic.Int64 // the cell is kept until this clock time: one Period after its last use
}

// evictableAt returns the clock time from which c may be evicted.
func (c *cell) evictableAt() int64 {
	t := c.tat.Load()
	if c.remote != nil {
		t = max(t, c.remote.until.Load())
	}
	return t
}

// cancel gives back the permit of r, reserved on c; see Reservation.Cancel (SPEC RL-9).
// A cell is never evicted while one of its reservations can still be cancelled: its TAT
// stands after the reservation's instant. Cancelling on a cell evicted since does nothing.
func (c *cell) cancel(r Reservation) {
	if r.remote {
		c.remote.store.Cancel(context.Background(), Token{Prev: r.prev, Next: r.next, At: r.at})
		return
	}
	if r.l.now() > r.at {
		return
	}
	c.tat.CompareAndSwap(r.next, r.prev)
}

// NewKeyed builds a keyed limiter from opts: the options of New (Permits and Period are
// required) plus MaxKeys. Its errors are New's — *policy.ConfigError with R4C-ATR-003,
// R4C-ATR-002, R4C-REG-001 or R4C-ATR-004 (SPEC RL-14) — and R4C-ATR-007 for a negative
// MaxKeys. Its instance id is WithInstanceID's, else Name's, else "ratelimiter".
func NewKeyed[K comparable](opts ...Option) (*Keyed[K], error) {
	s := DefaultSettings()
	s.Apply(opts...)
	return NewKeyedFromSettings[K](s)
}

// NewKeyedFromSettings builds a keyed limiter from resolved settings; see NewKeyed.
func NewKeyedFromSettings[K comparable](s Settings) (*Keyed[K], error) {
	if s.MaxKeys < 0 {
		return nil, policy.Errorf(policy.CodeOutOfRange, Segment+".maxKeys", strconv.Itoa(s.MaxKeys),
			"maxKeys must not be negative (0 means the default, %d)", DefaultMaxKeys)
	}
	backend := s.Backend
	s.Backend = nil // each key binds its own store
	base, err := NewFromSettings(s)
	if err != nil {
		return nil, err
	}
	n := s.MaxKeys
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

// InstanceID returns the limiter's id (SPEC RG-1).
func (k *Keyed[K]) InstanceID() string { return k.base.id }

// Config returns the configuration every key's cell follows.
func (k *Keyed[K]) Config() Config { return k.base.cfg }

// MaxKeys returns the bound on the number of keys held at once.
func (k *Keyed[K]) MaxKeys() int { return k.maxKeys }

// Clock returns the limiter's time source.
func (k *Keyed[K]) Clock() clock.Clock { return k.base.clk }

// Backend returns the limiter's backend, or nil for an in-process limiter.
func (k *Keyed[K]) Backend() Backend { return k.backend }

// Rejection returns the limiter's one rejection error, shared by every key (SPEC RL-6).
func (k *Keyed[K]) Rejection() error { return k.base.rej.Plain }

// TryAcquire takes a permit for key that is free now and reports whether it did, whatever
// MaxWait is (SPEC RL-6). A refusal publishes a RateLimiterRejected event. For a key
// that has a cell it never allocates. A disabled limiter always returns true (RL-10).
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
// the permit back (SPEC RL-7, RL-9). When the permit does not come within MaxWait, or the
// key is new and the limiter is full, nothing is reserved and Reserve returns the
// limiter's rejection (matching ErrExceeded) with a refused Reservation whose Delay() is
// the retry-after (RL-9b). Events and allocations are TryAcquire's. A disabled limiter
// returns a reservation with no delay (RL-10).
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

// Decision is the outcome of Keyed.Decide: whether a permit was taken, and the state of
// the key's quota that HTTP rate-limit headers report.
type Decision struct {
	// Admitted reports whether a permit was taken.
	Admitted bool
	// Remaining is how many more calls would pass now without waiting, 0..Permits.
	Remaining int
	// RetryAfter is, for a refused call, how long until the key's next permit is free
	// (SPEC RL-9b); 0 for an admitted call.
	RetryAfter time.Duration
	// Reset is how long until the key's full burst is free again: its TAT minus now, ≥ 0.
	Reset time.Duration
}

// Decide is TryAcquire that also reports the key's quota after the call: what a server
// sends in its Retry-After and rate-limit headers. Events and allocations are
// TryAcquire's. A disabled limiter admits every call, with Remaining = Permits (RL-10).
func (k *Keyed[K]) Decide(key K) Decision {
	l := k.base
	if !l.enabled {
		return Decision{Admitted: true, Remaining: l.cfg.Permits}
	}
	var d decision
	if k.backend != nil {
		d = k.takeRemote(key, 0)
	} else {
		d = k.take(key, 0)
	}
	out := Decision{Admitted: d.ok, Reset: time.Duration(max(d.ahead, 0))}
	if d.ok {
		out.Remaining = gcraAvailable(d.ahead, l.interval, l.tau, 0, l.cfg.Permits)
	} else {
		out.RetryAfter = time.Duration(max(d.wait, 0))
		l.publishRejected(d.now, d.wait, l.rej.Plain)
	}
	return out
}

// AvailablePermits returns how many calls for key would pass right now without waiting,
// from 0 to Permits (SPEC RL-11); Permits for a key without a cell, even when the limiter
// is full and would refuse it. With a backend it asks the key's store. A disabled limiter
// reports Permits.
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

// decision is one GCRA decision on a key.
type decision struct {
	now        int64 // the limiter's clock time of the decision
	prev, next int64 // the key's TAT before and after (the store's Token, when remote)
	at         int64 // when the permit is free (in the store's time base, when remote)
	wait       int64 // reserved: until the permit is free (≥ 0); refused: the retry-after
	ahead      int64 // the key's TAT after the decision minus now
	c          *cell // the key's cell; nil when the key was refused a cell, or passed unlimited
	ok         bool
	remote     bool // decided by the key's store
}

func (k *Keyed[K]) shard(key K) *keyedShard[K] {
	if k.mask == 0 {
		return &k.shards[0]
	}
	return &k.shards[maphash.Comparable(k.seed, key)&k.mask]
}

// take runs GCRA (SPEC RL-1…RL-7) on key's cell, made if needed, reserving a permit that
// comes within maxWait. It holds the shard's lock throughout and reads the clock under
// it, so that no cell is evicted while a decision is made on it, and a cell made after an
// eviction sees a clock at least as late as the eviction did: it is exactly the cell it
// replaces.
func (k *Keyed[K]) take(key K, maxWait int64) decision {
	s := k.shard(key)
	s.mu.RLock()
	if c := s.cells[key]; c != nil {
		d := k.gcra(c, k.base.now(), maxWait)
		s.mu.RUnlock()
		return d
	}
	s.mu.RUnlock()
	return k.takeNew(s, key, maxWait)
}

// takeNew is take for a key that had no cell at the first look.
func (k *Keyed[K]) takeNew(s *keyedShard[K], key K, maxWait int64) decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := k.base.now()
	c, wait := k.cellLocked(s, key, now)
	if c == nil {
		return decision{now: now, wait: wait, ahead: wait}
	}
	d := k.gcra(c, now, maxWait)
	s.idleAt = min(s.idleAt, c.evictableAt())
	return d
}

// gcra decides on c at now.
func (k *Keyed[K]) gcra(c *cell, now, maxWait int64) (d decision) {
	l := k.base
	d.now, d.c = now, c
	d.prev, d.next, d.wait, d.ok = gcraReserve(&c.tat, l.interval, l.tau, now, maxWait)
	if d.ok {
		d.at, d.ahead = now+d.wait, d.next-now
	} else {
		d.ahead = d.prev - now
	}
	return d
}

// cellLocked returns key's cell in s, made if there is room; otherwise nil and how long
// until the shard's first cell can be evicted. Called with s.mu held for writing.
func (k *Keyed[K]) cellLocked(s *keyedShard[K], key K, now int64) (*cell, int64) {
	if c := s.cells[key]; c != nil {
		return c, 0
	}
	full := len(s.cells) >= k.perShard
	if (full || s.added >= s.sweepAt) && now >= s.idleAt {
		k.sweep(s, now)
		full = len(s.cells) >= k.perShard
	}
	if full {
		return nil, max(s.idleAt-now, 1)
	}
	c := &cell{}
	if k.backend != nil {
		c.remote = k.bind(key)
	}
	if s.cells == nil {
		s.cells = make(map[K]*cell)
	}
	s.cells[ownKey(key)] = c
	s.added++
	s.peak = max(s.peak, len(s.cells))
	return c, 0
}

// sweep evicts the idle cells of s at now and returns how many it evicted. Called with
// s.mu held for writing.
func (k *Keyed[K]) sweep(s *keyedShard[K], now int64) int {
	before, kept := len(s.cells), 0
	idleAt := int64(maxInt64)
	for key, c := range s.cells {
		at := c.evictableAt()
		if at <= now || key != key {
			delete(s.cells, key)
			continue
		}
		kept++
		idleAt = min(idleAt, at)
	}
	// Rebuild the map when it holds entries that delete cannot reach (keys unequal to
	// themselves), or when it has fallen to a quarter of its peak: Go maps do not shrink.
	if len(s.cells) != kept || s.peak >= minRebuild && kept <= s.peak/4 {
		m := make(map[K]*cell, kept)
		for key, c := range s.cells {
			if key == key {
				m[key] = c
			}
		}
		s.cells, s.peak = m, kept
	}
	s.added, s.sweepAt, s.idleAt = 0, max(kept, minSweep), idleAt
	return before - kept
}

// ownKey returns key to be kept in a map: a string key is copied, so that it does not
// keep alive the larger string it may have been cut from.
func ownKey[K comparable](key K) K {
	if s, ok := any(key).(string); ok {
		return any(strings.Clone(s)).(K)
	}
	return key
}

// The backend paths.

// takeRemote is take for a limiter with a backend: key's store decides, outside the
// shard's lock; a store that answers Local, or a key whose binding failed, falls back on
// the key's in-process cell.
func (k *Keyed[K]) takeRemote(key K, maxWait int64) decision {
	c, now, wait := k.remoteCellOf(key)
	if c == nil {
		return decision{now: now, wait: wait, ahead: wait}
	}
	if c.remote != nil {
		g, _ := c.remote.store.Reserve(context.Background(), time.Duration(maxWait)) // Background never ends: no error
		switch g.Outcome {
		case Reserved:
			t := g.Token
			return decision{now: now, prev: t.Prev, next: t.Next, at: t.At, wait: int64(g.Wait),
				ahead: t.Next - (t.At - int64(g.Wait)), c: c, ok: true, remote: true}
		case Unlimited:
			return decision{now: now, ok: true}
		case Refused:
			w := int64(g.Wait)
			return decision{now: now, wait: w, ahead: w + k.base.tau, remote: true}
		}
	}
	return k.take(key, maxWait)
}

// remoteCellOf returns key's cell, made and bound if needed, and marks it used at now; or
// nil and the retry-after when key has no cell and its shard is full.
func (k *Keyed[K]) remoteCellOf(key K) (c *cell, now, wait int64) {
	s := k.shard(key)
	s.mu.RLock()
	if c = s.cells[key]; c != nil {
		now = k.base.now()
		k.touch(c, now)
		s.mu.RUnlock()
		return c, now, 0
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	now = k.base.now()
	if c, wait = k.cellLocked(s, key, now); c == nil {
		return nil, now, wait
	}
	k.touch(c, now)
	s.idleAt = min(s.idleAt, c.evictableAt())
	return c, now, 0
}

// touch keeps a bound cell for one Period after now.
func (k *Keyed[K]) touch(c *cell, now int64) {
	if c.remote != nil {
		c.remote.until.Store(satAdd(now, int64(k.base.cfg.Period)))
	}
}

// bind binds key to the backend; nil, after a RateLimiterBackendFailed event, when the
// backend refuses (the key then keeps its state in-process).
func (k *Keyed[K]) bind(key K) *remoteCell {
	l := k.base
	st, err := k.backend.Bind(Binding{ID: l.id + ":" + keyString(key), Config: l.cfg, Clock: l.clk, Listener: l.listener})
	if err != nil {
		if l.listener != nil {
			l.listener(policy.Event{Kind: policy.RateLimiterBackendFailed, Instance: l.id,
				At: time.Duration(l.now()), Err: err})
		}
		return nil
	}
	return &remoteCell{store: st}
}

// keyString is key's part of its backend binding's id.
func keyString[K comparable](key K) string {
	if s, ok := any(key).(string); ok {
		return s
	}
	return fmt.Sprint(key)
}
