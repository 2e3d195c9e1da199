package keyed

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// The backend paths of a keyed limiter: each key's cell is bound to its own Store, which
// decides outside the shard's lock.

// errNoStore is the failure of a Backend whose Bind returned neither a Store nor an error.
var errNoStore = errors.New("ratelimit: the backend's Bind returned no Store")

// remoteCell is a key's binding to a Backend.
type remoteCell struct {
	store backend.Store
	until atomic.Int64 // the cell is kept until this clock time: one Period after its last use
}

// takeRemote is take for a limiter with a backend: key's store decides, outside the
// shard's lock; a store that answers Local, or a key whose binding failed, falls back on
// the key's in-process cell. The error is ctx's, when it ended before the store decided;
// nothing is known to be reserved then.
func (k *Limiter[K]) takeRemote(ctx context.Context, key K, r *rlcore.Rate, n int, maxWait int64) (decision, error) {
	c, rr, now := k.remoteCellOf(ctx, key, r)
	if n > rr.Limit {
		return decision{now: now, c: c, r: rr, over: rr.Burst}, nil
	}
	if rc := k.remoteOf(c); rc != nil {
		g, err := rc.store.Reserve(ctx, backend.Request{N: n, MaxWait: time.Duration(maxWait), Permits: rr.Cfg.Permits, Period: rr.Cfg.Period, Windows: rr.Wins})
		if err != nil {
			return decision{now: now}, err
		}
		w := max(int64(g.Wait), 0)
		switch g.Verdict {
		case backend.Admitted:
			t := g
			// The end of the reservation's slot, relative to the store's now (t.At - w): the
			// key's TAT after it, unless it took a slot freed below the TAT, which the grant
			// does not tell (Decide's Reset and Remaining then count from the slot's end).
			// A grant with nothing reserved (its slot all 0) leaves the full burst.
			ahead := sat.Add(sat.Sub(t.Next, t.At), w)
			d := decision{now: now, prev: t.Prev, next: t.Next, at: t.At, gen: t.Epoch, wait: w,
				ahead: ahead, c: c, ok: true, remote: true, r: rr, free: -1}
			if t.Full > 0 && rr.NMore > 0 { // the store told the state of every window
				d.ahead, d.free = max(ahead, int64(t.Full)), t.Free
			}
			return d, nil
		case backend.Local:
			d := k.take(ctx, key, r, n, maxWait, rlcore.LocalShare(k.backend)) // the backend's share now
			return d, nil
		}
		// Refused, or a verdict the limiter does not know, which it takes as Refused.
		_, tol := rr.Weight(n)
		ahead := sat.Add(w, tol)
		if rr.NMore > 0 { // until every window's burst is free, when the store told it
			ahead = max(ahead, int64(g.Full))
		}
		return decision{now: now, wait: w, ahead: ahead, remote: true, r: rr}, nil
	}
	return k.take(ctx, key, r, n, maxWait, 1), nil
}

// remoteCellOf returns key's cell, made and bound if needed for the call with ctx, and
// the rate it follows (its own, or r, the limiter's), and marks it used at now. The cell may be evicted meanwhile: its binding still decides,
// and a new binding of the key shares its state in the Backend.
func (k *Limiter[K]) remoteCellOf(ctx context.Context, key K, r *rlcore.Rate) (c *cell, rr *rlcore.Rate, now int64) {
	h := k.hash(key)
	s := k.shardOf(h)
	if e := s.lookup(key, h); e != nil {
		now = k.base.now()
		rr = e.slots.RateOr(r)
		touch(k.remoteOf(&e.cell), rr, now)
		return &e.cell, rr, now
	}
	own := k.limitFor(ctx, key)
	c, _ = k.lockedCell(ctx, s, key, h, own)
	now = k.base.now()
	rr = c.slots.RateOr(r)
	touch(k.remoteOf(c), rr, now)
	s.mu.Unlock()
	return c, rr, now
}

// touch keeps a cell whose binding is rc for one Period after now (at most until the
// largest clock time), if it is bound.
func touch(rc *remoteCell, r *rlcore.Rate, now int64) {
	if rc != nil {
		rc.until.Store(sat.Add(now, int64(r.Cfg.Period)))
	}
}

// bind binds key to the backend for the call with ctx; nil, after a
// backend.EventFailed event (with ctx), when the backend refuses or returns no Store
// (the key then keeps its state in-process).
func (k *Limiter[K]) bind(ctx context.Context, key K) *remoteCell {
	l := k.base
	ks := k.keyString(key)
	st, err := k.backend.Bind(backend.Binding{ID: l.events.ID + ":" + ks, Keyed: true, Key: ks, Clock: l.b.Clk, Listener: l.relay})
	if err == nil && st == nil {
		err = errNoStore
	}
	if err != nil {
		l.events.PublishCtx(ctx, policy.Event{Kind: backend.EventFailed, Err: err, Key: ks})
		return nil
	}
	return &remoteCell{store: st}
}
