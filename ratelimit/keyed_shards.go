package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"math/bits"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// The machinery of a Keyed limiter: its keys' GCRA cells in a sharded map, each shard
// under its own lock; the bound on the number of keys, one count over all shards, which
// new keys at the bound keep by evicting a cell; and the bound on the length of string
// keys.

const (
	minShards   = 64   // the fewest shards of a Keyed limiter with MaxKeys ≥ 64·minPerShard
	maxShards   = 4096 // the most shards of a Keyed limiter
	minPerShard = 16   // fewer shards for a small MaxKeys, so that each can hold a few keys
	// fullShard is how many keys a shard holds at most at the bound, when MaxKeys is large
	// enough: three quarters of a map table of 1024 slots. A Go map's table grows (doubles,
	// or splits in two) when 7/8 of its slots are used, which leaves a map of a power-of-two
	// number of tables between 7/16 and 7/8 full; a shard that holds at most fullShard keys
	// stays in one table, about 3/4 full, whatever MaxKeys is (the keys' spread over the
	// shards is a few percent at this size, far from 7/8). So the memory per key at the
	// bound does not grow with MaxKeys.
	fullShard   = 768
	minRebuild  = 64 // a shard that held at least this many cells may shrink its map
	evictSample = 8  // a new key at the bound evicts the best of this many cells
)

// keyedShard is one part of a Keyed limiter's keys, under its own lock.
type keyedShard[K comparable] struct {
	mu    sync.RWMutex
	cells map[K]*cell
	peak  int      // the most cells held since the map was made
	_     [88]byte // 40 bytes of fields + 88: no 64-byte cache line holds two shards' fields
}

// cell is one key's state: its schedule (SPEC RL-1, RL-9); with a backend, its in-process
// fallback. A cell of a limiter with a backend is the first field of a boundCell.
type cell struct {
	slots slots
}

// boundCell is a cell of a Keyed limiter with a backend: the cell and its binding. Keeping
// the binding out of cell keeps an in-process cell at 16 bytes.
type boundCell struct {
	cell
	remote *remoteCell // the key's state in the Backend; nil when its binding failed
}

// inlineKey is the longest string key kept in its cell's allocation (see namedCell).
const inlineKey = 16

// namedCell is a cell of an in-process Keyed limiter with a string key of at most
// inlineKey bytes, together with the key's bytes, which the map's key shares: 32 bytes,
// one allocation. The map's *cell points to its first field.
type namedCell struct {
	cell
	key [inlineKey]byte
}

// bound returns the binding of c, a cell of a limiter with a backend (the first field of
// a boundCell).
func (c *cell) bound() *boundCell { return (*boundCell)(unsafe.Pointer(c)) }

// remoteOf returns the binding of c, nil for an in-process limiter or a failed binding.
func (k *Keyed[K]) remoteOf(c *cell) *remoteCell {
	if k.backend == nil {
		return nil
	}
	return c.bound().remote
}

// evictableAt returns the clock time from which c is idle: its TAT, or with a backend,
// the later of its TAT and the end of its binding's Period.
func (k *Keyed[K]) evictableAt(c *cell) int64 {
	t := c.slots.tat.Load()
	if rc := k.remoteOf(c); rc != nil {
		t = max(t, rc.until.Load())
	}
	return t
}

// cancel gives back the permit of r, reserved on c; see Reservation.Cancel (SPEC RL-9).
// A cell is never reused for another key: once its key is evicted, cancelling on it gives
// the permit to no one (the key has started afresh, with a new cell).
func (c *cell) cancel(r Reservation) {
	if r.remote {
		c.bound().remote.store.Cancel(context.Background(), Token{Prev: r.prev, Next: r.next, At: r.at})
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

// shardsFor returns how many shards a Keyed limiter of maxKeys has: enough for each to
// hold at most fullShard keys at the bound (up to maxShards), and at least minShards, or
// fewer for a small maxKeys, so that each can hold minPerShard keys.
func shardsFor(maxKeys int) int {
	n := min(max((maxKeys+fullShard-1)/fullShard, minShards), maxShards)
	return max(1, min(n, maxKeys/minPerShard))
}

// shardIndex maps the hash h to one of n shards, by its top 32 bits scaled to n (a
// multiplication where a modulo would be a division).
func shardIndex(h, n uint64) uint64 { return (h >> 32) * n >> 32 }

// shard returns the shard of key (the hash written out: generic methods are not inlined
// into one another).
func (k *Keyed[K]) shard(key K) *keyedShard[K] {
	if k.nshards <= 1 {
		return &k.shards[0]
	}
	var h uint64
	if k.keys == stringKeys {
		h = k.strHash(asString(&key))
	} else {
		h = maphash.Comparable(k.seed, key)
	}
	return &k.shards[shardIndex(h, k.nshards)]
}

// A string key of at most 16 bytes (an IPv4 address, a short id) has its shard picked by
// strShardHash, on its length and all its bytes, mixed with a seed: a few instructions,
// where a general hash would double the map's own work; a longer key by maphash.String.
// The shard spreads the lock traffic of different keys and keeps each shard's map small:
// every decision, and the bound on the keys, are the same however keys spread. Other
// keys are hashed with maphash.Comparable.

// strHash returns the hash that picks the shard of the string key s: strShardHash for a
// key of at most 16 bytes, which it reads whole; maphash.String for a longer one, so that
// keys that differ only in their middle (a fixed prefix and suffix around an id) spread
// over the shards too.
func (k *Keyed[K]) strHash(s string) uint64 {
	if len(s) > 16 {
		return maphash.String(k.seed, s)
	}
	return strShardHash(s, k.seed64)
}

// strShardHash mixes the length and the first and last 8 bytes of s (fewer, for a
// shorter s) with seed, by one 128-bit multiplication (wyhash's mix); the shard is taken from its top 32 bits.
func strShardHash(s string, seed uint64) uint64 {
	n := len(s)
	var a, b uint64
	if n > 0 {
		p := unsafe.Slice(unsafe.StringData(s), n)
		switch {
		case n >= 8:
			a = binary.LittleEndian.Uint64(p)
			b = binary.LittleEndian.Uint64(p[n-8:])
		case n >= 4:
			a = uint64(binary.LittleEndian.Uint32(p))
			b = uint64(binary.LittleEndian.Uint32(p[n-4:]))
		default:
			a = uint64(p[0])<<16 | uint64(p[n>>1])<<8 | uint64(p[n-1])
		}
	}
	hi, lo := bits.Mul64(a^seed^uint64(n), b^seed*0x9e3779b97f4a7c15^0xa0761d6478bd642f)
	return hi ^ lo
}

// take runs GCRA (SPEC RL-1…RL-7) on key's cell, made if needed, reserving a permit that
// comes within maxWait; key is bounded (see bounded). It holds the shard's lock throughout
// and reads the clock under it, so that no cell is evicted while a decision is made on it.
func (k *Keyed[K]) take(key K, r *rate, n int, maxWait int64) decision {
	s := k.shard(key)
	s.mu.RLock()
	if c := s.cells[key]; c != nil {
		var d decision
		gcraCell(c, r, n, k.base.now(), maxWait, &d)
		s.mu.RUnlock()
		return d
	}
	s.mu.RUnlock()
	return k.takeNew(s, key, r, n, maxWait)
}

// takeNew is take for a key that had no cell at the first look.
func (k *Keyed[K]) takeNew(s *keyedShard[K], key K, r *rate, n int, maxWait int64) decision {
	c := k.lockedCell(context.Background(), s, key)
	var d decision
	gcraCell(c, r, n, k.base.now(), maxWait, &d)
	s.mu.Unlock()
	return d
}

// gcraCell decides on c at now, for n permits at the rate r, into d.
func gcraCell(c *cell, r *rate, n int, now, maxWait int64, d *decision) {
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
}

// lockedCell locks s for writing and returns key's cell in s, made if needed (and bound to
// the backend, if any, for the call with ctx); s.mu is held on return. A new key takes
// one of the MaxKeys places: a free one, else the place of a cell it evicts (see
// makeRoom), so that the limiter never holds more than MaxKeys cells.
func (k *Keyed[K]) lockedCell(ctx context.Context, s *keyedShard[K], key K) *cell {
	owned := false // a place freed in another shard, handed to this key
	for {
		s.mu.Lock()
		if c := s.cells[key]; c != nil {
			if owned { // made meanwhile by another call: give the place back
				k.count.Add(-1)
			}
			return c
		}
		if owned || k.reservePlace() || k.evict(s, k.base.now()) {
			return k.addCell(ctx, s, key)
		}
		s.mu.Unlock()
		// s has nothing to give: evict from another shard, holding one lock at a time.
		owned = k.evictElsewhere(s)
	}
}

// reservePlace takes one of the MaxKeys places for a new cell, if one is free.
func (k *Keyed[K]) reservePlace() bool {
	for {
		n := k.count.Load()
		if n >= int64(k.maxKeys) {
			return false
		}
		if k.count.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// addCell adds key's cell to s, in a place the caller holds. Called with s.mu held for
// writing.
func (k *Keyed[K]) addCell(ctx context.Context, s *keyedShard[K], key K) *cell {
	var c *cell
	own := key
	switch {
	case k.backend != nil:
		b := &boundCell{remote: k.bind(ctx, key)}
		c = &b.cell
		own = k.ownKey(key)
	case k.keys == stringKeys && len(asString(&key)) <= inlineKey:
		// A short string key is kept in its cell's own allocation: one heap object per
		// key, not two, for the garbage collector to mark.
		n := &namedCell{}
		ks := asString(&key)
		copy(n.key[:], ks)
		c, own = &n.cell, fromString[K](unsafe.String(&n.key[0], len(ks)))
	default:
		c = &cell{}
		own = k.ownKey(key)
	}
	if s.cells == nil {
		s.cells = make(map[K]*cell)
	}
	s.cells[own] = c
	s.peak = max(s.peak, len(s.cells))
	return c
}

// evictElsewhere evicts one cell from a shard other than s, the shards taken in turn from
// one that moves at each call, each under its own lock, and reports whether it did: the
// caller then holds the place it freed.
func (k *Keyed[K]) evictElsewhere(s *keyedShard[K]) bool {
	start := k.cursor.Add(1)
	for i := range uint64(len(k.shards)) {
		o := &k.shards[(start+i)%k.nshards]
		if o == s {
			continue
		}
		o.mu.Lock()
		ok := k.evict(o, k.base.now())
		o.mu.Unlock()
		if ok {
			return true
		}
	}
	// Every place is held by a cell being added: let those calls finish.
	runtime.Gosched()
	return false
}

// evict evicts one cell of s at now and reports whether it did (false: s has no cell);
// the caller then holds its place. Of evictSample cells, taken in the map's random order,
// it evicts the one that becomes idle first (an idle one, when it meets one, ends the
// search). The key of a cell evicted before it was idle loses what it had spent: its next
// call starts a new cell with a full burst. A key that is not equal to itself cannot be
// deleted; meeting one, evict sweeps instead, which drops them all. Called with s.mu held
// for writing.
func (k *Keyed[K]) evict(s *keyedShard[K], now int64) bool {
	var victim K
	best, n, unequal := int64(maxInt64), 0, false
	for key, c := range s.cells {
		if unequal = key != key; unequal {
			break
		}
		if at := k.evictableAt(c); n == 0 || at < best {
			victim, best = key, at
		}
		if n++; n == evictSample || best <= now {
			break
		}
	}
	switch {
	case unequal:
		if gone := k.sweep(s, now); gone > 0 { // at least the unequal key
			k.count.Add(int64(1 - gone))
			return true
		}
	case n > 0:
		delete(s.cells, victim)
		return true
	}
	return false
}

// sweep evicts the idle cells of s at now, and the keys unequal to themselves, and
// returns how many it evicted; the caller gives their places back. Called with s.mu held
// for writing.
func (k *Keyed[K]) sweep(s *keyedShard[K], now int64) int {
	before, kept := len(s.cells), 0
	for key, c := range s.cells {
		if k.evictableAt(c) <= now || key != key {
			delete(s.cells, key)
			continue
		}
		kept++
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
