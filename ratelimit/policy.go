package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// NewPolicy returns l as a policy of layer Layer, for calls returning T. Its
// sync decoration uses Acquire; its async decoration schedules the call for its permit on
// the clock, with no goroutine waiting. Decorating costs nothing per call beyond the
// limiter's own.
func NewPolicy[T any](l *Limiter) policy.Policy[T] {
	return decorate.Of(Layer, l, DecorateFunc[struct{}, T], DecorateAsyncFunc[struct{}, T])
}

// DecorateFunc returns next guarded by l: each call takes a permit with Acquire (waiting
// within MaxWait, honouring ctx) and then calls next; a rejection returns the zero T and
// l's rejection (matching ErrExceeded, and ctx's error when ctx ended the wait, or
// policy.ErrNilContext for a nil ctx), and next is not called. Events and outcomes are
// Acquire's: each call's outcome is recorded once, with ctx, before next is called or the
// rejection returned. Admitted and rejected calls allocate nothing, with a recorder or
// without.
func DecorateFunc[A, T any](l *Limiter, next decorate.Func[A, T]) decorate.Func[A, T] {
	return func(ctx context.Context, a A) (T, error) {
		if err := l.Acquire(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next(ctx, a)
	}
}

// DecorateAsyncFunc returns next guarded by l for calls that return a future:
//   - a permit free now starts next at once;
//   - a permit within MaxWait is reserved, and next is scheduled to start at its turn with
//     a clock timer: no goroutine waits;
//   - no permit within MaxWait, a nil ctx, a ctx already done, or a ctx whose deadline
//     comes before the permit (nothing is reserved then) is a failed future with l's
//     rejection, which also matches policy.ErrNilContext or ctx's error;
//   - cancelling the returned future, or ctx ending, before the call starts stops the
//     timer, next never runs, and the permit is given back as Reservation.Cancel gives
//     it (the calls behind it keep their turns); the future then fails with async.ErrCanceled (Cancel) or a rejection matching ctx's error.
//     Once started, cancelling the future cancels next's future;
//   - a nil future from next is a future failed with async.ErrNilFuture.
//
// Events are Acquire's, with ctx: a call refused on arrival for its ctx publishes nothing.
// Each call's outcome is recorded once, with ctx: ResultRejected when it is refused (at
// once, or when ctx ends before its turn), ResultAdmitted when next starts (Wait = the
// wait it reserved, 0 when it starts at once). A call whose future is canceled before its
// turn was neither let through nor refused: nothing is recorded for it. A disabled
// limiter records nothing.
func DecorateAsyncFunc[A, T any](l *Limiter, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return func(ctx context.Context, a A) *async.Future[T] {
		r := l.cur()
		if r.cfg.Disabled || !l.built() {
			if err := l.offErr(); err != nil {
				return async.Failed[T](err)
			}
			if err := decorate.ContextErr(ctx); err != nil {
				return async.Failed[T](err)
			}
			return started(next(ctx, a))
		}
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](l.refuseOnArrival(ctx, err))
		}
		if !r.direct {
			res, err := l.reserve(ctx, r, 1)
			if err != nil {
				return async.Failed[T](err)
			}
			if res.Delay() == 0 {
				l.admitted(ctx, 0)
				return started(next(ctx, a))
			}
			return schedule(l, res, ctx, a, next)
		}
		now := l.now()
		if r.maxWait == 0 {
			// reserveCtx with MaxWait 0: the permit is free now or the call is refused,
			// and ctx's deadline does not matter.
			_, _, wait, ok := l.slots.take(now, r.interval, r.tau, 0)
			if !ok {
				l.reject(ctx, now, wait, l.rej.Plain)
				return async.Failed[T](l.rej.Plain)
			}
			if l.events.Rec != nil {
				l.admitted(ctx, 0)
			}
			if f := next(ctx, a); f != nil {
				return f
			}
			return async.Failed[T](async.ErrNilFuture)
		}
		ep := l.epoch.Load() // before the take: a conversion after it makes the epochs differ
		prev, nextTAT, wait, err := l.reserveCtx(ctx, r, 1, now)
		if err != nil {
			return async.Failed[T](err)
		}
		if wait == 0 {
			l.admitted(ctx, 0)
			return started(next(ctx, a))
		}
		l.publishWaited(ctx, now, wait)
		res := Reservation{l: l, prev: prev, next: nextTAT, at: sat.Add(now, wait), delay: time.Duration(wait), ok: true, epoch: ep}
		return schedule(l, res, ctx, a, next)
	}
}

// A scheduled call waits for its permit on a clock timer.
type scheduled[A, T any] struct {
	d    delay.Delayed[T]
	l    *Limiter
	r    Reservation
	ctx  context.Context
	a    A
	next decorate.AsyncFunc[A, T]
}

func schedule[A, T any](l *Limiter, r Reservation, ctx context.Context, a A, next decorate.AsyncFunc[A, T]) *async.Future[T] {
	s := &scheduled[A, T]{l: l, r: r, ctx: ctx, a: a, next: next}
	l.waiting.Add(1) // until Start or Stop
	fut := s.d.Init(l.clk, ctx, s, nil)
	s.d.StartAfter(r.Delay())
	return fut
}

// Start starts the call at its permit's time, and records its admission.
func (s *scheduled[A, T]) Start() *async.Future[T] {
	s.l.waiting.Add(-1)
	s.l.admitted(s.ctx, int64(s.r.Delay()))
	return started(s.next(s.ctx, s.a))
}

// started returns f, the future of a call that has started, or a future failed with
// async.ErrNilFuture when f is nil.
func started[T any](f *async.Future[T]) *async.Future[T] {
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}

// Stop gives the permit back for a call that will not start (canceled, or its context
// ended first), as Reservation.Cancel gives it. A call whose context ended is rejected,
// and recorded so; a canceled one records nothing.
func (s *scheduled[A, T]) Stop(cause error) (T, error) {
	s.l.waiting.Add(-1)
	s.r.Cancel()
	var zero T
	if cause == async.ErrCanceled {
		return zero, cause
	}
	return zero, s.l.rejectContext(s.ctx, s.l.now(), 0, cause)
}
