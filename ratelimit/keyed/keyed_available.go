package keyed

import (
	"context"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// AvailablePermits returns how many calls for key would pass right now without waiting,
// from 0 to Permits (the key's own, for a key with a limit of its own: see PerKey, which
// it asks for a key without a cell); Permits for a key without a cell, 0 for a key not equal to itself,
// which every call refuses. With a backend it asks the key's store. A disabled limiter
// reports Permits; a zero Limiter, never built, 0. It makes no cell for a key without one.
func (k *Limiter[K]) AvailablePermits(key K) int { return k.availableAt(key, k.lim().cur()) }

// availableAt is AvailablePermits at the rate r.
func (k *Limiter[K]) availableAt(key K, r *rlcore.Rate) int {
	l := k.lim()
	if r.Cfg.Disabled || !l.built() {
		return r.Cfg.Permits
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
		r = c.slots.RateOr(r)
	} else if own := k.limitFor(context.Background(), key); own != nil {
		r = own // the limit the key's cell would follow
	}
	now := l.now()
	n := r.Cfg.Permits
	switch {
	case c != nil && r.NMore > 0 && k.windowed:
		n = k.multiOf(c).Available(&c.slots, r, now)
	case c != nil:
		n = c.slots.Available(now, r.Interval, r.Tau, r.Cfg.Permits)
	case r.NMore > 0:
		n = r.Limit
	}
	if k.backend != nil {
		var rc *remoteCell
		if c != nil {
			rc = k.remoteOf(c)
		} else {
			rc = k.bind(context.Background(), key)
		}
		if rc != nil {
			if n, ok := rc.store.Available(context.Background(), backend.Request{Permits: r.Cfg.Permits, Period: r.Cfg.Period, Windows: r.Wins}); ok {
				return n
			}
			// The store answered Local: the key's in-process schedule, at the local share.
			if lr := r.LocalShare(rlcore.LocalShare(k.backend)); lr != r && c != nil {
				n = c.slots.Available(now, lr.Interval, lr.Tau, lr.Cfg.Permits)
			} else if c == nil {
				n = lr.Cfg.Permits
			}
		}
	}
	return n
}
