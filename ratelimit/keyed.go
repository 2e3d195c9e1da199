package ratelimit

import (
	"context"
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
)

// DefaultMaxKeys is how many keys a Keyed limiter holds at most when MaxKeys is not set.
const DefaultMaxKeys = 100_000

// DefaultMaxKeyBytes is the length, in bytes, of the longest string key that a Keyed
// limiter keeps as it is when MaxKeyBytes is not set.
const DefaultMaxKeyBytes = 256

// MaxKeys bounds how many keys a Keyed limiter holds at once, over all its keys: up to n
// keys are all held, however their hashes fall, and never more than n at any instant.
// Default 100,000 (DefaultMaxKeys). See Keyed for what happens at the bound. It bounds
// the limiter's memory: with keys of up to 16 bytes as strings, about 72 bytes per key
// held at the bound, whatever n (from 50,000 to 1,000,000 keys: each shard holds about 768
// keys at the bound, so that its index of 1,024 slots stays about three quarters full);
// longer keys add their own bytes, up to MaxKeyBytes. 0 means the default; a negative n
// fails NewKeyed with R4C-ATR-007. A Limiter ignores it.
func MaxKeys(n int) Option { return func(s *settings) { s.maxKeys = n } }

// MaxKeyBytes bounds the length of the string keys a Keyed limiter keeps, and so the
// memory of each key: a key longer than n bytes is kept as its digest, "~sha256:"
// followed by the 64 hex digits of its SHA-256 (72 bytes), and events and a Backend
// name it by that digest. Keys that differ have different digests (finding two that
// collide would be finding a collision of SHA-256), so they keep separate quotas. A key
// that itself starts with "~sha256:" is replaced by its digest too, so that no key can
// pass for another's digest. It applies to keys of a string type, and to strings (of any
// string type) held by a key of an interface type; keys of other types are kept as they are. Default 256
// (DefaultMaxKeyBytes); 0 means the default. A negative n fails NewKeyed with
// R4C-ATR-007. A Limiter ignores it.
func MaxKeyBytes(n int) Option { return func(s *settings) { s.maxKeyBytes = n } }

// Keyed is a rate limiter per key: one GCRA cell for each client id, IP address or API
// key, each with the semantics of a Limiter built with the same options — Permits per
// Period with a burst of Permits, refusals that say when to come back, reservations
// within MaxWait that can be canceled. Keys do not share permits: one key spending its
// quota leaves the others untouched.
//
// Cells are made when a key is first seen and kept while there is room: an idle cell
// (every permit back) admits a full burst, as a new one does, so a client that comes back
// finds its cell, and its call allocates nothing. Memory is bounded by MaxKeys, one bound
// over all keys, and each string key by MaxKeyBytes. A new key never waits for room and
// is never refused for the lack of it: at the bound it takes the place of an idle cell,
// or else of the cell that becomes idle first, among a few sampled, so a flood of new
// keys locks out neither the keys held nor other new ones. Nothing runs on a schedule:
// Sweep evicts the idle cells when asked. A call for a key that has a cell allocates
// nothing. The package documentation, under "Per-key limits", says how eviction, the key
// bounds and a Backend work in detail.
//
// Events carry the key in Event.Key: a string key as the limiter keeps it (its digest,
// for a key longer than MaxKeyBytes), any other key formatted with fmt.Sprint. Outcomes
// (see Observe) are a Limiter's, with the key, named the same way, in Outcome.Key.
//
// A Keyed limiter is safe for concurrent use; Reconfigure changes its configuration while
// it runs.
// A zero Keyed, or a nil *Keyed, is never built: it refuses every call, with a rejection
// matching ErrExceeded, and holds no key.
type Keyed[K comparable] struct {
	// base holds what every key shares: the configuration, the clock, the instance id,
	// the preallocated rejections and the listener. Its own TAT is unused.
	base     *Limiter
	backend  Backend
	share    int // the backend's LocalShare (see LocalSharer)
	maxKeys  int
	keyBytes int     // string keys longer than this are kept as their digest
	keys     keyType // how K holds a string
	nshards  uint64  // len(shards); a key's shard is (the top 32 bits of its hash × nshards) >> 32
	seed     maphash.Seed
	seed64   uint64 // the seed of strShardHash
	shards   []keyedShard[K]

	_ [64]byte // the counts below, written as keys come and go, share no cache line with the fields above
	// count is the number of places held, over all shards: every cell, and each new cell
	// from before it is added until it is. It never exceeds maxKeys.
	count  atomic.Int64
	cursor atomic.Uint64 // the shard a new key that finds its own empty starts evicting from
	_      [48]byte
}

// NewKeyed builds a keyed limiter from opts: the options of New (Permits and Period are
// required) plus MaxKeys and MaxKeyBytes. An invalid configuration returns a
// *policy.ConfigError: R4C-ATR-003 (permits < 1), R4C-ATR-002 (period ≤ 0), R4C-REG-001
// (period shorter than 1ns per permit), R4C-ATR-004 (maxWait < 0), R4C-ATR-007 (maxKeys
// or maxKeyBytes < 0). Its instance id is WithInstanceID's, else Name's, else
// "ratelimiter".
func NewKeyed[K comparable](opts ...Option) (*Keyed[K], error) {
	return kind.New(defaults, buildKeyed[K], opts)
}

func buildKeyed[K comparable](s settings) (*Keyed[K], error) {
	if s.maxKeys < 0 {
		return nil, policy.Errorf(policy.CodeOutOfRange, "rateLimiter.maxKeys", strconv.Itoa(s.maxKeys),
			"maxKeys must not be negative (0 means the default, %d)", DefaultMaxKeys)
	}
	if s.maxKeyBytes < 0 {
		return nil, policy.Errorf(policy.CodeOutOfRange, "rateLimiter.maxKeyBytes", strconv.Itoa(s.maxKeyBytes),
			"maxKeyBytes must not be negative (0 means the default, %d)", DefaultMaxKeyBytes)
	}
	backend := s.backend
	s.backend = nil // each key binds its own store
	base, err := build(s)
	if err != nil {
		return nil, err
	}
	base.perKey = true
	n := s.maxKeys
	if n == 0 {
		n = DefaultMaxKeys
	}
	keyBytes := s.maxKeyBytes
	if keyBytes == 0 {
		keyBytes = DefaultMaxKeyBytes
	}
	shards := shardsFor(n)
	return &Keyed[K]{
		base:     base,
		backend:  backend,
		share:    localShare(backend),
		maxKeys:  n,
		keyBytes: keyBytes,
		keys:     keyTypeOf[K](),
		nshards:  uint64(shards),
		seed:     maphash.MakeSeed(),
		seed64:   rand.Uint64(),
		shards:   make([]keyedShard[K], shards),
	}, nil
}

// lim returns the limiter that holds what every key shares; for a zero Keyed, never
// built with NewKeyed, a zero Limiter, which admits nothing.
func (k *Keyed[K]) lim() *Limiter {
	if k == nil || k.base == nil {
		return &zeroLimiter
	}
	return k.base
}

// zeroLimiter is the shared part of every zero Keyed.
var zeroLimiter Limiter

// InstanceID returns the limiter's instance id, which its events and rejections carry.
func (k *Keyed[K]) InstanceID() string { return k.lim().events.ID }

// Config returns the configuration every key's cell follows.
func (k *Keyed[K]) Config() Config { return k.lim().cur().cfg }

// Reconfigure changes the configuration of every key (Permits, Period, MaxWait and
// Disabled) from the next call, as Limiter.Reconfigure does: c is validated as NewKeyed
// validates it, an invalid c returns its *policy.ConfigError and changes nothing, and a
// change publishes a ConfigChanged event. One difference: each key keeps its TAT as it is
// (the keys are not visited), so the bound of every window across the change holds for
// each key, but a key may find up to the new Permits free at once. A zero Keyed cannot be
// reconfigured (R4C-REG-010). Safe for concurrent use.
func (k *Keyed[K]) Reconfigure(c Config) error { return k.lim().reconfigure(c, false) }

// MaxKeys returns the bound on the number of keys held at once.
func (k *Keyed[K]) MaxKeys() int {
	if k == nil {
		return 0
	}
	return k.maxKeys
}

// MaxKeyBytes returns the length, in bytes, of the longest string key kept as it is.
func (k *Keyed[K]) MaxKeyBytes() int {
	if k == nil {
		return 0
	}
	return k.keyBytes
}

// Clock returns the limiter's time source; nil for a zero Keyed.
func (k *Keyed[K]) Clock() clock.Clock { return k.lim().clk }

// Backend returns the limiter's backend, or nil for an in-process limiter.
func (k *Keyed[K]) Backend() Backend {
	if k == nil {
		return nil
	}
	return k.backend
}

// Rejection returns the limiter's one rejection error, shared by every key: it matches
// ErrExceeded and is made once, when the limiter is built.
func (k *Keyed[K]) Rejection() error { return k.lim().Rejection() }

// TryAcquire takes a permit for key that is free now and reports whether it did; it never
// waits, whatever MaxWait is. A refusal publishes an EventRejected event. Its outcome
// is recorded with context.Background() and the key: ResultAdmitted (Wait 0) or
// ResultRejected. For a key that has a cell it never allocates. A disabled limiter always
// returns true; a zero Keyed, never built, false.
func (k *Keyed[K]) TryAcquire(key K) bool {
	// An enabled in-process limiter and a string key kept as it is: the lookup and GCRA,
	// written out here (generic methods are not inlined into one another). A zero Keyed
	// has no key type (otherKeys) and takes the general path. A cell found dead (evicted
	// meanwhile) takes the general path too.
	if k != nil && k.keys == stringKeys && k.backend == nil {
		if r := k.base.rate.Load(); r != nil && r.direct {
			if ks := asString(&key); len(ks) <= k.keyBytes && !strings.HasPrefix(ks, digestPrefix) {
				h := k.strHash(ks)
				s := &k.shards[0]
				if k.nshards > 1 {
					s = &k.shards[shardIndex(h, k.nshards)]
				}
				if t := s.index.Load(); t != nil {
					i := h & t.mask
					for dist := uint64(0); ; dist++ {
						sl := &t.slots[i]
						e := sl.e.Load()
						if e == nil {
							break
						}
						sh := sl.hash.Load()
						if sh != h || asString(&e.key) != ks {
							if (i-sh)&t.mask < dist {
								break
							}
							i = (i + 1) & t.mask
							continue
						}
						now := k.base.now()
						var prev, wait int64
						var ok bool
						if e.slots.none() {
							prev, _, wait, ok = gcraReserve(&e.slots.tat, r.interval, r.tau, now, 0)
						} else {
							prev, _, wait, ok = e.slots.takeFreed(now, r.interval, r.tau, 0)
						}
						if ok || prev != deadTAT {
							return k.tried(key, now, wait, ok) == nil
						}
						break
					}
				}
				// A new key, one being moved by a writer, or a dead cell: under the lock.
				d := k.takeLocked(s, key, h, r, 1, 0)
				return k.tried(key, d.now, d.wait, d.ok) == nil
			}
		}
	}
	return k.tryAcquire(key, k.lim().cur(), 1) == nil
}

// tried reports a TryAcquire for key decided at now: nil when admitted, else the
// rejection, whose retry-after is wait.
func (k *Keyed[K]) tried(key K, now, wait int64, ok bool) error {
	ctx := context.Background()
	if !ok {
		k.reject(ctx, key, now, wait, k.base.rej.Plain)
		return k.base.rej.Plain
	}
	k.admitted(ctx, key, 0)
	return nil
}

// TryAcquireN takes n permits for key that are free now, all of them or none, as
// Limiter.TryAcquireN does: nil when they are the caller's, the limiter's rejection
// (matching ErrExceeded) when they are not all free now, a *BurstError matching
// ErrExceedsBurst when n is more than Permits (nothing is taken), and a
// *policy.ConfigError with code R4C-ATR-003 when n < 1. Events, outcomes and allocations
// are TryAcquire's (a *BurstError is recorded as a ResultRejected; n < 1 is not
// recorded).
func (k *Keyed[K]) TryAcquireN(key K, n int) error {
	l := k.lim()
	r := l.cur()
	if err := r.check(n); err != nil {
		return k.refuseCount(context.Background(), key, err)
	}
	return k.tryAcquire(key, r, n)
}

func (k *Keyed[K]) tryAcquire(key K, r *rate, n int) error {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		return l.offErr()
	}
	ctx := context.Background()
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, 0)
	if !d.ok {
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return l.rej.Plain
	}
	k.admitted(ctx, key, 0)
	return nil
}

// Acquire takes a permit for key, waiting for it on the caller's goroutine through the
// clock when it comes within MaxWait, as Limiter.Acquire does. It returns nil once the
// permit is the caller's, or the limiter's rejection, which matches ErrExceeded:
//   - at once, without reserving, when no permit comes within MaxWait;
//   - at once, without reserving and without an event, when ctx is nil (the error also
//     matches policy.ErrNilContext) or already done (it also matches ctx's error);
//   - at once, without reserving, when ctx's deadline comes before the permit would (it
//     also matches context.DeadlineExceeded);
//   - when ctx ends during the wait: the permit is given back as Reservation.Cancel gives
//     it, and the error also matches ctx's error.
//
// With a Backend, the key's store decides, within ctx. A wait publishes a
// EventWaited event, a rejection an EventRejected event, with ctx. The
// outcome is recorded as Limiter.Acquire records it, with the key. For a key that has a
// cell it allocates nothing unless it has to wait. A disabled limiter returns nil at once,
// but for a nil or done ctx, whose error it returns as is; a zero Keyed, never built, a
// rejection matching ErrExceeded.
func (k *Keyed[K]) Acquire(ctx context.Context, key K) error {
	return k.acquire(ctx, key, k.lim().cur(), 1)
}

// AcquireN is Acquire for n permits for key, taken together, as Limiter.AcquireN: a call
// for more than Permits fails at once with a *BurstError matching ErrExceedsBurst, n < 1
// with a *policy.ConfigError, code R4C-ATR-003. Events and outcomes are Acquire's (a
// *BurstError is recorded as a ResultRejected; n < 1 is not recorded).
func (k *Keyed[K]) AcquireN(ctx context.Context, key K, n int) error {
	l := k.lim()
	r := l.cur()
	if err := r.check(n); err != nil {
		return k.refuseCount(ctx, key, err)
	}
	return k.acquire(ctx, key, r, n)
}

func (k *Keyed[K]) acquire(ctx context.Context, key K, r *rate, n int) error {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		if err := l.offErr(); err != nil {
			return err
		}
		return policy.ContextErr(ctx)
	}
	if err := policy.ContextErr(ctx); err != nil {
		rej := l.nilCtx
		if err != policy.ErrNilContext {
			rej = l.rej.ForContext(err)
		}
		if l.events.Rec != nil {
			var ks string
			if l.events.Keys {
				ks = k.keyString(k.bounded(key))
			}
			k.rejected(orBackground(ctx), ks, rej)
		}
		return rej
	}
	key = k.bounded(key)
	limit, byDeadline := waitLimit(ctx, r.maxWait)
	d, err := k.decideCtx(ctx, key, r, n, limit)
	switch {
	case err != nil:
		return k.rejectContext(ctx, key, l.now(), 0, err)
	case !d.ok && afterDeadline(d.wait, limit, byDeadline, r.maxWait):
		return k.rejectContext(ctx, key, d.now, d.wait, context.DeadlineExceeded)
	case !d.ok:
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return l.rej.Plain
	case d.wait == 0:
		k.admitted(ctx, key, 0)
		return nil
	}
	k.publishWaited(ctx, key, d.now, d.wait)
	if err := l.clk.Sleep(ctx, time.Duration(d.wait)); err != nil {
		k.reservation(d).Cancel()
		return k.rejectContext(ctx, key, l.now(), 0, err)
	}
	k.admitted(ctx, key, d.wait)
	return nil
}

// Reserve takes the next permit for key if it comes within MaxWait, without waiting for
// it, and returns its Reservation: wait Delay() before the call, or Cancel() it to give
// the permit back. When the permit does not come within MaxWait, nothing is reserved and
// Reserve returns the limiter's rejection (matching ErrExceeded) with a refused
// Reservation whose Delay() is the retry-after: how long until the key's next permit is
// free. Events and allocations are TryAcquire's. Its outcome is recorded as
// Limiter.Reserve records it, with the key. A disabled limiter returns a reservation with
// no delay; a zero Keyed, never built, a refused Reservation and a rejection matching
// ErrExceeded.
func (k *Keyed[K]) Reserve(key K) (Reservation, error) { return k.reserve(key, k.lim().cur(), 1) }

// ReserveN is Reserve for n permits for key, taken together, as Limiter.ReserveN: a call
// for more than Permits fails at once with a refused Reservation and a *BurstError
// matching ErrExceedsBurst, n < 1 with a *policy.ConfigError, code R4C-ATR-003. Events
// and outcomes are Reserve's (a *BurstError is recorded as a ResultRejected; n < 1 is not
// recorded).
func (k *Keyed[K]) ReserveN(key K, n int) (Reservation, error) {
	l := k.lim()
	r := l.cur()
	if err := r.check(n); err != nil {
		return Reservation{}, k.refuseCount(context.Background(), key, err)
	}
	return k.reserve(key, r, n)
}

func (k *Keyed[K]) reserve(key K, r *rate, n int) (Reservation, error) {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		if err := l.offErr(); err != nil {
			return Reservation{}, err
		}
		return Reservation{ok: true}, nil
	}
	ctx := context.Background()
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, r.maxWait)
	if !d.ok {
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return Reservation{delay: time.Duration(d.wait)}, l.rej.Plain
	}
	if d.wait > 0 {
		k.publishWaited(ctx, key, d.now, d.wait)
	}
	k.admitted(ctx, key, d.wait)
	return k.reservation(d), nil
}

// decide takes n permits for key (bounded) within maxWait at the rate r, for the call
// with ctx: from its store with a backend, else from its in-process cell. The store is
// asked with ctx without its cancellation (the decision is not bounded by ctx, only
// observed with it), so that its answer is never ctx's error.
func (k *Keyed[K]) decide(ctx context.Context, key K, r *rate, n int, maxWait int64) decision {
	if k.backend == nil {
		return k.take(key, r, n, maxWait)
	}
	d, _ := k.takeRemote(detached(ctx), key, r, n, maxWait) // a detached ctx never ends: no error
	return d
}

// detached returns ctx without its cancellation and deadline, keeping its values:
// context.Background() as it is, for the calls that have no context of their own.
func detached(ctx context.Context) context.Context {
	if ctx == context.Background() {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// decideCtx is decide within ctx: the error is ctx's, when it ended before the key's
// store decided.
func (k *Keyed[K]) decideCtx(ctx context.Context, key K, r *rate, n int, maxWait int64) (decision, error) {
	if k.backend == nil {
		return k.take(key, r, n, maxWait), nil
	}
	return k.takeRemote(ctx, key, r, n, maxWait)
}

// reservation returns the Reservation of d, a permit taken.
func (k *Keyed[K]) reservation(d decision) Reservation {
	if d.c == nil { // the backend let the call pass unlimited: nothing to give back
		return Reservation{ok: true}
	}
	r := Reservation{l: k.base, c: d.c, prev: d.prev, next: d.next, at: d.at,
		delay: time.Duration(d.wait), ok: true, remote: d.remote}
	if d.remote {
		r.c, r.rc = nil, k.remoteOf(d.c)
	}
	return r
}

// AvailablePermits returns how many calls for key would pass right now without waiting,
// from 0 to Permits; Permits for a key without a cell. With a backend it asks the key's
// store. A disabled limiter reports Permits; a zero Keyed, never built, 0.
func (k *Keyed[K]) AvailablePermits(key K) int { return k.availableAt(key, k.lim().cur()) }

// availableAt is AvailablePermits at the rate r.
func (k *Keyed[K]) availableAt(key K, r *rate) int {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		return r.cfg.Permits
	}
	key = k.bounded(key)
	h := k.hash(key)
	s := k.shardOf(h)
	e := s.lookup(key, h)
	if e == nil { // a lookup without the lock may miss a key that a writer is moving
		s.mu.Lock()
		e = s.lookup(key, h)
		s.mu.Unlock()
	}
	var c *cell
	if e != nil {
		c = &e.cell
	}
	now := l.now()
	n := r.cfg.Permits
	if c != nil {
		n = c.slots.available(now, r.interval, r.tau, r.cfg.Permits)
	}
	if k.backend != nil {
		var rc *remoteCell
		if c != nil {
			rc = k.remoteOf(c)
		} else {
			rc = k.bind(context.Background(), key)
		}
		if rc != nil {
			if n, ok := rc.store.Available(context.Background(), r.cfg); ok {
				return n
			}
			// The store answered Local: the key's in-process schedule, at the local share.
			if lr := r.localShare(k.share); lr != r && c != nil {
				n = c.slots.available(now, lr.interval, lr.tau, lr.cfg.Permits)
			} else if c == nil {
				n = lr.cfg.Permits
			}
		}
	}
	return n
}

// Len returns how many keys have a cell now, idle ones included, counting a new key from
// the moment it is given its place: at most MaxKeys, at every instant. An idle cell is
// kept until a new key needs its place at the bound, or Sweep evicts it.
func (k *Keyed[K]) Len() int {
	if k == nil {
		return 0
	}
	return int(k.count.Load())
}

// Sweep evicts every idle cell now and returns how many it evicted. An idle cell admits a
// full burst, as a new one does, so evicting it changes no decision; new keys at MaxKeys
// make room by evicting cells themselves, so Sweep is never needed for correctness or for
// the bound on memory. It gives back the memory of idle keys sooner, e.g. from a periodic
// timer (a shard whose index falls to a sixteenth of its slots is rebuilt smaller); a
// client seen again after a sweep allocates its cell and its key anew.
func (k *Keyed[K]) Sweep() int {
	if k == nil || k.base == nil {
		return 0
	}
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		gone := k.sweep(s, k.base.now())
		k.count.Add(int64(-gone))
		s.mu.Unlock()
		n += gone
	}
	return n
}

// reject publishes the refusal, with err, of the call with ctx for key (bounded) at now,
// whose retry-after is retryAfter (≤ 0: none known), and records it. Without a listener
// or a recorder it does nothing; with a listener, or a recorder that wants keys
// (policy.KeyFilter), a key that is not a string is formatted, which allocates.
func (k *Keyed[K]) reject(ctx context.Context, key K, now, retryAfter int64, err error) {
	l := k.base
	if !l.events.Observed() {
		return
	}
	var ks string
	if l.events.Listener != nil || l.events.Keys {
		ks = k.keyString(key)
	}
	if l.events.Wants(ctx, EventRejected) {
		l.events.PublishCtx(ctx, policy.Event{Kind: EventRejected, At: time.Duration(now),
			RetryAfter: time.Duration(max(retryAfter, 0)), Err: err, Key: ks})
	}
	k.rejected(ctx, ks, err)
}

// publishWaited publishes the wait of the call with ctx for key (bounded) at now.
func (k *Keyed[K]) publishWaited(ctx context.Context, key K, now, wait int64) {
	if l := k.base; l.events.Observed() {
		l.events.PublishCtx(ctx, policy.Event{Kind: EventWaited, At: time.Duration(now),
			Wait: time.Duration(wait), Key: k.keyString(key)})
	}
}

// admitted records, if outcomes are recorded, that the call with ctx for key (bounded)
// was let through after waiting wait nanoseconds (0: it did not wait).
func (k *Keyed[K]) admitted(ctx context.Context, key K, wait int64) {
	if k.base.events.Rec != nil {
		k.recordAdmitted(ctx, key, wait)
	}
}

// recordAdmitted is admitted's recording, kept out of line so that the check inlines.
func (k *Keyed[K]) recordAdmitted(ctx context.Context, key K, wait int64) {
	var ks string
	if k.base.events.Keys {
		ks = k.keyString(key)
	}
	k.base.events.Rec.Record(ctx, policy.Outcome{Result: policy.ResultAdmitted, Key: ks, Wait: time.Duration(wait)})
}

// rejected records, if outcomes are recorded, the refusal err of the call with ctx (not
// nil) for the key named ks.
func (k *Keyed[K]) rejected(ctx context.Context, ks string, err error) {
	if l := k.base; l.events.Rec != nil {
		l.events.Rec.Record(ctx, policy.Outcome{Result: policy.ResultRejected, Key: ks, Err: err})
	}
}

// refuseCount publishes and records the refusal of the call with ctx for key (not yet
// bounded) for a number of permits that can never be granted (err is rate.check's), and
// returns err, as Limiter.refuseCount does, with the key.
func (k *Keyed[K]) refuseCount(ctx context.Context, key K, err error) error {
	l := k.lim()
	if err != errBadCount && l.events.Observed() {
		k.reject(orBackground(ctx), k.bounded(key), l.now(), 0, err)
	}
	return err
}

// rejectContext publishes, records and returns the rejection of the call with ctx for key
// that its context ended after it arrived (see Limiter.rejectContext).
func (k *Keyed[K]) rejectContext(ctx context.Context, key K, now, wait int64, ctxErr error) error {
	err := k.base.rej.ForContext(ctxErr)
	k.reject(ctx, key, now, wait, err)
	return err
}
