package keyed

import (
	"unsafe"

	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// multiOf returns the further windows of c, a cell of a limiter built with windows (its
// entry is a windowedEntry); nil for any other limiter.
func (k *Limiter[K]) multiOf(c *cell) *rlcore.Multi {
	if !k.windowed {
		return nil
	}
	return &(*windowedEntry[K])(unsafe.Pointer(c)).more
}

// kill is c.slots.Kill(idleBy), waiting for its further windows, if any, to be idle too.
func (k *Limiter[K]) kill(c *cell, idleBy int64) bool {
	if m := k.multiOf(c); m != nil {
		return m.Kill(&c.slots, idleBy)
	}
	return c.slots.Kill(idleBy)
}

// decideCell is gcraCell, or for a rate with further windows, the key's schedule and its
// windows decided together (rlcore.Multi), at the cell's own rate if it has one, else at
// r, the limiter's, each at its in-process share (see take). A call for more permits than
// the rate's burst takes nothing: d.over is the refusal. A limiter with a backend keeps
// the windows in its store: its keys' in-process cells, which decide while the store
// answers Local, keep the Permits per Period alone.
func (k *Limiter[K]) decideCell(c *cell, r *rlcore.Rate, n int, now, maxWait int64, share int, d *decision) bool {
	r = c.slots.RateOr(r)
	if n > r.Limit {
		d.now, d.c, d.over, d.r = now, c, r.Burst, r
		return true
	}
	r = r.LocalShare(share)
	d.r = r
	if r.NMore == 0 || !k.windowed {
		return gcraCell(c, r, n, now, maxWait, d)
	}
	d.now, d.c = now, c
	m := k.multiOf(c)
	res, wait, ok := m.Take(&c.slots, r, n, now, maxWait)
	if !ok && res.Prev == rlcore.DeadTAT {
		return false
	}
	d.wait, d.ok, d.windowed = wait, ok, true
	d.prev, d.next, d.at, d.slot = res.Prev, res.Next, res.At, uint8(res.Gen)
	d.ahead = m.Ahead(&c.slots, r, now)
	return true
}
