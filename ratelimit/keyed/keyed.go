package keyed

import (
	"hash/maphash"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// The bounds of a limiter whose options leave them unset.
const (
	defaultMaxKeys     = 100_000 // keys held at once
	defaultMaxKeyBytes = 256     // bytes of the longest string key kept as it is
)

// Bounds bounds the limiter's memory. It holds at most keys keys at once, over all its
// keys: up to that many are all held, however their hashes fall, and never more at any
// instant (see Limiter for what happens at the bound); with keys of up to 16 bytes as
// strings, that is about 72 bytes per key held at the bound, whatever the bound, from
// 50,000 to 1,000,000 keys (each shard holds about 768 keys at the bound, so that its
// index of 1,024 slots stays about three quarters full). And it keeps a string key longer
// than keyBytes bytes as its digest, "~sha256:" followed by the 64 hex digits of its
// SHA-256 (72 bytes), which events and a backend then name it by; such a key costs a
// hash of its bytes and one allocation at each call. Keys that differ have different digests (finding two that collide would be
// finding a collision of SHA-256), so they keep separate quotas. A key that itself starts
// with "~sha256:" is replaced by its digest too, so that no key can pass for another's
// digest. keyBytes applies to keys of a string type, and to strings (of any string type)
// held by a key of an interface type; keys of other types are kept as they are, so a key
// type that holds strings of its own (a struct) should hold short ones.
//
// 0 leaves the default of each: 100,000 keys, 256 bytes. A negative value fails New with
// R4C-ATR-007. A ratelimit.Limiter ignores it.
func Bounds(keys, keyBytes int) ratelimit.Option {
	return func(s *rlcore.Settings) { s.MaxKeys, s.MaxKeyBytes = keys, keyBytes }
}

// Observe sets the observer asked for the limiter's observe.Recorder, which is then told
// each call's outcome (see observe.Outcome), with its key in Outcome.Key, and each event,
// with the call's context: e.g. the per-key metrics of package resilienceotel. Default
// none: nothing is recorded. A ratelimit.Limiter ignores it (a registry's observers,
// resilience.WithObserver, record its calls).
func Observe(o observe.Observer) ratelimit.Option {
	return func(s *rlcore.Settings) { s.KeyedObserver = o }
}

// Limiter is a rate limiter per key: one GCRA cell for each client id, IP address or API
// key, each with the semantics of a ratelimit.Limiter built with the same options:
// Permits per Period with a burst of Permits, refusals that say when to come back,
// reservations within MaxWait that can be canceled. Keys do not share permits: one key
// spending its quota leaves the others untouched. Its methods take the key, and the
// number of permits where a Limiter has an N variant:
//   - TryAcquire takes n permits that are free now, or refuses;
//   - Reserve takes n permits within MaxWait, without waiting, and returns their
//     ratelimit.Reservation;
//   - Acquire takes n permits, waiting up to MaxWait, honouring the context;
//   - Decide takes one permit, if free now, and reports what HTTP rate-limit headers
//     carry.
//
// Cells are made when a key is first seen. A cell is idle when its TAT is at or before
// now: every permit its key took is back — at the latest one Period after its last call,
// sooner when it took fewer than Permits. An idle cell admits a full burst, exactly as a
// new cell does: it holds no memory of the past, so keeping it or evicting it changes no
// decision. Cells are therefore kept until their place is needed, and a client that comes
// back after a quiet spell finds its cell and allocates nothing. Nothing is evicted on a
// schedule and no goroutine runs; Sweep evicts every idle cell when asked (e.g. from a
// timer, to give memory back sooner).
//
// Memory is bounded (Bounds): the number of keys held, and the length of the string keys
// kept as they are (a longer one is kept as its digest). The count of the keys held, one
// over all shards, never exceeds the bound, even for an instant, and up to that many keys
// are all held however their hashes fall. Keys are spread over shards, each with its own
// index and its own lock for writers: at least 64 (fewer for a bound under 1,024), and
// enough for each to hold about 768 keys at the bound (up to 4,096 shards). A new key
// that finds the bound reached never waits for room and is never refused for the lack of
// it: it takes the place of one cell of its own shard, an idle one when it meets one
// among 8 taken at random, else the one of those 8 that becomes idle first; when its
// shard holds no cell, it evicts one from another shard, locking one shard at a time. So
// a flood of distinct keys (a spoofing attack, or the addresses of an IPv6 prefix) locks
// out no client, new or held, and costs O(1) per new key. The price is paid by the keys
// evicted before they were idle: such a key's next call starts a new cell, with a full
// burst, so it may pass up to Permits more calls than its quota in that period. A key
// that has spent its quota has its TAT far ahead and is evicted after the keys that made
// one call each, which is what a flood makes. The limiter then still bounds each key
// that it holds, and the memory; bound the rate of all keys together with a
// ratelimit.Limiter in front of it. A cell is never reused for another key: cancelling a
// reservation of a key evicted since gives its permit to no one.
//
// A call for a key that has a cell finds it in its shard's index without a lock and
// without writing to memory that other calls share, does one compare-and-swap on the key's
// schedule, and allocates nothing, idle or not: calls for different keys, or many calls
// for one hot key, contend on nothing else. A new key, eviction and Sweep hold the shard's
// lock; a call that misses its key while one of them moves entries of its shard looks
// again under the lock. An evicted cell is marked dead first, so a call that found it just
// before takes nothing from it and looks its key up again. A new key allocates its entry
// (48 bytes in-process, with a string key of up to 16 bytes inside it; a longer string key
// is copied, so that a key cut from a larger string, such as a header, does not keep it
// alive). A shard whose index falls to a sixteenth of its slots is rebuilt smaller when
// it sweeps.
//
// Events carry the key in Event.Key: a string key as the limiter keeps it (its digest,
// for a key longer than the bound), any other key formatted with fmt.Sprint (its String
// method, when it has one). Formatting a key that is not a string allocates, on the paths
// that publish an event and only when a listener is set. Outcomes (see Observe) are a
// ratelimit.Limiter's, with the key, named the same way, in Outcome.Key. Refusals match
// ratelimit.ErrExceeded and are *ratelimit.ExceededError, one shared by every key: its
// RetryIn cannot tell a key's retry-after (ok false), which Decision.RetryAfter and
// Reservation.Delay give.
//
// With a backend (ratelimit.WithBackend), each key's state lives in the backend, bound
// with the instance id "<id>:<key>" (the key named as in events): every process that uses
// the same limiter id shares each key's quota, one backend entry per key. A call then asks
// the key's store, outside the shard's lock; a store that answers Local falls back on the
// key's in-process cell. A cell counts as busy for one Period after its last use, so that
// at the bound the keys in use keep their binding; a cell evicted before that loses only
// its binding, as the key's state is the backend's. Backend ids share one namespace: a
// ratelimit.Limiter named "api:10.0.0.1" shares the quota of key "10.0.0.1" of a keyed
// limiter "api", and keys whose fmt.Sprint is the same (the int 1 and the string "1" of a
// Limiter[any]) share one backend entry; choose names accordingly.
//
// A key must be equal to itself. A NaN is not (a float64 or float32 NaN, a complex with a
// NaN part, or a struct, array or interface value holding one), so no call could find its
// cell again: each would get a new cell with a full burst and take a place. Every call
// refuses such a key, as it refuses a key of an interface type holding a value that
// cannot be compared (a slice, a map, a function), with a *policy.ConfigError whose code
// is R4C-RLM-001: it does not match ErrExceeded, takes nothing and holds no place; it is
// published and recorded as a rejection, the key named with fmt.Sprint, and Decide
// reports a refusal with no RetryAfter. The check is chosen once, from K: a key type that
// can hold neither a float nor an interface (strings, integers, pointers, and structs and
// arrays of them) is not checked at all, and no check allocates.
//
// Each key follows the limiter's limit (Permits per Period, and Windows), unless it has one
// of its own: given, as text, by the PerKey function when its cell is made, or by
// SetLimit at run time. A call for a key finds its limit in the key's cell, at no further
// cost; a key with its own limit costs one more allocation of 48 bytes.
//
// A Limiter is safe for concurrent use; Reconfigure changes its configuration while it
// runs. A zero Limiter, or a nil *Limiter, is never built: it refuses every call, with a
// rejection matching ratelimit.ErrExceeded, and holds no key.
type Limiter[K comparable] struct {
	// base holds what every key shares: the configuration, the clock, the instance id,
	// the preallocated rejections and the listener.
	base     *core
	backend  backend.Backend
	windowed bool // built with further windows and no backend: its entries are windowedEntry (a backend's stores keep the windows)
	maxKeys  int
	keyBytes int      // string keys longer than this are kept as their digest
	keys     keyType  // how K holds a string
	check    keyCheck // how a key is checked to be equal to itself (see usable)
	nshards  uint64   // len(shards); a key's shard is (the top 32 bits of its hash × nshards) >> 32
	seed     maphash.Seed
	seed64   uint64 // the seed of strShardHash
	shards   []keyedShard[K]
	perKey   func(K) string // PerKey's function; nil: every new cell follows the limiter's rate
	own      ownRates       // the rates parsed from per-key limits, by their text
	owned    atomic.Bool    // SetLimit was called: some key may have a rate of its own

	_ [64]byte // the counts below, written as keys come and go, share no cache line with the fields above
	// count is the number of places held, over all shards: every cell, and each new cell
	// from before it is added until it is. It never exceeds maxKeys.
	count  atomic.Int64
	cursor atomic.Uint64 // the shard a new key that finds its own empty starts evicting from
	_      [48]byte
}

// New builds a keyed limiter from opts: package ratelimit's options (Permits and Period
// are required; WithBackend keeps each key's state in a backend) plus Bounds and
// Observe. An invalid configuration returns a *policy.ConfigError: R4C-ATR-003
// (permits < 1), R4C-ATR-002 (period ≤ 0), R4C-REG-001 (period shorter than 1ns per
// permit), R4C-ATR-004 (maxWait < 0), R4C-ATR-007 (maxKeys or maxKeyBytes < 0). Its
// instance id is its Name; without one, it has none (""): its rejection then reads
// `ratelimit: rate limit exceeded`, ratelimit.ErrExceeded's text, and only its refusal
// of a call for more than its burst speaks of "the rate limiter".
func New[K comparable](opts ...ratelimit.Option) (*Limiter[K], error) {
	return contract.New(func() rlcore.Settings { return rlcore.Settings{} }, build[K], opts)
}

// errWindowsLater refuses further windows given by Reconfigure to a keyed limiter built
// without any: its keys' cells have no room for them.
var errWindowsLater = r4c.Errorf(r4c.BadSpec, "rateLimiter.windows", "",
	"a keyed limiter keeps further windows only if it was built with some (ratelimit.Windows at keyed.New)")

func build[K comparable](s rlcore.Settings) (*Limiter[K], error) {
	s.Observer = s.KeyedObserver
	if err := rlcore.Validate(s.Config, s.Given); err != nil {
		return nil, err
	}
	if s.MaxKeys < 0 {
		return nil, r4c.Errorf(r4c.OutOfRange, "rateLimiter.maxKeys", strconv.Itoa(s.MaxKeys),
			"maxKeys must not be negative (0 means the default, %d)", defaultMaxKeys)
	}
	if s.MaxKeyBytes < 0 {
		return nil, r4c.Errorf(r4c.OutOfRange, "rateLimiter.maxKeyBytes", strconv.Itoa(s.MaxKeyBytes),
			"maxKeyBytes must not be negative (0 means the default, %d)", defaultMaxKeyBytes)
	}
	perKey, err := perKeyOf[K](s)
	if err != nil {
		return nil, err
	}
	n := s.MaxKeys
	if n == 0 {
		n = defaultMaxKeys
	}
	keyBytes := s.MaxKeyBytes
	if keyBytes == 0 {
		keyBytes = defaultMaxKeyBytes
	}
	shards := shardsFor(n)
	k := &Limiter[K]{
		base:     newCore(s),
		backend:  s.Backend,
		windowed: s.Config.Windows != "" && s.Backend == nil,
		maxKeys:  n,
		keyBytes: keyBytes,
		keys:     keyTypeOf[K](),
		check:    keyCheckOf(reflect.TypeFor[K]()),
		nshards:  uint64(shards),
		seed:     maphash.MakeSeed(),
		seed64:   rand.Uint64(),
		shards:   make([]keyedShard[K], shards),
		perKey:   perKey,
	}
	return k, nil
}

// core is what every key of a limiter shares: the configuration in force, the clock, the
// instance id, the listener and recorder, and the preallocated rejections.
type core struct {
	rate   atomic.Pointer[rlcore.Rate] // the configuration in force; nil for a zero Limiter
	b      rlcore.Base                 // the clock, and the lock and count of the schedules' conversions
	events contract.Events
	relay  policy.Listener // what a backend's stores publish through
	rej    rejections.Set[*ratelimit.ExceededError]
	nilCtx *ratelimit.ExceededError // the rejection of a call with a nil context
	mu     sync.Mutex               // serializes Reconfigure
	// shadowRejected counts the calls let through in shadow mode that would have been
	// refused (ShadowRejected).
	shadowRejected atomic.Uint64
}

// ShadowRejected returns how many calls the limiter let through in shadow mode
// (ratelimit.Shadow) that it would have refused, over all keys, since it was built; 0
// for a zero Limiter. Safe for concurrent use.
func (k *Limiter[K]) ShadowRejected() uint64 { return k.lim().shadowRejected.Load() }

// The constructors package ratelimit gives this one (see rlcore).
var (
	newExceeded     = rlcore.NewExceeded.(func(id string, cause error) *ratelimit.ExceededError)
	wrapReservation = rlcore.WrapReservation.(func(rlcore.Reservation) ratelimit.Reservation)
)

// newCore builds the shared part of a limiter of settings s, valid.
func newCore(s rlcore.Settings) *core {
	id := s.ID("")
	c := &core{events: s.EventsOf(ratelimit.Layer, id), nilCtx: newExceeded(id, policy.ErrNilContext)}
	c.b.SetClock(s.ClockOrSystem())
	c.rej = rejections.New(func(cause error) *ratelimit.ExceededError { return newExceeded(id, cause) })
	c.relay = rlcore.StoreListener(&c.events)
	c.rate.Store(newRate(id, s.Config))
	return c
}

// newRate derives the rate of cfg, valid, for the limiter id.
func newRate(id string, cfg rlcore.Config) *rlcore.Rate {
	r := new(rlcore.Rate)
	r.Init(cfg, func(limit int) error { return rlcore.NewBurst(id, limit) })
	return r
}

// unbuiltRate is the rate of a zero Limiter: it admits nothing.
var unbuiltRate rlcore.Rate

// cur returns the configuration in force, or unbuiltRate for a zero Limiter.
func (c *core) cur() *rlcore.Rate {
	if r := c.rate.Load(); r != nil {
		return r
	}
	return &unbuiltRate
}

// built reports whether the limiter was built with New: a zero Limiter has no clock.
func (c *core) built() bool { return c.b.Clk != nil }

// offErr is the result of a call through a limiter that is not enabled: nil when it is
// disabled, the zero Limiter's rejection when it was never built.
func (c *core) offErr() error {
	if !c.built() {
		return rlcore.ErrZero
	}
	return nil
}

// now reads the clock once.
func (c *core) now() int64 { return c.b.Now() }

// lim returns what every key shares; for a zero Limiter, never built with New, a zero
// core, which admits nothing.
func (k *Limiter[K]) lim() *core {
	if k == nil || k.base == nil {
		return &zeroCore
	}
	return k.base
}

// zeroCore is the shared part of every zero Limiter.
var zeroCore core

// Config returns the configuration every key's cell follows, as ratelimit.Limiter's
// Config does, but for the keys with a limit of their own (see PerKey and SetLimit),
// which follow it for MaxWait, Disabled and Shadow only.
func (k *Limiter[K]) Config() ratelimit.Config { return ratelimit.Config(k.lim().cur().Cfg) }

// Reconfigure changes the configuration of every key (Permits, Period, MaxWait, Disabled
// and Shadow) from the next call, as ratelimit.Limiter.Reconfigure does: c is validated
// as New validates it, an invalid c returns its *policy.ConfigError and changes nothing,
// and a change publishes a ConfigChanged event. A change of Permits or Period converts
// every key's schedule as a Limiter converts its own, before it returns (one shard's keys
// at a time, each under its shard's lock, which holds back new keys of that shard
// meanwhile; calls for keys held go on): what each key owes counts at the new rate, and a
// key that was refused for an hour under a raised quota gets its next permit within one
// new emission interval. A key idle at the change (every permit back) is left as it is:
// it admits the new burst at once, as a new key does. With a backend, the keys'
// in-process schedules (for a store that answers Local) are converted here, and their
// stores convert their own state at the key's next call. Windows
// (ratelimit.Config.Windows) change as a Limiter's do, for every key; a key with a limit
// of its own (PerKey, SetLimit) keeps it, and only MaxWait, Disabled and Shadow change
// for it; a keyed limiter built without windows and without a backend cannot be given
// some (R4C-REG-010). To turn shadow mode on or off, pass Config() with Shadow changed:
// no configuration key reaches a keyed limiter, which no registry builds. A zero Limiter
// cannot be reconfigured (R4C-REG-010). Safe for concurrent use.
func (k *Limiter[K]) Reconfigure(c ratelimit.Config) error {
	if c.Windows != "" && (k == nil || (!k.windowed && k.backend == nil)) && k.lim().built() {
		return errWindowsLater
	}
	b := k.lim()
	return b.b.Reconfigure("keyed Limiter", rlcore.Config(c), &b.mu, &b.events, b.rate.Load,
		func(old *rlcore.Rate, c rlcore.Config) {
			nr := newRate(b.events.ID, c)
			b.b.ConvertAll(old, nr, rlcore.LocalShare(k.backend), true, k.eachCell)
			// The rate first, then the windows: a key added meanwhile keeps nr's windows
			// from the start (addCell), one added before is moved.
			b.rate.Store(nr)
			if old.Cfg.Windows != c.Windows {
				k.moveWindows(nr)
			}
		})
}

// Len returns how many keys have a cell now, idle ones included, counting a new key from
// the moment it is given its place: at most the bound of Bounds, at every instant. An idle cell is
// kept until a new key needs its place at the bound, or Sweep evicts it. Safe for
// concurrent use.
func (k *Limiter[K]) Len() int {
	if k == nil {
		return 0
	}
	return int(k.count.Load())
}

// Sweep evicts every idle cell now and returns how many it evicted. An idle cell admits a
// full burst, as a new one does, so evicting it changes no decision; new keys at the bound
// make room by evicting cells themselves, so Sweep is never needed for correctness or for
// the bound on memory. It gives back the memory of idle keys sooner, e.g. from a periodic
// timer (a shard whose index falls to a sixteenth of its slots is rebuilt smaller); a
// client seen again after a sweep allocates its cell and its key anew.
func (k *Limiter[K]) Sweep() int {
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
