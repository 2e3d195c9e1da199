package ratelimit

import (
	"context"
	"time"
)

// Decision is the outcome of Keyed.Decide: whether a permit was taken, and the state of
// the key's quota that HTTP rate-limit headers report (Retry-After, RateLimit and
// RateLimit-Policy, or X-RateLimit-Limit, -Remaining and -Reset).
type Decision struct {
	// Admitted reports whether a permit was taken.
	Admitted bool
	// Limit is the quota: Permits calls per Period, which is also the burst.
	Limit int
	// Remaining is how many more calls would pass now without waiting, 0..Limit.
	Remaining int
	// RetryAfter is, for a refused call, how long until the key's next permit is free: a
	// call made after it succeeds unless another call took that permit first. 0 for an
	// admitted call. At most the largest Duration.
	RetryAfter time.Duration
	// Reset is how long until the key's full burst is free again: its TAT minus now, from
	// 0 to the largest Duration.
	Reset time.Duration
}

// Decide is TryAcquire that also reports the key's quota after the call: what a server
// sends in its Retry-After and rate-limit headers. It is what per-client HTTP middleware
// asks of the limiter for each request. Events, outcomes and allocations are
// TryAcquire's: its event and its outcome (ResultAdmitted, Wait 0, or ResultRejected, with
// the key) go out with context.Background(); DecideContext gives them the request's
// context. A key not equal to itself (see Keyed) is refused, with Remaining and RetryAfter
// 0, and its rejection event carries the CodeBadKey error. A disabled limiter admits
// every call, with Remaining = Limit; a zero Keyed, never built, refuses every call, with
// Limit 0.
func (k *Keyed[K]) Decide(key K) Decision { return k.DecideContext(context.Background(), key) }

// DecideContext is Decide for the request whose context is ctx: its EventRejected
// event and its recorded outcome carry ctx (a nil ctx is taken as context.Background()),
// so that a recorder can tie them to the request's trace. ctx does not bound the
// decision, which never waits: a done ctx is decided as any other, and with a Backend the
// key's store is asked with ctx's values but without its cancellation. Allocations are
// Decide's, but for a ctx other than context.Background() with a Backend, which costs
// one more.
func (k *Keyed[K]) DecideContext(ctx context.Context, key K) Decision {
	l := k.lim()
	r := l.cur()
	if r.cfg.Disabled || !l.built() {
		return Decision{Admitted: l.built(), Limit: r.cfg.Permits, Remaining: r.cfg.Permits}
	}
	ctx = orBackground(ctx)
	if k.check != keysEqual && !k.usable(key) {
		_ = k.refuseBadKey(ctx, key)
		return Decision{Limit: r.cfg.Permits}
	}
	key = k.bounded(key)
	d := k.decide(ctx, key, r, 1, 0)
	if d.shared {
		r = r.localShare(k.share)
	}
	out := Decision{Admitted: d.ok, Limit: r.cfg.Permits, Reset: time.Duration(max(d.ahead, 0))}
	switch {
	case d.ok && !d.remote && !d.plain && d.c != nil: // the key's schedule, its freed slots included
		out.Remaining = d.c.slots.available(d.now, r.interval, r.tau, r.cfg.Permits)
	case d.ok:
		out.Remaining = gcraAvailable(d.ahead, r.interval, r.tau, 0, r.cfg.Permits)
	default:
		out.RetryAfter = time.Duration(max(d.wait, 0))
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return out
	}
	k.admitted(ctx, key, 0)
	return out
}
