package rlcore

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// Gate is what the decorators need of a rate limiter, without the calls' types. Package
// ratelimit implements it on its Limiter (GateOf), so that its decorators, which package
// resilience composes for calls of any argument and result, need no exported name.
type Gate interface {
	// Acquire takes a permit for a call, as ratelimit.Limiter.Acquire does.
	Acquire(ctx context.Context) error
	// Admit decides a call that returns a future: an error refuses it (its future fails
	// with the error); a Reservation with no Delay lets it start now (its admission
	// recorded); one with a Delay holds its permit, and the call is counted as waiting
	// until Started or Stopped.
	Admit(ctx context.Context) (Reservation, error)
	// Clock is the limiter's clock, on which a call waits for its permit.
	Clock() clock.Clock
	// Started records the admission of the call with ctx whose permit r has come.
	Started(ctx context.Context, r Reservation)
	// Stopped gives back r, the permit of the call with ctx that will not start (cause
	// is async.ErrCanceled, or the error that ended ctx), and returns the error its
	// future fails with.
	Stopped(ctx context.Context, r Reservation, cause error) error
}

// GateOf returns the Gate of a *ratelimit.Limiter given as inst. Set by package ratelimit
// when it initializes.
var GateOf func(inst any) Gate

// DecorateFunc returns next guarded by the limiter inst (a *ratelimit.Limiter): each call
// takes a permit with Acquire, waiting within MaxWait and ctx, and then calls next; a
// rejection returns the zero T and the limiter's rejection, and next is not called.
func DecorateFunc[A, T any](inst any, next policy.Func[A, T]) policy.Func[A, T] {
	g := GateOf(inst)
	return func(ctx context.Context, a A) (T, error) {
		if err := g.Acquire(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next(ctx, a)
	}
}

// DecorateAsyncFunc returns next guarded by the limiter inst (a *ratelimit.Limiter), for
// calls that return a future: a permit free now starts next at once; a permit within
// MaxWait is reserved, and next is scheduled to start at its turn with a clock timer, no
// goroutine waiting; a refusal is a failed future. Cancelling the future, or ctx ending,
// before the call starts gives the permit back, and next never runs. A nil future from
// next is a future failed with async.ErrNilFuture.
func DecorateAsyncFunc[A, T any](inst any, next policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T] {
	g := GateOf(inst)
	return func(ctx context.Context, a A) *async.Future[T] {
		r, err := g.Admit(ctx)
		if err != nil {
			return async.Failed[T](err)
		}
		if r.Delay == 0 {
			return started(next(ctx, a))
		}
		s := &scheduled[A, T]{g: g, r: r, ctx: ctx, a: a, next: next}
		fut := s.d.Init(g.Clock(), ctx, s, nil)
		s.d.StartAfter(r.Delay)
		return fut
	}
}

// A scheduled call waits for its permit on a clock timer.
type scheduled[A, T any] struct {
	d    async.Delayed[T]
	g    Gate
	r    Reservation
	ctx  context.Context
	a    A
	next policy.AsyncFunc[A, T]
}

// Start starts the call at its permit's time, and records its admission.
func (s *scheduled[A, T]) Start() *async.Future[T] {
	s.g.Started(s.ctx, s.r)
	return started(s.next(s.ctx, s.a))
}

// Stop gives the permit back for a call that will not start (canceled, or its context
// ended first).
func (s *scheduled[A, T]) Stop(cause error) (T, error) {
	var zero T
	return zero, s.g.Stopped(s.ctx, s.r, cause)
}

// started returns f, the future of a call that has started, or a future failed with
// async.ErrNilFuture when f is nil.
func started[T any](f *async.Future[T]) *async.Future[T] {
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}
