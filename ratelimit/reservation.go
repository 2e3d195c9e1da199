package ratelimit

import (
	"time"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Reservation is one or more permits taken ahead of their time by Reserve or ReserveN (of
// a Limiter, or of a keyed limiter of package ratelimit/keyed):
// wait Delay() before acting on them, or Cancel() them to give them back. A refused
// Reservation (Reserve returned an error) holds no permit; its Delay() is the
// retry-after. It is a small value: reserving allocates nothing.
//
// Cancel a Reservation at most once, and not through several copies: the limiter keeps no
// record of each reservation, so a second Cancel could give back permits that a later
// call has since taken in the same slot.
type Reservation struct{ r rlcore.Reservation }

// Delay returns how long after the Reserve call the permit is free: 0 means at once. For
// a refused reservation it is the retry-after: the time until the next permit is free; a
// call made after it succeeds unless another call took that permit first.
func (r Reservation) Delay() time.Duration { return r.r.Delay }

// Cancel gives the permits back, as long as their time has not passed: once it has, the
// caller is taken to have used them and nothing is restored. When the reservation is the
// last one, the TAT moves back over it; when later reservations stand behind it, its
// slot of the schedule stays free, and the next call that fits there takes it before any
// later slot: its permits come back, at the time they had, without moving the later
// reservations. So canceling never puts more permits in a window than the rate allows.
// At most 16 separate freed slots are kept (freed slots that touch are joined): a cancel
// that would make a 17th separate one gives nothing back, so that no number of canceled
// reservations makes the limiter's calls slower. Cancel of a refused reservation does
// nothing. With a backend, the store gives them back on its own clock (the Redis store
// as here, with the same bound per name). With further windows (Windows), a Cancel gives
// back on each window only when the reservation is still the last one there (and, on the
// further windows, one of the 4 latest reservations): a canceled reservation with later
// ones behind it gives nothing back while the windows are on.
// Safe for concurrent use with the limiter; see the type's comment on cancelling twice.
func (r Reservation) Cancel() { r.r.Cancel() }

// taken returns the reservation of permits taken from l's schedule: the slot [prev, next),
// free at clock time at, delay after the call, granted after ep conversions.
func (l *Limiter) taken(prev, next, at int64, delay time.Duration, ep uint32) rlcore.Reservation {
	return rlcore.Reservation{Base: &l.base, Sched: &l.slots, Prev: prev, Next: next, At: at, Delay: delay, OK: true, Epoch: ep}
}

// granted returns the reservation of the permits l's store granted with g.
func (l *Limiter) granted(g backend.Grant) rlcore.Reservation {
	return rlcore.Reservation{Base: &l.base, Store: l.store, Prev: g.Prev, Next: g.Next, At: g.At, Delay: g.Wait, OK: true, Gen: g.Epoch}
}

func init() {
	rlcore.WrapReservation = func(r rlcore.Reservation) Reservation { return Reservation{r} }
}
