package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Reserve takes the next permit if it comes within MaxWait, without waiting for it, and
// returns its Reservation: wait Delay() before the call, or Cancel() it to give the permit
// back. When the permit does not come within MaxWait, nothing is reserved and Reserve
// returns the limiter's rejection (matching ErrExceeded) together with a refused
// Reservation whose Delay() is the time until the next permit is free: the retry-after.
// A delayed reservation publishes EventWaited, a refusal EventRejected. Its
// outcome is recorded with context.Background() when it is made: ResultAdmitted with
// Wait = Delay(), or ResultRejected (a later Cancel records nothing). Reserve never
// allocates. A disabled limiter returns a reservation with no delay; a zero Limiter,
// never built, a refused Reservation and a rejection matching ErrExceeded.
func (l *Limiter) Reserve() (Reservation, error) { return l.reserveOne(l.cur(), 1) }

// ReserveN is Reserve for n permits, taken together: its Delay is how long until all n
// are free, and Cancel gives all n back. A refused ReserveN's Delay is how long until n
// permits are free. A call for more than Permits fails at once with a refused Reservation
// (Delay 0) and a refusal matching ErrExceedsBurst (and not ErrExceeded), taking
// nothing; n < 1 with a *policy.ConfigError, code R4C-ATR-003. Events, outcomes and
// allocations are Reserve's (a refusal for more than the burst is recorded as a
// ResultRejected; n < 1 is not recorded).
func (l *Limiter) ReserveN(n int) (Reservation, error) {
	r := l.cur()
	if err := r.check(n); err != nil {
		if err := l.refuseCount(context.Background(), r, err); err != nil {
			return Reservation{}, err
		}
		return Reservation{rlcore.Reservation{OK: true}}, nil // shadow mode: let through, holding nothing
	}
	return l.reserveOne(r, n)
}

// reserveOne is Reserve and ReserveN: reserve, and the admission recorded.
func (l *Limiter) reserveOne(r *rate, n int) (Reservation, error) {
	res, err := l.reserve(context.Background(), r, n)
	if l.events.Rec != nil && err == nil && !r.Cfg.Disabled {
		l.admitted(context.Background(), int64(res.Delay))
	}
	return Reservation{res}, err
}

// reserve takes n permits within MaxWait for the call with ctx, without waiting for
// them. Its events go out with ctx, and a refusal is recorded; a permit reserved is not:
// the caller records it. In shadow mode, a refusal is published as shadowed and returns a
// reservation that holds nothing, and a reservation's Delay is 0: the call does not wait.
func (l *Limiter) reserve(ctx context.Context, r *rate, n int) (rlcore.Reservation, error) {
	if !r.direct {
		return r.other.reserve(ctx, l, r, n)
	}
	ep := l.base.Epoch.Load()
	now := l.now()
	inc, tol := r.Weight(n)
	prev, next, wait, ok := l.slots.Take(now, inc, tol, r.MaxWait)
	if !ok {
		return l.refuseReserve(ctx, r, now, wait, l.rej.Plain)
	}
	res := l.taken(prev, next, sat.Add(now, wait), time.Duration(wait), ep)
	return res, l.delayed(ctx, r, now, &res)
}

// refuseReserve is the refusal at now of a reservation of the call with ctx, with err and
// the retry-after wait: published and recorded, a refused reservation and err; in shadow
// mode (r's), published as shadowed, a reservation that holds nothing and nil.
func (l *Limiter) refuseReserve(ctx context.Context, r *rate, now, wait int64, err error) (rlcore.Reservation, error) {
	if r.Cfg.Shadow {
		l.shadowed(ctx, now, wait, err)
		return rlcore.Reservation{OK: true}, nil
	}
	l.reject(ctx, now, wait, err)
	return rlcore.Reservation{Delay: time.Duration(wait)}, err
}

// delayed publishes, at now, the wait of res, reserved by the call with ctx, if it has
// one; in shadow mode (r's) it publishes nothing and makes res's Delay 0, the call not
// waiting. It returns nil.
func (l *Limiter) delayed(ctx context.Context, r *rate, now int64, res *rlcore.Reservation) error {
	if res.Delay > 0 {
		if r.Cfg.Shadow {
			res.Delay = 0
		} else {
			l.publishWaited(ctx, now, int64(res.Delay))
		}
	}
	return nil
}
