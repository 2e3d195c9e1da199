package ratelimit

import (
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// The machinery of a Keyed limiter: its keys' GCRA cells in a sharded map, each shard
// under its own lock, with lazy eviction of idle cells and the bound on the number of keys.

const (
	maxShards   = 64   // the most shards of a Keyed limiter (a power of two)
	minPerShard = 256  // fewer shards for a small MaxKeys, so that keys spread evenly
	minSweep    = 64   // a shard sweeps after adding at least this many cells
	minRebuild  = 1024 // a shard that held at least this many cells may shrink its map
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
	tat    atomic.Int64 // the key's TAT (SPEC RL-1); with a backend, its in-process fallback
	remote *remoteCell  // the key's state in the Backend; nil in-process
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
// A cell is never evicted while one of its reservations can still be canceled: its TAT
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
