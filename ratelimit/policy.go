package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/permitgate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// NewPolicy returns l as a policy of layer Layer, for calls returning T, as a registry
// composes it:
//   - Decorate guards a call with Acquire: it waits within MaxWait for its permit,
//     honouring ctx, and a rejection returns the zero T and l's rejection (matching
//     ErrExceeded, and ctx's error when ctx ended the wait, or policy.ErrNilContext for a
//     nil ctx), without calling the function;
//   - DecorateAsync starts a call whose permit is free now at once; a call whose permit
//     comes within MaxWait is reserved and scheduled to start at its turn with a clock
//     timer, no goroutine waiting; a refusal (no permit within MaxWait, a nil or done ctx,
//     or a deadline before the permit, which reserves nothing) is a failed future with l's
//     rejection. Cancelling the future, or ctx ending, before the call starts stops the
//     timer, the function never runs, and the permit is given back as Reservation.Cancel
//     gives it; the future then fails with async.ErrCanceled (Cancel) or a rejection
//     matching ctx's error. Once started, cancelling the future cancels the function's. A
//     nil future from the function is a future failed with async.ErrNilFuture.
//
// Events are Acquire's, with the call's ctx: a call refused on arrival for its ctx
// publishes nothing. Each call's outcome is recorded once, with ctx: ResultRejected when
// it is refused (at once, or when ctx ends before its turn), ResultAdmitted when the
// function is called or started (Wait = the wait it reserved); a call whose future is
// canceled before its turn records nothing, and a disabled limiter records nothing.
// Decorating costs nothing per call beyond the limiter's own: admitted and rejected calls
// allocate nothing, with a recorder or without.
func NewPolicy[T any](l *Limiter) policy.Policy[T] {
	return decorate.Of(Layer, any(l), permitgate.DecorateFunc[struct{}, T], permitgate.DecorateAsyncFunc[struct{}, T])
}

// gate is a Limiter as the decorators see it (permitgate.Gate).
type gate Limiter

func init() { permitgate.Of = func(inst any) permitgate.Gate { return (*gate)(inst.(*Limiter)) } }

func (g *gate) Acquire(ctx context.Context) error { return (*Limiter)(g).Acquire(ctx) }

func (g *gate) Clock() clock.Clock { return g.base.Clk }

// Admit decides a call that returns a future (see permitgate.Gate). The call of an
// enabled in-process limiter that never waits (MaxWait 0), the common case, is decided
// here, with the rate loaded once and the schedule's take inlined, as TryAcquire does;
// admit decides the others.
func (g *gate) Admit(ctx context.Context) (permitgate.Ticket, error) {
	l := (*Limiter)(g)
	r := l.rate.Load()
	if r == nil || !r.direct || r.MaxWait != 0 {
		return l.admit(ctx, r)
	}
	if err := decorate.ContextErr(ctx); err != nil {
		return nil, l.refuseOnArrival(ctx, err)
	}
	// The permit is free now or the call is refused; ctx's deadline does not matter.
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
			return nil, l.letThrough(ctx, now, wait, l.rej.Plain)
		}
		l.reject(ctx, now, wait, l.rej.Plain)
		return nil, l.rej.Plain
	}
	if l.events.Rec != nil {
		l.admitted(ctx, 0)
	}
	return nil, nil
}

// admit is Admit for a limiter that is disabled, never built, backed by a store, or
// that may wait (MaxWait > 0); r is its rate as loaded (nil for a zero Limiter).
func (l *Limiter) admit(ctx context.Context, r *rate) (permitgate.Ticket, error) {
	if r == nil {
		r = &unbuiltRate
	}
	if r.Cfg.Disabled || !l.built() {
		if err := l.offErr(); err != nil {
			return nil, err
		}
		return nil, decorate.ContextErr(ctx)
	}
	if err := decorate.ContextErr(ctx); err != nil {
		return nil, l.refuseOnArrival(ctx, err)
	}
	if !r.direct {
		res, err := l.reserve(ctx, r, 1)
		if err != nil {
			return nil, err
		}
		if res.Delay == 0 {
			l.admitted(ctx, 0)
			return nil, nil
		}
		l.waiting.Add(1) // until Started or Stopped
		return &ticket{l: l, r: res}, nil
	}
	now := l.now()
	ep := l.base.Epoch.Load() // before the take: a conversion after it makes the epochs differ
	prev, next, wait, err := l.reserveCtx(ctx, r, 1, now)
	if err != nil {
		return nil, err
	}
	if wait == 0 || r.Cfg.Shadow { // in shadow mode, a permit reserved ahead is not waited for
		l.admitted(ctx, 0)
		return nil, nil
	}
	l.publishWaited(ctx, now, wait)
	l.waiting.Add(1) // until Started or Stopped
	return &ticket{l: l, r: l.taken(prev, next, sat.Add(now, wait), time.Duration(wait), ep)}, nil
}

// ticket is the permit of a call that returns a future and waits for it: r, reserved on
// l, counted in l's Waiting until the call starts or stops.
type ticket struct {
	l *Limiter
	r rlcore.Reservation
}

// Delay is how long after its Admit the permit comes.
func (t *ticket) Delay() time.Duration { return t.r.Delay }

// Started records the admission of the call whose permit has come.
func (t *ticket) Started(ctx context.Context) {
	t.l.waiting.Add(-1)
	t.l.admitted(ctx, int64(t.r.Delay))
}

// Stopped gives the permit back for a call that will not start (canceled, or its context
// ended first), as Reservation.Cancel gives it. A call whose context ended is rejected,
// and recorded so; a canceled one records nothing.
func (t *ticket) Stopped(ctx context.Context, cause error) error {
	t.l.waiting.Add(-1)
	t.r.Cancel()
	if cause == async.ErrCanceled {
		return cause
	}
	return t.l.rejectContext(ctx, t.l.now(), 0, cause)
}
