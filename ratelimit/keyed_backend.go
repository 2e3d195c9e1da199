package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// The backend paths of a Keyed limiter: each key's cell is bound to its own Store, which
// decides outside the shard's lock.

// remoteCell is a key's binding to a Backend.
type remoteCell struct {
	store Store
	until atomic.Int64 // the cell is kept until this clock time: one Period after its last use
}

// takeRemote is take for a limiter with a backend: key's store decides, outside the
// shard's lock; a store that answers Local, or a key whose binding failed, falls back on
// the key's in-process cell.
func (k *Keyed[K]) takeRemote(key K, maxWait int64) decision {
	c, now, wait := k.remoteCellOf(key)
	if c == nil {
		return decision{now: now, wait: wait, ahead: wait}
	}
	if c.remote != nil {
		g, _ := c.remote.store.Reserve(context.Background(), time.Duration(maxWait)) // Background never ends: no error
		switch g.Outcome {
		case Reserved:
			t := g.Token
			return decision{now: now, prev: t.Prev, next: t.Next, at: t.At, wait: int64(g.Wait),
				ahead: t.Next - (t.At - int64(g.Wait)), c: c, ok: true, remote: true}
		case Unlimited:
			return decision{now: now, ok: true}
		case Refused:
			w := int64(g.Wait)
			return decision{now: now, wait: w, ahead: w + k.base.tau, remote: true}
		}
	}
	return k.take(key, maxWait)
}

// remoteCellOf returns key's cell, made and bound if needed, and marks it used at now; or
// nil and the retry-after when key has no cell and its shard is full.
func (k *Keyed[K]) remoteCellOf(key K) (c *cell, now, wait int64) {
	s := k.shard(key)
	s.mu.RLock()
	if c = s.cells[key]; c != nil {
		now = k.base.now()
		k.touch(c, now)
		s.mu.RUnlock()
		return c, now, 0
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	now = k.base.now()
	if c, wait = k.cellLocked(s, key, now); c == nil {
		return nil, now, wait
	}
	k.touch(c, now)
	s.idleAt = min(s.idleAt, c.evictableAt())
	return c, now, 0
}

// touch keeps a bound cell for one Period after now.
func (k *Keyed[K]) touch(c *cell, now int64) {
	if c.remote != nil {
		c.remote.until.Store(satAdd(now, int64(k.base.cfg.Period)))
	}
}

// bind binds key to the backend; nil, after a RateLimiterBackendFailed event, when the
// backend refuses (the key then keeps its state in-process).
func (k *Keyed[K]) bind(key K) *remoteCell {
	l := k.base
	st, err := k.backend.Bind(Binding{ID: l.events.ID + ":" + keyString(key), Config: l.cfg, Clock: l.clk, Listener: l.events.Listener})
	if err != nil {
		l.events.Publish(policy.Event{Kind: policy.RateLimiterBackendFailed, Err: err})
		return nil
	}
	return &remoteCell{store: st}
}

// keyString is key's part of its backend binding's id.
func keyString[K comparable](key K) string {
	if s, ok := any(key).(string); ok {
		return s
	}
	return fmt.Sprint(key)
}
