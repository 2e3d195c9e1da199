package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// TryAcquire takes a permit that is free now and reports whether it did; it never waits,
// whatever MaxWait is. A refusal publishes an EventRejected event. Its outcome is
// recorded with context.Background(): ResultAdmitted (Wait 0) or ResultRejected. It never
// allocates. A disabled limiter always returns true; a zero Limiter, never built, false.
func (l *Limiter) TryAcquire() bool {
	r := l.rate.Load()
	if r == nil || !r.direct {
		r = l.cur()
		return r.other.tryAcquire(l, r, 1) == nil
	}
	// The clock read and the schedule's take, inlined: this is the hottest path.
	var now int64
	if l.base.System {
		now = int64(sysclock.Now())
	} else {
		now = int64(l.base.Clk.Now())
	}
	var wait int64
	var ok bool
	if l.slots.None() {
		_, _, wait, ok = rlcore.GCRA(&l.slots.TAT, r.Interval, r.Tau, now, 0)
	} else {
		_, _, wait, ok = l.slots.TakeFreed(now, r.Interval, r.Tau, 0)
	}
	if !ok { // refuse, written out so that reject inlines here
		if r.Cfg.Shadow {
			return l.letThrough(context.Background(), now, wait, l.rej.Plain) == nil
		}
		l.reject(context.Background(), now, wait, l.rej.Plain)
		return false
	}
	l.admitted(context.Background(), 0)
	return true
}

// TryAcquireN takes n permits that are free now, all of them or none, and never waits,
// whatever MaxWait is. It returns nil when they are the caller's, or:
//   - the limiter's rejection, matching ErrExceeded, when they are not all free now;
//   - a refusal matching ErrExceedsBurst (and not ErrExceeded), when n is more than
//     Permits: such a call can never pass, and takes nothing;
//   - a *policy.ConfigError with code R4C-ATR-003 when n < 1.
//
// n = Permits passes on a full bucket. A refusal publishes an EventRejected event. Its
// outcome is recorded as TryAcquire's, a refusal for more than the burst as a
// ResultRejected (n < 1 is no decision: nothing is recorded). It never allocates. A
// disabled limiter lets every n from 1 to Permits pass; a zero Limiter, never built,
// refuses every call.
func (l *Limiter) TryAcquireN(n int) error {
	r := l.cur()
	if err := r.check(n); err != nil {
		return l.refuseCount(context.Background(), r, err)
	}
	if !r.direct {
		return r.other.tryAcquire(l, r, n)
	}
	now := l.now()
	inc, tol := r.Weight(n)
	if _, _, wait, ok := l.slots.Take(now, inc, tol, 0); !ok {
		return l.refuse(context.Background(), r, now, wait, l.rej.Plain)
	}
	l.admitted(context.Background(), 0)
	return nil
}

// Acquire takes a permit, waiting for it on the caller's goroutine through the clock when
// it comes within MaxWait. MaxWait bounds the wait even when ctx would allow more: with
// the default MaxWait of 0, Acquire never waits; with MaxWait(math.MaxInt64) it waits as
// long as ctx allows. It returns nil once the permit is the caller's, or the limiter's
// rejection, which matches ErrExceeded:
//   - at once, without reserving, when no permit comes within MaxWait;
//   - at once, without reserving, when ctx is nil (the error also matches
//     policy.ErrNilContext), already done, or its deadline comes before the permit would
//     (the error also matches ctx's error);
//   - when ctx ends during the wait: the permit is given back as Reservation.Cancel gives
//     it, and the error also matches ctx's error.
//
// A wait publishes an EventWaited event, a rejection an EventRejected event
// (with the retry-after, when known), except the refusal of a call whose ctx is nil or
// already done when it arrives, which publishes nothing. Events go out with ctx. The
// outcome is recorded once, with ctx, when it is known: ResultAdmitted once the permit is
// the caller's (Wait = the wait it reserved, 0 when none), or ResultRejected, also for a
// nil or done ctx on arrival (a nil ctx is recorded as context.Background()). Acquire
// allocates nothing unless it has to wait. With MaxWait > 0 and a ctx that has a
// deadline, it reads the real time left once more (with a manual clock, the virtual wait
// is compared with that real time). A disabled limiter returns nil at once, but for a nil
// or done ctx, whose error it returns as is; a zero Limiter, never built, a rejection
// matching ErrExceeded.
func (l *Limiter) Acquire(ctx context.Context) error { return l.acquire(ctx, l.cur(), 1) }

// AcquireN is Acquire for n permits, taken together: the call waits until all n are free,
// within MaxWait and ctx, and a call whose ctx ends during the wait gives all n back. A
// call for more than Permits fails at once with a refusal matching ErrExceedsBurst
// (and not ErrExceeded), taking nothing; n < 1 with a *policy.ConfigError, code
// R4C-ATR-003. Events, outcomes and allocations are Acquire's (that refusal is recorded
// as a ResultRejected; n < 1 is not recorded).
func (l *Limiter) AcquireN(ctx context.Context, n int) error {
	r := l.cur()
	if err := r.check(n); err != nil {
		return l.refuseCount(ctx, r, err)
	}
	return l.acquire(ctx, r, n)
}

func (l *Limiter) acquire(ctx context.Context, r *rate, n int) error {
	if !r.direct {
		if ctx == nil && !r.Cfg.Disabled && l.built() { // with a backend: refused before its store is asked
			return l.refuseOnArrival(ctx, policy.ErrNilContext)
		}
		return r.other.acquire(ctx, l, r, n)
	}
	if err := decorate.ContextErr(ctx); err != nil {
		return l.refuseOnArrival(ctx, err)
	}
	ep := l.base.Epoch.Load()
	now := l.now()
	prev, next, wait, err := l.reserveCtx(ctx, r, n, now)
	if err != nil {
		return err
	}
	if wait == 0 || r.Cfg.Shadow { // in shadow mode, a permit reserved ahead is not waited for
		l.admitted(ctx, 0)
		return nil
	}
	return l.sleep(ctx, prev, next, now, wait, ep)
}

// waitFor waits the Delay of res, reserved for the call with ctx (and published as its
// wait), counted in Waiting; then it records the call admitted. When ctx ends first, it
// cancels res and returns the rejection.
func (l *Limiter) waitFor(ctx context.Context, res rlcore.Reservation) error {
	l.waiting.Add(1)
	err := l.base.Clk.Sleep(ctx, res.Delay)
	l.waiting.Add(-1)
	if err != nil {
		res.Cancel()
		return l.rejectContext(ctx, l.eventTime(), 0, err)
	}
	l.admitted(ctx, int64(res.Delay))
	return nil
}

// sleep waits wait from now for the permit the call with ctx reserved (the TAT moved
// from prev to next, after ep conversions), and gives it back if ctx ends first. Apart from acquire, so that
// the calls that do not wait run no code of it.
func (l *Limiter) sleep(ctx context.Context, prev, next, now, wait int64, ep uint32) error {
	l.publishWaited(ctx, now, wait)
	l.waiting.Add(1)
	err := l.base.Clk.Sleep(ctx, time.Duration(wait))
	l.waiting.Add(-1)
	if err != nil {
		l.taken(prev, next, sat.Add(now, wait), 0, ep).Cancel()
		return l.rejectContext(ctx, l.now(), 0, err)
	}
	l.admitted(ctx, wait)
	return nil
}

// reserveCtx takes n permits within MaxWait and, when ctx has a deadline, before it: a
// permit that would come after the deadline is useless, and is refused unreserved. A
// refusal is published and recorded, and returned as the rejection to give: the limiter's
// plain one, or the one that also matches context.DeadlineExceeded. A permit
// reserved is not recorded: the caller records it once the call is let through. With
// MaxWait > 0 and a deadline, it reads the real time left: with a manual clock, the
// virtual wait is compared with the real time left before the deadline. In shadow mode, a
// refusal is published as shadowed and the call is let through: it reserves nothing, and
// the result is all zeros with a nil error.
func (l *Limiter) reserveCtx(ctx context.Context, r *rate, n int, now int64) (prev, next, wait int64, err error) {
	limit, byDeadline := rlcore.WaitLimit(ctx, r.MaxWait)
	inc, tol := r.Weight(n)
	var ok bool
	if l.slots.None() { // take, inlined: Acquire's path
		prev, next, wait, ok = rlcore.GCRA(&l.slots.TAT, inc, tol, now, limit)
	} else {
		prev, next, wait, ok = l.slots.TakeFreed(now, inc, tol, limit)
	}
	if ok {
		return prev, next, wait, nil
	}
	err = l.rej.Plain
	if rlcore.AfterDeadline(wait, limit, byDeadline, r.MaxWait) {
		err = l.rej.ForContext(context.DeadlineExceeded)
	}
	if r.Cfg.Shadow {
		l.shadowed(ctx, now, wait, err)
		return 0, 0, 0, nil
	}
	l.reject(ctx, now, wait, err)
	return prev, next, wait, err
}
