package keyed

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Decision is the outcome of Limiter.Decide: whether a permit was taken, and the state of
// the key's quota that HTTP rate-limit headers report (Retry-After, RateLimit and
// RateLimit-Policy, or X-RateLimit-Limit, -Remaining and -Reset).
type Decision struct {
	// Admitted reports whether a permit was taken.
	Admitted bool
	// Limit is the key's quota: Permits calls per Period, which is also the burst unless
	// a further window has fewer permits (the key's own, for a key with a limit of its
	// own: see PerKey).
	Limit int
	// Period is the period of the key's quota: Limit calls per Period (the key's own, for
	// a key with a limit of its own). 0 only for a zero Limiter, never built.
	Period time.Duration
	// Windows are the further windows of the key's quota, as ratelimit.Config.Windows
	// lists them ("1000/24h"); "" for none.
	Windows string
	// Remaining is how many more calls would pass now without waiting, 0..Limit.
	Remaining int
	// RetryAfter is, for a refused call, how long until the key's next permit is free: a
	// call made after it succeeds unless another call took that permit first. 0 for an
	// admitted call. At most the largest Duration.
	RetryAfter time.Duration
	// Reset is how long until the key's full burst is free again: its TAT minus now, from
	// 0 to the largest Duration. With further windows, until every window's full burst is
	// free: the longest of them (Remaining is then the fewest calls left over them).
	Reset time.Duration
}

// Decide is TryAcquire of one permit that also reports the key's quota after the call:
// what a server sends in its Retry-After and rate-limit headers. It is what per-client
// HTTP middleware asks of the limiter for each request (resiliencehttp.NewMiddleware,
// resiliencegrpc.Limit). Its ratelimit.EventRejected event and its recorded outcome
// (ResultAdmitted, Wait 0, or ResultRejected, with the key) carry ctx (a nil ctx is taken
// as context.Background()), so that a recorder can tie them to the request's trace. ctx
// does not bound the decision, which never waits: a done ctx is decided as any other, and
// with a backend the key's store is asked with ctx's values but without its cancellation.
// Allocations are TryAcquire's, but for a ctx other than context.Background() with a
// backend, which costs one more. A key not equal to itself (see Limiter) is refused, with
// Remaining and RetryAfter 0, and its rejection event carries the R4C-RLM-001 error. A
// disabled limiter admits every call, with Remaining = Limit; a zero Limiter, never built,
// refuses every call, with Limit 0.
func (k *Limiter[K]) Decide(ctx context.Context, key K) Decision { return k.DecideN(ctx, key, 1) }

// DecideN is Decide for a call that takes n permits at once (a request's weight): it
// takes them if they are all free now, else none, and reports the key's quota after the
// call. A call for more than the key's burst (Permits, its own for a key with a limit of
// its own, or the fewest permits of a further window when fewer) is refused with RetryAfter 0 and takes nothing: it can never pass (its
// Decision's Limit tells the burst, and its EventRejected event carries a refusal
// matching ratelimit.ErrExceedsBurst); n < 1 is refused likewise, without an event.
// Allocations are Decide's. Safe for concurrent use. In shadow mode (ratelimit.Shadow) a
// call it would refuse is admitted, taking nothing, with Remaining 0 and RetryAfter 0
// (Reset as without shadow): the headers say the quota is spent while the call goes
// through; its EventRejected carries the attribute shadow, and it is recorded as admitted.
func (k *Limiter[K]) DecideN(ctx context.Context, key K, n int) Decision {
	l := k.lim()
	r := l.cur()
	if r.Cfg.Disabled || !l.built() {
		return Decision{Admitted: l.built() && n >= 1 && n <= r.Limit, Limit: r.Cfg.Permits, Remaining: r.Cfg.Permits,
			Period: r.Cfg.Period, Windows: r.Cfg.Windows}
	}
	ctx = rlcore.OrBackground(ctx)
	if k.check != keysEqual && !k.usable(key) {
		_ = k.refuseBadKey(ctx, key)
		return Decision{Limit: r.Cfg.Permits, Period: r.Cfg.Period, Windows: r.Cfg.Windows}
	}
	if err := k.checkN(r, n); err != nil {
		shadowed := k.refuseCount(ctx, key, r, err) == nil // shadow mode lets it through
		return Decision{Admitted: shadowed, Limit: r.Cfg.Permits, Period: r.Cfg.Period, Windows: r.Cfg.Windows}
	}
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, 0)
	lr := r         // the limiter's: MaxWait, Disabled and Shadow are its own for every key
	if d.r != nil { // the key's own rate, or the limiter's at its local share
		r = d.r
	}
	out := Decision{Admitted: d.ok, Limit: r.Cfg.Permits, Reset: time.Duration(max(d.ahead, 0)),
		Period: r.Cfg.Period, Windows: r.Cfg.Windows}
	if d.over != nil {
		out.Reset = 0
		out.Admitted = k.refuseCount(ctx, key, lr, d.over) == nil // shadow mode lets it through
		return out
	}
	switch {
	case d.ok && d.windowed: // the fewest over the key's windows
		out.Remaining = k.multiOf(d.c).Available(&d.c.slots, r, d.now)
	case d.ok && d.remote && d.free >= 0 && d.r.NMore > 0: // the fewest over the key's windows, as its store told
		out.Remaining = min(d.free, r.Cfg.Permits)
	case d.ok && !d.remote && !d.plain && d.c != nil: // the key's schedule, its freed slots included
		out.Remaining = d.c.slots.Available(d.now, r.Interval, r.Tau, r.Cfg.Permits)
	case d.ok:
		out.Remaining = rlcore.AvailableAt(d.ahead, r.Interval, r.Tau, 0, r.Cfg.Permits)
	case lr.Cfg.Shadow: // let through: nothing taken, nothing left now
		out.Admitted = true
		k.shadowed(ctx, key, d.now, d.wait, l.rej.Plain)
	default:
		out.RetryAfter = time.Duration(max(d.wait, 0))
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return out
	}
	k.admitted(ctx, key, 0)
	return out
}
