package keyed

import (
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"

	"math/bits"
	"math/rand/v2"
	"sync/atomic"
)

// The index of a shard's cells: an open-addressing hash table (linear probing, Robin Hood
// order, deletion by backward shift: no tombstones) that calls read without a lock and
// without writing to shared memory, so that calls for keys of one shard, or for one hot
// key, share no lock word. Writers (a new key, eviction, Sweep) hold the shard's lock and
// move entries between slots one atomic store at a time; a table that fills up is rebuilt
// into a new one, published whole. A reader that races with a writer may miss a key (it
// then looks again under the lock), but never finds another key's entry: an entry never
// changes but for its cell's schedule. A reader that meets an evicted cell (one it found
// before its removal) finds it dead (see rlcore.DeadTAT) and also looks again under the lock.

// entry is a key's place in a keyed limiter: its cell, then the key. The index points to
// it; a *cell of a keyed limiter is the first field of an entry.
type entry[K comparable] struct {
	cell
	key K
}

// namedEntry is the entry of a string key of at most inlineKey bytes in an in-process
// keyed limiter, together with the key's bytes, which its key shares: one allocation of
// 48 bytes per key.
type namedEntry[K comparable] struct {
	entry[K]
	buf [inlineKey]byte
}

// boundEntry is the entry of a key of a keyed limiter with a backend: the entry and the
// key's binding.
type boundEntry[K comparable] struct {
	entry[K]
	remote *remoteCell // the key's state in the Backend; nil when its binding failed
}

// windowedEntry is the entry of a key of a keyed limiter built with further windows
// (ratelimit.Windows): the entry and the windows' TATs.
type windowedEntry[K comparable] struct {
	entry[K]
	more rlcore.Multi
}

// inlineKey is the longest string key kept in its entry's allocation (see namedEntry).
const inlineKey = 16

// indexSlot is one place of a cellIndex: the hash of its key, and the entry (nil: empty).
// A reader reads the entry, then the hash; the two may come from different writes while
// a writer moves entries, which can only make the reader miss.
type indexSlot[K comparable] struct {
	hash atomic.Uint64
	e    atomic.Pointer[entry[K]]
}

// cellIndex is one table of a shard's index: a power-of-two number of slots. Each entry
// sits at or after its home slot (its hash's low bits), and no entry is further from its
// home than the entries it passed are from theirs (Robin Hood order), so a lookup stops
// at an empty slot or at an entry nearer its home than the key would be.
type cellIndex[K comparable] struct {
	mask  uint64 // len(slots) - 1
	slots []indexSlot[K]
}

// minIndex is the fewest slots of a table.
const minIndex = 16

// indexSize returns the number of slots of a table rebuilt smaller for n live entries:
// the smallest power of two, at least minIndex, that n fills to at most 3/4. A table
// doubles when an entry would bring it past 7/8 full; Sweep rebuilds one that has fallen
// to a sixteenth full smaller.
func indexSize(n int) int {
	need := (n*4 + 2) / 3
	if need <= minIndex {
		return minIndex
	}
	return 1 << bits.Len(uint(need-1))
}

// lookup returns key's entry in s, or nil; h is key's hash. Without s.mu it may miss a key
// that a writer is moving, and the entry's cell may be dead (evicted meanwhile); with
// s.mu held it does neither.
func (s *keyedShard[K]) lookup(key K, h uint64) *entry[K] {
	t := s.index.Load()
	if t == nil {
		return nil
	}
	i := h & t.mask
	for dist := uint64(0); ; dist++ {
		sl := &t.slots[i]
		e := sl.e.Load()
		if e == nil {
			return nil
		}
		sh := sl.hash.Load()
		if sh == h && e.key == key {
			return e
		}
		if (i-sh)&t.mask < dist { // key would have displaced this entry
			return nil
		}
		i = (i + 1) & t.mask
	}
}

// slotOf returns the table and the slot of key's entry in s, which holds it; h is key's
// hash. Called with s.mu held.
func (s *keyedShard[K]) slotOf(key K, h uint64) (*cellIndex[K], uint64) {
	t := s.index.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if e := t.slots[i].e.Load(); e != nil && t.slots[i].hash.Load() == h && e.key == key {
			return t, i
		}
	}
}

// insert adds e, whose key has the hash h and is not in s, to s's index, doubling the
// table first when e would fill it past 7/8. Called with s.mu held.
func (s *keyedShard[K]) insert(e *entry[K], h uint64) {
	t := s.index.Load()
	switch {
	case t == nil:
		t = &cellIndex[K]{mask: minIndex - 1, slots: make([]indexSlot[K], minIndex)}
		s.index.Store(t)
	case s.live+1 > len(t.slots)/8*7:
		t = s.rebuild(t, 2*len(t.slots))
	}
	t.place(e, h)
	s.live++
}

// place puts e, whose key has the hash h, in t in Robin Hood order: past the entries at
// least as far from their homes, taking the place of the first one nearer its home,
// which moves on in turn. t has an empty slot.
func (t *cellIndex[K]) place(e *entry[K], h uint64) {
	i := h & t.mask
	for dist := uint64(0); ; dist++ {
		sl := &t.slots[i]
		cur := sl.e.Load()
		if cur == nil {
			sl.hash.Store(h)
			sl.e.Store(e)
			return
		}
		if sh := sl.hash.Load(); (i-sh)&t.mask < dist {
			sl.hash.Store(h)
			sl.e.Store(e)
			e, h, dist = cur, sh, (i-sh)&t.mask
		}
		i = (i + 1) & t.mask
	}
}

// rebuild publishes a new table for s of size slots (a power of two), holding t's
// entries, and returns it. Called with s.mu held.
func (s *keyedShard[K]) rebuild(t *cellIndex[K], size int) *cellIndex[K] {
	nt := &cellIndex[K]{mask: uint64(size - 1), slots: make([]indexSlot[K], size)}
	for i := range t.slots {
		if e := t.slots[i].e.Load(); e != nil {
			nt.place(e, t.slots[i].hash.Load())
		}
	}
	s.index.Store(nt)
	return nt
}

// remove takes the entry of slot i out of t, the current table, shifting back the
// entries after it that are not at their home; its cell must be dead already. Called
// with s.mu held.
func (s *keyedShard[K]) remove(t *cellIndex[K], i uint64) {
	for {
		j := (i + 1) & t.mask
		next := &t.slots[j]
		e := next.e.Load()
		if e == nil || (j-next.hash.Load())&t.mask == 0 {
			t.slots[i].e.Store(nil)
			break
		}
		t.slots[i].hash.Store(next.hash.Load())
		t.slots[i].e.Store(e)
		i = j
	}
	s.live--
}

// sample calls fn on the entries of s, in slot order from a random slot, until fn
// returns false or every slot has been seen. Called with s.mu held.
func (s *keyedShard[K]) sample(fn func(t *cellIndex[K], i uint64, e *entry[K]) bool) {
	t := s.index.Load()
	if t == nil || s.live == 0 {
		return
	}
	start := rand.Uint64() & t.mask
	for n := uint64(0); n <= t.mask; n++ {
		i := (start + n) & t.mask
		if e := t.slots[i].e.Load(); e != nil && !fn(t, i, e) {
			return
		}
	}
}
