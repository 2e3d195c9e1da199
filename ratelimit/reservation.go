package ratelimit

import "time"

// Reservation is a permit taken ahead of its time by Reserve: wait Delay() before acting
// on it, or Cancel() it to give the permit back when no later reservation stands behind
// it. A refused Reservation (Reserve returned an error) holds no permit; its Delay() is
// the retry-after. It is a small value: reserving allocates nothing.
//
// Cancel a Reservation at most once, and not through several copies: the limiter keeps no
// record of each reservation, so a second Cancel could give back a permit that a later
// call has since reserved at the same instant.
type Reservation struct {
	l          *Limiter
	c          *cell // the key's cell, for a permit of a Keyed limiter; nil for l's own
	prev, next int64 // the TAT before and after this reservation
	at         int64 // clock time at which the permit is free
	delay      time.Duration
	ok         bool
	remote     bool // reserved in the limiter's Backend: prev, next and at are its Token
}

// OK reports whether the reservation holds a permit.
func (r Reservation) OK() bool { return r.ok }

// Delay returns how long after the Reserve call the permit is free: 0 means at once. For
// a refused reservation it is the retry-after: the time until the next permit is free; a
// call made after it succeeds unless another call took that permit first.
func (r Reservation) Delay() time.Duration { return r.delay }

// Cancel gives the permit back when it is still the last one reserved and its time has
// not passed: the TAT moves back by T. When later reservations stand behind it, its slot
// is shadowed by them and nothing is restored (restoring it would put two permits at one
// instant, and a window could then see more calls than the rate allows); once its time
// has passed, nothing is restored either. Cancel of a refused reservation does nothing.
// Safe for concurrent use with the limiter; see the type's comment on cancelling twice.
func (r Reservation) Cancel() {
	if !r.ok || r.l == nil {
		return
	}
	if r.c != nil {
		r.c.cancel(r)
		return
	}
	if r.remote {
		r.cancelBackend()
		return
	}
	if r.l.now() > r.at {
		return
	}
	r.l.tat.CompareAndSwap(r.next, r.prev)
}
