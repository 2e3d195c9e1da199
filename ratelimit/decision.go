package ratelimit

import "time"

// Decision is the outcome of Keyed.Decide: whether a permit was taken, and the state of
// the key's quota that HTTP rate-limit headers report.
type Decision struct {
	// Admitted reports whether a permit was taken.
	Admitted bool
	// Remaining is how many more calls would pass now without waiting, 0..Permits.
	Remaining int
	// RetryAfter is, for a refused call, how long until the key's next permit is free: a
	// call made after it succeeds unless another call took that permit first. 0 for an
	// admitted call.
	RetryAfter time.Duration
	// Reset is how long until the key's full burst is free again: its TAT minus now, ≥ 0.
	Reset time.Duration
}

// Decide is TryAcquire that also reports the key's quota after the call: what a server
// sends in its Retry-After and rate-limit headers. Events and allocations are
// TryAcquire's. A disabled limiter admits every call, with Remaining = Permits.
func (k *Keyed[K]) Decide(key K) Decision {
	l := k.base
	if !l.enabled {
		return Decision{Admitted: true, Remaining: l.cfg.Permits}
	}
	var d decision
	if k.backend != nil {
		d = k.takeRemote(key, 0)
	} else {
		d = k.take(key, 0)
	}
	out := Decision{Admitted: d.ok, Reset: time.Duration(max(d.ahead, 0))}
	if d.ok {
		out.Remaining = gcraAvailable(d.ahead, l.interval, l.tau, 0, l.cfg.Permits)
	} else {
		out.RetryAfter = time.Duration(max(d.wait, 0))
		l.publishRejected(d.now, d.wait, l.rej.Plain)
	}
	return out
}
