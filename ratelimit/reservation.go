package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Reservation is one or more permits taken ahead of their time by Reserve or ReserveN:
// wait Delay() before acting on them, or Cancel() them to give them back. A refused
// Reservation (Reserve returned an error) holds no permit; its Delay() is the
// retry-after. It is a small value: reserving allocates nothing.
//
// Cancel a Reservation at most once, and not through several copies: the limiter keeps no
// record of each reservation, so a second Cancel could give back permits that a later
// call has since taken in the same slot.
type Reservation struct {
	l          *Limiter
	c          *cell // the key's cell, for a permit of a Keyed limiter; nil for l's own
	prev, next int64 // the TAT before and after this reservation
	at         int64 // clock time at which the permit is free
	delay      time.Duration
	ok         bool
	remote     bool        // reserved in the limiter's Backend: prev, next and at are its Token
	epoch      uint32      // the limiter's conversions before it was granted (Limiter.epoch)
	gen        int64       // the store's Token.Epoch, when remote
	rc         *remoteCell // the key's binding, for a permit of a Keyed limiter's Backend
}

// OK reports whether the reservation holds a permit.
func (r Reservation) OK() bool { return r.ok }

// Delay returns how long after the Reserve call the permit is free: 0 means at once. For
// a refused reservation it is the retry-after: the time until the next permit is free; a
// call made after it succeeds unless another call took that permit first.
func (r Reservation) Delay() time.Duration { return r.delay }

// Cancel gives the permits back, as long as their time has not passed: once it has, the
// caller is taken to have used them and nothing is restored. When the reservation is the
// last one, the TAT moves back over it; when later reservations stand behind it, its
// slot of the schedule stays free, and the next call that fits there takes it before any
// later slot: its permits come back, at the time they had, without moving the later
// reservations. So canceling never puts more permits in a window than the rate allows.
// At most 16 separate freed slots are kept (freed slots that touch are joined): a cancel
// that would make a 17th separate one gives nothing back, so that no number of canceled
// reservations makes the limiter's calls slower. Cancel of a refused reservation does
// nothing. With a Backend, the store gives them back on its own clock (the Redis store
// as here, with the same bound per name).
// Safe for concurrent use with the limiter; see the type's comment on cancelling twice.
func (r Reservation) Cancel() {
	if !r.ok || r.l == nil {
		return
	}
	if r.rc != nil {
		r.rc.store.Cancel(context.Background(), r.grant())
		return
	}
	if r.remote {
		r.cancelBackend()
		return
	}
	// In process: not across a change of rate, which converted the slot with the rest of
	// the schedule (SPEC RC-4).
	r.l.conv.RLock()
	defer r.l.conv.RUnlock()
	if r.epoch != r.l.epoch.Load() {
		return
	}
	if r.c != nil {
		r.c.cancel(r)
		return
	}
	now := r.l.now()
	if now > r.at {
		return
	}
	r.l.slots.giveBack(r.prev, r.next, now)
}

// grant returns the Grant of r, reserved in a Backend's store, for its Cancel.
func (r Reservation) grant() backend.Grant {
	return backend.Grant{Verdict: backend.Reserved, Prev: r.prev, Next: r.next, At: r.at, Epoch: r.gen}
}
