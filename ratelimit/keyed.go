package ratelimit

import (
	"hash/maphash"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
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
// A key must be equal to itself. A NaN is not (a float64 or float32 NaN, a complex with a
// NaN part, or a struct, array or interface value holding one), so no call could find its
// cell again: each would get a new cell with a full burst and take a MaxKeys place.
// Every call refuses such a key, as it refuses a key of an interface type holding a value
// that cannot be compared (a slice, a map, a function), with a *policy.ConfigError whose
// code is CodeBadKey (R4C-RLM-001): it does not match ErrExceeded, takes nothing and
// holds no place; it is published and recorded as a rejection, the key named with
// fmt.Sprint. TryAcquire returns false for it, Decide a refusal with no RetryAfter, and
// AvailablePermits 0. The check is chosen once, from K: a key type that can hold neither
// a float nor an interface (strings, integers, pointers, and structs and arrays of them)
// is not checked at all, and no check allocates.
//
// A Keyed limiter is safe for concurrent use; Reconfigure changes its configuration while
// it runs.
// A zero Keyed, or a nil *Keyed, is never built: it refuses every call, with a rejection
// matching ErrExceeded, and holds no key.
type Keyed[K comparable] struct {
	// base holds what every key shares: the configuration, the clock, the instance id,
	// the preallocated rejections and the listener. Its own TAT is unused.
	base     *Limiter
	backend  backend.Backend
	share    int // the backend's LocalShare (see LocalSharer)
	maxKeys  int
	keyBytes int      // string keys longer than this are kept as their digest
	keys     keyType  // how K holds a string
	check    keyCheck // how a key is checked to be equal to itself (see usable)
	nshards  uint64   // len(shards); a key's shard is (the top 32 bits of its hash × nshards) >> 32
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
	b := s.backend
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
	k := &Keyed[K]{
		base:     base,
		backend:  b,
		share:    1,
		maxKeys:  n,
		keyBytes: keyBytes,
		keys:     keyTypeOf[K](),
		check:    keyCheckOf(reflect.TypeFor[K]()),
		nshards:  uint64(shards),
		seed:     maphash.MakeSeed(),
		seed64:   rand.Uint64(),
		shards:   make([]keyedShard[K], shards),
	}
	if b != nil {
		k.share = localShare(b)
	}
	return k, nil
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
// change publishes a ConfigChanged event. A change of Permits or Period converts every
// key's schedule as Limiter.Reconfigure converts its own, before it returns (one shard's
// keys at a time, each under its shard's lock, which holds back new keys of that shard
// meanwhile; calls for keys held go on): what each key owes counts at the new rate, and a
// key that was refused for an hour under a raised quota gets its next permit within one
// new emission interval. A key idle at the change (every permit back) is left as it is:
// it admits the new burst at once, as a new key does. With a Backend, the keys'
// in-process schedules (for a store that
// answers Local) are converted here, and their stores convert their own state at the
// key's next call (see Backend). A zero Keyed cannot be reconfigured (R4C-REG-010). Safe
// for concurrent use.
func (k *Keyed[K]) Reconfigure(c Config) error {
	if k == nil || k.base == nil {
		return zeroLimiter.reconfigure(c, 1, true, nil)
	}
	return k.base.reconfigure(c, k.share, true, k.eachCell)
}

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

// Rejection returns the limiter's one rejection error, shared by every key: it matches
// ErrExceeded and is made once, when the limiter is built.
func (k *Keyed[K]) Rejection() error { return k.lim().Rejection() }

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
