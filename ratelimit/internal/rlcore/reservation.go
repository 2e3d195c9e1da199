package rlcore

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Reservation is the data of a ratelimit.Reservation: one or more permits taken ahead of
// their time, from a schedule in-process or from a backend's store.
type Reservation struct {
	Base       *Base         // the limiter's; nil for nothing to give back
	Sched      *Schedule     // the schedule the permits were taken from, when in-process
	Store      backend.Store // the store that granted them, when from a backend; Multi.Store when also from further windows
	Prev, Next int64         // the slot's start and end: the TAT before and after, when appended
	At         int64         // clock time at which the permits are free
	Delay      time.Duration // how long after the call they are free; a refusal's retry-after
	OK         bool          // the reservation holds permits
	Epoch      uint32        // the limiter's conversions before it was granted (Base.Epoch)
	Gen        int64         // the store's Grant.Epoch, when from a store; the Multi's slot, when from further windows
}

// Cancel gives the permits back, as ratelimit.Reservation.Cancel says.
func (r Reservation) Cancel() {
	if !r.OK || r.Base == nil {
		return
	}
	w, windowed := r.Store.(windowsStore)
	if r.Store != nil && !windowed {
		if r.Prev != 0 || r.Next != 0 || r.At != 0 { // a zero slot: admitted with nothing reserved
			r.Store.Cancel(context.Background(), r.Grant())
		}
		return
	}
	// In process: not across a change of rate, which converted the slot with the rest of
	// the schedule.
	r.Base.Conv.RLock()
	defer r.Base.Conv.RUnlock()
	if r.Epoch != r.Base.Epoch.Load() {
		return
	}
	now := r.Base.Now()
	if now > r.At {
		return
	}
	if windowed {
		w.m.giveBack(&r, now)
		return
	}
	r.Sched.GiveBack(r.Prev, r.Next, now)
}

// timeDuration converts ns to a time.Duration.
func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// Grant returns the grant of r, taken from a store, for its Cancel.
func (r Reservation) Grant() backend.Grant {
	return backend.Grant{Verdict: backend.Admitted, Prev: r.Prev, Next: r.Next, At: r.At, Epoch: r.Gen}
}
