package keyed

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
	"sync/atomic"
	"unsafe"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// The machinery of a keyed limiter: its keys' GCRA cells in a sharded map, each shard
// under its own lock; the bound on the number of keys, one count over all shards, which
// new keys at the bound keep by evicting a cell; and the bound on the length of string
// keys.

const (
	minShards   = 64   // the fewest shards of a keyed limiter with MaxKeys ≥ 64·minPerShard
	maxShards   = 4096 // the most shards of a keyed limiter
	minPerShard = 16   // fewer shards for a small MaxKeys, so that each can hold a few keys
	// fullShard is how many keys a shard holds at most at the bound, when MaxKeys is large
	// enough: three quarters of an index of 1024 slots. An index doubles when it would be
	// more than 7/8 full, which leaves it between 7/16 and 7/8 full as keys are added; a
	// shard that holds at most fullShard keys stays in 1024 slots, about 3/4 full, whatever
	// MaxKeys is (the keys' spread over the shards is a few percent at this size, far
	// from 7/8). So the memory per key at the bound does not grow with MaxKeys.
	fullShard   = 768
	evictSample = 8 // a new key at the bound evicts the best of this many cells
)

// keyedShard is one part of a keyed limiter's keys: an index that calls read without a
// lock (see cellIndex), and the lock its writers hold.
type keyedShard[K comparable] struct {
	mu    sync.Mutex // held to add, evict or sweep cells
	index atomic.Pointer[cellIndex[K]]
	live  int       // entries in the index (under mu)
	_     [104]byte // 24 bytes of fields + 104: no 64-byte cache line holds two shards' fields
}

// cell is one key's state: its schedule, with its freed slots; with a backend, its in-process
// fallback. It is the first field of the key's entry.
type cell struct {
	slots rlcore.Schedule
}

// remoteOf returns the binding of c, nil for an in-process limiter or a failed binding.
func (k *Limiter[K]) remoteOf(c *cell) *remoteCell {
	if k.backend == nil {
		return nil
	}
	return (*boundEntry[K])(unsafe.Pointer(c)).remote
}

// evictableAt returns the clock time from which c is idle: its TAT, or with a backend,
// the later of its TAT and the end of its binding's Period.
func (k *Limiter[K]) evictableAt(c *cell) int64 {
	t := c.slots.TAT.Load()
	if m := k.multiOf(c); m != nil {
		t = max(t, m.IdleAt())
	}
	if rc := k.remoteOf(c); rc != nil {
		t = max(t, rc.until.Load())
	}
	return t
}

// decision is one GCRA decision on a key.
type decision struct {
	now        int64 // the limiter's clock time of the decision
	prev, next int64 // the key's TAT before and after (the store's Grant, when remote)
	at         int64 // when the permit is free (in the store's time base, when remote)
	wait       int64 // reserved: until the permit is free (≥ 0); refused: the retry-after
	ahead      int64 // the key's TAT after the decision minus now
	c          *cell // the key's cell; nil when the key was refused a cell, or passed unlimited
	ok         bool
	r          *rlcore.Rate // the rate decided at: the key's own or the limiter's, at its share
	over       error        // a call for more than the burst of the key's rate: its refusal, nothing taken
	remote     bool         // decided by the key's store
	plain      bool         // decided in-process on the TAT alone (no freed slot): next is the key's TAT
	windowed   bool         // decided on the key's schedule and its further windows together
	slot       uint8        // where the key's rlcore.Multi keeps the further windows' slots, when windowed
	epoch      uint32       // the limiter's conversions before the decision (Limiter.epoch)
	gen        int64        // the store's Grant.Epoch, when remote
	free       int          // remote: the fewest permits free over the key's windows, as its store told them; -1 when not told
}

// shardsFor returns how many shards a keyed limiter of maxKeys has: enough for each to
// hold at most fullShard keys at the bound (up to maxShards), and at least minShards, or
// fewer for a small maxKeys, so that each can hold minPerShard keys.
func shardsFor(maxKeys int) int {
	n := min(max((maxKeys+fullShard-1)/fullShard, minShards), maxShards)
	return max(1, min(n, maxKeys/minPerShard))
}

// shardIndex maps the hash h to one of n shards, by its top 32 bits scaled to n (a
// multiplication where a modulo would be a division).
func shardIndex(h, n uint64) uint64 { return (h >> 32) * n >> 32 }

// hash returns the hash of key, which picks its shard (the top 32 bits, see shardIndex)
// and its slot in the shard's index (the low bits). The string hash is written out in
// TryAcquire's fast path: generic methods are not inlined into one another.
func (k *Limiter[K]) hash(key K) uint64 {
	if k.keys == stringKeys {
		return k.strHash(asString(&key))
	}
	return maphash.Comparable(k.seed, key)
}

// shardOf returns the shard of the key whose hash is h.
func (k *Limiter[K]) shardOf(h uint64) *keyedShard[K] {
	if k.nshards <= 1 {
		return &k.shards[0]
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
func (k *Limiter[K]) strHash(s string) uint64 {
	if len(s) > 16 {
		return maphash.String(k.seed, s)
	}
	return strShardHash(s, k.seed64)
}

// strShardHash mixes the first and last 8 bytes of s (fewer, for a shorter s) with seed,
// by a 128-bit multiplication (wyhash's mix), then the result with the length, by
// another; the shard is taken from its top 32 bits, the slot in the shard's index from
// its low bits.
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
	hi, lo := bits.Mul64(a^seed, b^seed*0x9e3779b97f4a7c15^0xa0761d6478bd642f)
	// The length enters by a second round, so that no change of a's low bits cancels it
	// (keys of different lengths whose bytes xor to their lengths' difference).
	hi, lo = bits.Mul64(hi^lo^uint64(n), seed^0xe7037ed1a0b428db)
	return hi ^ lo
}

// take runs GCRA on key's cell, made if needed, reserving a permit that
// comes within maxWait; key is bounded (see bounded). A cell found without the shard's
// lock may be evicted meanwhile: the decision then finds it dead, takes nothing, and is
// made again under the lock, where no cell is evicted.
//
// r is the limiter's rate; a key with a rate of its own is decided at its own (see
// PerKey). share is the backend's LocalShare for a decision in-process at its share of the
// rate, 1 otherwise.
func (k *Limiter[K]) take(ctx context.Context, key K, r *rlcore.Rate, n int, maxWait int64, share int) decision {
	h := k.hash(key)
	s := k.shardOf(h)
	var d decision
	if e := s.lookup(key, h); e != nil && k.decideCell(&e.cell, r, n, k.base.now(), maxWait, share, &d) {
		return d
	}
	return k.takeLocked(ctx, s, key, h, r, n, maxWait, share)
}

// takeLocked is take under the shard's lock, for a key that had no live cell at the
// first look.
func (k *Limiter[K]) takeLocked(ctx context.Context, s *keyedShard[K], key K, h uint64, r *rlcore.Rate, n int, maxWait int64, share int) decision {
	own := k.limitFor(ctx, key) // before the lock: PerKey's function is the user's
	c, _ := k.lockedCell(ctx, s, key, h, own)
	var d decision
	k.decideCell(c, r, n, k.base.now(), maxWait, share, &d)
	s.mu.Unlock()
	return d
}

// gcraCell decides on c at now, for n permits at the rate r, into d, and reports whether
// c was alive: false, with nothing taken, when it was evicted.
func gcraCell(c *cell, r *rlcore.Rate, n int, now, maxWait int64, d *decision) bool {
	d.now, d.c = now, c
	inc, tol := r.Weight(n)
	if c.slots.None() { // take, inlined: every keyed call's path
		d.prev, d.next, d.wait, d.ok = rlcore.GCRA(&c.slots.TAT, inc, tol, now, maxWait)
		d.plain = true
	} else {
		d.prev, d.next, d.wait, d.ok = c.slots.TakeFreed(now, inc, tol, maxWait)
	}
	switch {
	case d.ok:
		d.at, d.ahead = sat.Add(now, d.wait), sat.Sub(d.next, now)
		if !d.plain { // a freed slot ends below the TAT: the key's TAT is the later of the two
			d.ahead = sat.Sub(max(d.next, c.slots.TAT.Load()), now)
		}
	case d.prev == rlcore.DeadTAT:
		return false
	default:
		d.ahead = sat.Sub(d.prev, now)
	}
	return true
}

// lockedCell locks s and returns key's cell in s (h is key's hash), made if needed (and
// bound to the backend, if any, for the call with ctx), following own if it is made (nil:
// the limiter's rate), and whether it made it; s.mu is held on return, so the
// cell stays alive until it is released. A new key takes one of the MaxKeys places: a
// free one, else the place of a cell it evicts (see makeRoom), so that the limiter never
// holds more than MaxKeys cells.
func (k *Limiter[K]) lockedCell(ctx context.Context, s *keyedShard[K], key K, h uint64, own *rlcore.Rate) (*cell, bool) {
	owned := false // a place freed in another shard, handed to this key
	for {
		s.mu.Lock()
		if e := s.lookup(key, h); e != nil {
			if owned { // made meanwhile by another call: give the place back
				k.count.Add(-1)
			}
			return &e.cell, false
		}
		if owned || k.reservePlace() || k.evict(s, k.base.now()) {
			var rc *remoteCell
			if k.backend != nil {
				rc = k.bind(ctx, key)
			}
			e := k.newEntry(key, own, rc)
			s.insert(e, h)
			return &e.cell, true
		}
		s.mu.Unlock()
		// s has nothing to give: evict from another shard, holding one lock at a time.
		owned = k.evictElsewhere(s)
	}
}

// reservePlace takes one of the MaxKeys places for a new cell, if one is free.
func (k *Limiter[K]) reservePlace() bool {
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

// newEntry returns a new entry for key, whose cell follows own (nil: the limiter's rate),
// bound to rc with a backend.
func (k *Limiter[K]) newEntry(key K, own *rlcore.Rate, rc *remoteCell) *entry[K] {
	var e *entry[K]
	switch {
	case k.windowed: // never with a backend
		w := &windowedEntry[K]{}
		w.key = k.ownKey(key)
		if own != nil {
			w.more.Use(own)
		} else {
			w.more.Use(k.base.rate.Load()) // stored before a change moves the keys' windows
		}
		e = &w.entry
	case k.backend != nil:
		b := &boundEntry[K]{remote: rc}
		b.key = k.ownKey(key)
		e = &b.entry
	case k.keys == stringKeys && len(asString(&key)) <= inlineKey:
		// A short string key is kept in its entry's own allocation: one heap object per
		// key, not two, for the garbage collector to mark.
		n := &namedEntry[K]{}
		ks := asString(&key)
		copy(n.buf[:], ks)
		n.key = fromString[K](unsafe.String(&n.buf[0], len(ks)))
		e = &n.entry
	default:
		e = &entry[K]{key: k.ownKey(key)}
	}
	if own != nil {
		e.slots.SetOwn(own)
	}
	return e
}

// evictElsewhere evicts one cell from a shard other than s, the shards taken in turn from
// one that moves at each call, each under its own lock, and reports whether it did: the
// caller then holds the place it freed.
func (k *Limiter[K]) evictElsewhere(s *keyedShard[K]) bool {
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
// the caller then holds its place. Of evictSample cells, taken in slot order from a
// random slot, it evicts the one that becomes idle first (an idle one, when it meets one,
// ends the search). The key of a cell evicted before it was idle loses what it had spent: its next
// call starts a new cell with a full burst. Called with s.mu held.
func (k *Limiter[K]) evict(s *keyedShard[K], now int64) bool {
	var (
		vt *cellIndex[K]
		vi uint64
		ve *entry[K]
	)
	best, n := int64(rlcore.MaxInt64), 0
	s.sample(func(t *cellIndex[K], i uint64, e *entry[K]) bool {
		at := k.evictableAt(&e.cell)
		if n == 0 || at < best {
			vt, vi, ve, best = t, i, e, at
		}
		n++
		return n < evictSample && best > now
	})
	if ve == nil {
		return false
	}
	k.kill(&ve.cell, rlcore.MaxInt64)
	s.remove(vt, vi)
	return true
}

// sweep evicts the idle cells of s at now and returns how many it evicted; the caller gives their places back. A cell that a call
// takes a permit from meanwhile is no longer idle, and stays. A table left a sixteenth
// full is rebuilt smaller. Called with s.mu held.
func (k *Limiter[K]) sweep(s *keyedShard[K], now int64) int {
	t := s.index.Load()
	if t == nil {
		return 0
	}
	gone := 0
	for i := 0; i < len(t.slots); {
		e := t.slots[i].e.Load()
		if e == nil {
			i++
			continue
		}
		idle := false
		if rc := k.remoteOf(&e.cell); rc == nil || rc.until.Load() <= now {
			idle = k.kill(&e.cell, now)
		}
		if !idle {
			i++
			continue
		}
		// The entries after it shift back: look at slot i again. One shifted from the
		// table's start to its end is looked at twice; a dead cell is never met again.
		s.remove(t, uint64(i))
		gone++
	}
	if len(t.slots) > minIndex && s.live <= len(t.slots)/16 {
		s.rebuild(t, indexSize(s.live))
	}
	return gone
}

// keyType is how a keyed limiter's key type K holds a string, which the limiter bounds.
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
// than the key bytes of Bounds or one that starts with digestPrefix, its digest. It costs a length
// check for a string key, and allocates only for a key it replaces.
func (k *Limiter[K]) bounded(key K) K {
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
			// holding the same long text stay two keys (in events and a backend's ids as
			// well), and is held in that type, which has the methods an interface K asks
			// for where a plain string may not.
			d := reflect.New(v.Type()).Elem()
			d.SetString(digest(v.Type().String() + "\x00" + v.String()))
			return d.Interface().(K)
		}
	}
	return key
}

// long reports whether s is kept as its digest.
func (k *Limiter[K]) long(s string) bool {
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
func (k *Limiter[K]) ownKey(key K) K {
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
func (k *Limiter[K]) keyString(key K) string {
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
