package ratelimit

import (
	"context"

	"github.com/resilience4go/resilience4go/internal/gcra"
	"github.com/resilience4go/resilience4go/internal/sat"
)

// Snapshot is a limiter's state at one instant.
type Snapshot struct {
	Instance         string // the instance id
	AvailablePermits int    // calls that would pass now without waiting, 0..Permits
	Permits          int    // the configured permits
	// Waiting is how many calls of this process hold a reserved permit and wait for its
	// time: blocked in Acquire or AcquireN (sync, DecorateFunc) or scheduled on the clock
	// (async, DecorateAsyncFunc), until they start, are canceled or their context ends.
	// With a Backend it counts the same calls, whose permits the store reserved (or the
	// local fallback): the waits of this process, not those of other instances sharing
	// the store. A Reservation with a delay is not counted: its caller waits on its own.
	// A Keyed limiter does not count its waits: SnapshotKey reports 0.
	Waiting int
}

// Handle is the read-only view of a limiter that a registry hands out
// (resilience.Registry.RateLimiter).
type Handle interface {
	InstanceID() string
	Config() Config
	AvailablePermits() int
	Snapshot() Snapshot
}

var _ Handle = (*Limiter)(nil)

// InstanceID returns the limiter's instance id, which its events and rejections carry.
func (l *Limiter) InstanceID() string { return l.events.ID }

// Config returns the limiter's configuration in force: the one it was built with, or the
// last one Reconfigure applied.
func (l *Limiter) Config() Config { return l.cur().cfg }

// AvailablePermits returns how many calls would pass right now without waiting, from 0 to
// Permits. With a backend it asks the backend's store. A disabled limiter reports
// Permits; a zero Limiter, never built, 0.
func (l *Limiter) AvailablePermits() int { return l.availableAt(l.cur()) }

// availableAt is AvailablePermits at the rate r.
func (l *Limiter) availableAt(r *rate) int {
	if !r.direct {
		return r.other.available(l, r)
	}
	return l.slots.available(l.now(), r.interval, r.tau, r.cfg.Permits)
}

// gcraAvailable is how many calls would pass at now without waiting, for a TAT tat.
func gcraAvailable(tat, interval, tau, now int64, permits int) int {
	return gcra.Available(sat.Sub(tat, now), interval, tau, permits)
}

// Snapshot returns the limiter's id, available and configured permits, and waiting calls.
func (l *Limiter) Snapshot() Snapshot {
	r := l.cur() // one configuration for both counts
	return Snapshot{Instance: l.events.ID, AvailablePermits: l.availableAt(r), Permits: r.cfg.Permits, Waiting: int(l.waiting.Load())}
}

// KeyedSnapshot is a Keyed limiter's state at one instant.
type KeyedSnapshot struct {
	Instance    string // the instance id
	Keys        int    // how many keys have a cell, idle ones included until evicted (Len)
	MaxKeys     int    // the bound on Keys
	MaxKeyBytes int    // string keys longer than this, in bytes, are kept as their digest
	Config      Config // every key's configuration: Permits per Period, MaxWait, Disabled
}

// Snapshot returns the limiter's id, how many keys it holds, its bounds and the
// configuration of every key. Keys is Len: exact at the instant it is read. Safe for
// concurrent use.
func (k *Keyed[K]) Snapshot() KeyedSnapshot {
	l := k.lim()
	return KeyedSnapshot{Instance: l.events.ID, Keys: k.Len(), MaxKeys: k.MaxKeys(), MaxKeyBytes: k.MaxKeyBytes(), Config: l.cur().cfg}
}

// SnapshotKey returns key's state as a Limiter's Snapshot: the limiter's id, the permits
// key could take now without waiting (AvailablePermits) and the configured permits. It
// makes no cell for a key without one. Its Waiting is 0: a Keyed limiter does not count
// its waits. Safe for concurrent use.
func (k *Keyed[K]) SnapshotKey(key K) Snapshot {
	l := k.lim()
	r := l.cur() // one configuration for both counts
	return Snapshot{Instance: l.events.ID, AvailablePermits: k.availableAt(key, r), Permits: r.cfg.Permits}
}

// AvailablePermits returns how many calls for key would pass right now without waiting,
// from 0 to Permits; Permits for a key without a cell, 0 for a key not equal to itself
// (see Keyed), which every call refuses. With a backend it asks the key's store. A
// disabled limiter reports Permits; a zero Keyed, never built, 0.
func (k *Keyed[K]) AvailablePermits(key K) int { return k.availableAt(key, k.lim().cur()) }

// availableAt is AvailablePermits at the rate r.
func (k *Keyed[K]) availableAt(key K, r *rate) int {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		return r.cfg.Permits
	}
	if k.check != keysEqual && !k.usable(key) {
		return 0 // a key no call can hold takes no permit
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
			if n, ok := rc.store.Available(context.Background(), r.cfg.Permits, r.cfg.Period); ok {
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
