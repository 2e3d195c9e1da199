package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// The machinery of a Keyed limiter: its keys' GCRA cells in a sharded map, each shard
// under its own lock, with lazy eviction of idle cells, the bound on the number of keys
// and the bound on the length of string keys.

const (
	maxShards   = 64   // the most shards of a Keyed limiter (a power of two)
	minPerShard = 256  // fewer shards for a small MaxKeys, so that keys spread evenly
	minSweep    = 64   // a shard sweeps after adding at least this many cells
	minRebuild  = 1024 // a shard that held at least this many cells may shrink its map
	evictSample = 8    // a full shard evicts the best of this many cells
)

// keyedShard is one part of a Keyed limiter's keys, under its own lock.
type keyedShard[K comparable] struct {
	mu      sync.RWMutex
	cells   map[K]*cell
	added   int      // cells added since the last sweep
	sweepAt int      // sweep once added reaches it
	idleAt  int64    // no cell can be evicted before this clock time
	peak    int      // the most cells held since the map was made
	_       [64]byte // 64 bytes of fields + a 64-byte gap: no cache line holds two shards' fields
}

// cell is one key's state.
type cell struct {
	slots  slots       // the key's schedule (SPEC RL-1, RL-9); with a backend, its in-process fallback
	remote *remoteCell // the key's state in the Backend; nil in-process
}

// evictableAt returns the clock time from which c may be evicted.
func (c *cell) evictableAt() int64 {
	t := c.slots.tat.Load()
	if c.remote != nil {
		t = max(t, c.remote.until.Load())
	}
	return t
}

// cancel gives back the permit of r, reserved on c; see Reservation.Cancel (SPEC RL-9).
// A cell is never evicted as idle while one of its reservations can still be canceled:
// its TAT stands after the reservation's instant. Only a full shard evicts a cell before
// it is idle, and cancelling on it then does nothing: its key has started afresh.
func (c *cell) cancel(r Reservation) {
	if r.remote {
		c.remote.store.Cancel(context.Background(), Token{Prev: r.prev, Next: r.next, At: r.at})
		return
	}
	now := r.l.now()
	if now > r.at {
		return
	}
	c.slots.giveBack(r.prev, r.next, now)
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
	plain      bool // decided in-process on the TAT alone (no freed slot): next is the key's TAT
	shared     bool // decided in-process at the backend's local share of the rate
}

func (k *Keyed[K]) shard(key K) *keyedShard[K] {
	if k.mask == 0 {
		return &k.shards[0]
	}
	return &k.shards[maphash.Comparable(k.seed, key)&k.mask]
}

// take runs GCRA (SPEC RL-1…RL-7) on key's cell, made if needed, reserving a permit that
// comes within maxWait; key is bounded (see bounded). It holds the shard's lock throughout
// and reads the clock under it, so that no cell is evicted while a decision is made on
// it, and a cell made after an idle cell's eviction sees a clock at least as late as the
// eviction did: it is exactly the cell it replaces.
func (k *Keyed[K]) take(key K, r *rate, n int, maxWait int64) decision {
	s := k.shard(key)
	s.mu.RLock()
	if c := s.cells[key]; c != nil {
		d := k.gcra(c, r, n, k.base.now(), maxWait)
		s.mu.RUnlock()
		return d
	}
	s.mu.RUnlock()
	return k.takeNew(s, key, r, n, maxWait)
}

// takeNew is take for a key that had no cell at the first look.
func (k *Keyed[K]) takeNew(s *keyedShard[K], key K, r *rate, n int, maxWait int64) decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := k.base.now()
	c := k.cellLocked(context.Background(), s, key, now)
	d := k.gcra(c, r, n, now, maxWait)
	s.idleAt = min(s.idleAt, c.evictableAt())
	return d
}

// gcra decides on c at now, for n permits at the rate r.
func (k *Keyed[K]) gcra(c *cell, r *rate, n int, now, maxWait int64) (d decision) {
	d.now, d.c = now, c
	inc, tol := r.weight(n)
	if c.slots.none() { // take, inlined: every keyed call's path
		d.prev, d.next, d.wait, d.ok = gcraReserve(&c.slots.tat, inc, tol, now, maxWait)
		d.plain = true
	} else {
		d.prev, d.next, d.wait, d.ok = c.slots.takeFreed(now, inc, tol, maxWait)
	}
	if d.ok {
		d.at, d.ahead = satAdd(now, d.wait), satSub(d.next, now)
		if !d.plain { // a freed slot ends below the TAT: the key's TAT is the later of the two
			d.ahead = satSub(max(d.next, c.slots.tat.Load()), now)
		}
	} else {
		d.ahead = satSub(d.prev, now)
	}
	return d
}

// cellLocked returns key's cell in s, made if needed (and bound to the backend, if any,
// for the call with ctx). A shard that holds its share of MaxKeys makes room first (see
// evict). Called with s.mu held for writing.
func (k *Keyed[K]) cellLocked(ctx context.Context, s *keyedShard[K], key K, now int64) *cell {
	if c := s.cells[key]; c != nil {
		return c
	}
	if s.added >= s.sweepAt && now >= s.idleAt {
		k.sweep(s, now)
	}
	if len(s.cells) >= k.perShard {
		k.evict(s, now)
	}
	c := &cell{}
	if k.backend != nil {
		c.remote = k.bind(ctx, key)
	}
	if s.cells == nil {
		s.cells = make(map[K]*cell)
	}
	s.cells[k.ownKey(key)] = c
	s.added++
	s.peak = max(s.peak, len(s.cells))
	return c
}

// evict makes room for one cell in the full shard s at now: of evictSample cells, taken
// in the map's random order, it evicts the one that becomes idle first (an idle one, when
// it meets one, ends the search). The key of a cell evicted before it was idle loses what
// it had spent: its next call starts a new cell with a full burst. A key that is not equal
// to itself cannot be deleted; meeting one, evict sweeps instead, which drops them all.
// Called with s.mu held for writing.
func (k *Keyed[K]) evict(s *keyedShard[K], now int64) {
	var victim K
	best, n, unequal := int64(maxInt64), 0, false
	for key, c := range s.cells {
		if unequal = key != key; unequal {
			break
		}
		if at := c.evictableAt(); n == 0 || at < best {
			victim, best = key, at
		}
		if n++; n == evictSample || best <= now {
			break
		}
	}
	switch {
	case unequal:
		k.sweep(s, now)
	case n > 0:
		delete(s.cells, victim)
	}
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

// keyType is how a Keyed limiter's key type K holds a string, which the limiter bounds.
type keyType uint8

const (
	otherKeys  keyType = iota // K holds no string of its own: kept as it is
	stringKeys                // K is a string type (string, or a type defined on it)
	anyKeys                   // K is an interface type: a key may hold a string
)

// keyTypeOf returns how K holds a string.
func keyTypeOf[K comparable]() keyType {
	switch reflect.TypeFor[K]().Kind() {
	case reflect.String:
		return stringKeys
	case reflect.Interface:
		return anyKeys
	}
	return otherKeys
}

// digestPrefix starts the digest that stands for a long string key. A key that starts
// with it is replaced by its digest too, whatever its length, so that no key kept as it
// is can equal the digest of another.
const digestPrefix = "~sha256:"

// digestLen is the length of a digest: the prefix and 64 hex digits.
const digestLen = len(digestPrefix) + 2*sha256.Size

// asString returns a key of a string type as a string, sharing its bytes. K must be a
// string type (stringKeys): the two then have the same layout.
func asString[K comparable](key *K) string { return *(*string)(unsafe.Pointer(key)) }

// fromString returns s as a key of the string type K (stringKeys), sharing its bytes.
func fromString[K comparable](s string) K { return *(*K)(unsafe.Pointer(&s)) }

// bounded returns key as the limiter keeps it: the key itself, or, for a string longer
// than MaxKeyBytes or one that starts with digestPrefix, its digest. It costs a length
// check for a string key, and allocates only for a key it replaces.
func (k *Keyed[K]) bounded(key K) K {
	switch k.keys {
	case stringKeys:
		if s := asString(&key); k.long(s) {
			return fromString[K](digest(s))
		}
	case anyKeys:
		if s, ok := any(key).(string); ok {
			if k.long(s) {
				return any(digest(s)).(K)
			}
		} else if v := reflect.ValueOf(key); v.Kind() == reflect.String && k.long(v.String()) {
			// A string of a named type: its digest names the type too, so that two types
			// holding the same long text stay two keys.
			return any(digest(v.Type().String() + "\x00" + v.String())).(K)
		}
	}
	return key
}

// long reports whether s is kept as its digest.
func (k *Keyed[K]) long(s string) bool {
	return len(s) > k.keyBytes || strings.HasPrefix(s, digestPrefix)
}

// digest returns digestPrefix followed by the SHA-256 of s in hex: a collision between two
// keys would be a collision of SHA-256.
func digest(s string) string {
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
	var b [digestLen]byte
	copy(b[:], digestPrefix)
	hex.Encode(b[len(digestPrefix):], sum[:])
	return string(b[:])
}

// ownKey returns key to be kept in a map: a string is copied, so that it does not keep
// alive the larger string it may have been cut from.
func (k *Keyed[K]) ownKey(key K) K {
	switch k.keys {
	case stringKeys:
		return fromString[K](strings.Clone(asString(&key)))
	case anyKeys:
		if s, ok := any(key).(string); ok {
			return any(strings.Clone(s)).(K)
		}
		if v := reflect.ValueOf(key); v.Kind() == reflect.String { // a named string type
			own := reflect.New(v.Type()).Elem()
			own.SetString(strings.Clone(v.String()))
			return own.Interface().(K)
		}
	}
	return key
}

// keyString returns key as events and backend ids name it: a string as it is kept (no
// allocation), any other key formatted with fmt.Sprint (its String method, when it has
// one).
func (k *Keyed[K]) keyString(key K) string {
	switch k.keys {
	case stringKeys:
		return asString(&key)
	case anyKeys:
		if s, ok := any(key).(string); ok {
			return s
		}
	}
	return fmt.Sprint(key)
}
