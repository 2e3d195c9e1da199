// Package permitgate is how a layer that gives permits (the rate limiter) decorates calls
// of any argument and result: the decorators are generic here, and the layer implements
// Gate, without the calls' types, so that it needs no exported decorator of its own.
// Package resilience composes them; the layer's NewPolicy uses them too.
package permitgate

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
)

// Gate is what the decorators need of the layer's instance.
type Gate interface {
	// Acquire takes a permit for a call, waiting for it within the layer's bounds and
	// ctx; the error refuses the call.
	Acquire(ctx context.Context) error
	// Admit decides a call that returns a future: an error refuses it (its future fails
	// with the error); a nil Ticket lets it start now (its admission recorded); a Ticket
	// holds its permit, which comes after the Ticket's Delay.
	Admit(ctx context.Context) (Ticket, error)
	// Clock is the layer's clock, on which a call waits for its permit.
	Clock() clock.Clock
}

// Ticket is the permit of a call that returns a future and waits for it.
type Ticket interface {
	// Delay is how long after Admit the permit comes.
	Delay() time.Duration
	// Started records the admission of the call with ctx, whose permit has come.
	Started(ctx context.Context)
	// Stopped gives the permit back for the call with ctx, which will not start (cause is
	// async.ErrCanceled, or the error that ended ctx), and returns the error its future
	// fails with.
	Stopped(ctx context.Context, cause error) error
}

// Of returns the Gate of an instance of the layer; set by the layer's package when it
// initializes.
var Of func(inst any) Gate

// DecorateFunc returns next guarded by the gate of inst: each call takes a permit with
// Acquire and then calls next; a refusal returns the zero T and the refusal, and next is
// not called.
func DecorateFunc[A, T any](inst any, next decorate.Func[A, T]) decorate.Func[A, T] {
	g := Of(inst)
	return func(ctx context.Context, a A) (T, error) {
		if err := g.Acquire(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next(ctx, a)
	}
}

// DecorateAsyncFunc returns next guarded by the gate of inst, for calls that return a
// future: a permit free now starts next at once; a permit that comes later is held, and
// next is scheduled to start at its turn with a clock timer, no goroutine waiting; a
// refusal is a failed future. Cancelling the future, or ctx ending, before the call starts
// gives the permit back, and next never runs. A nil future from next is a future failed
// with async.ErrNilFuture.
func DecorateAsyncFunc[A, T any](inst any, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	g := Of(inst)
	return func(ctx context.Context, a A) *async.Future[T] {
		t, err := g.Admit(ctx)
		if err != nil {
			return async.Failed[T](err)
		}
		if t == nil {
			return started(next(ctx, a))
		}
		s := &scheduled[A, T]{t: t, ctx: ctx, a: a, next: next}
		fut := s.d.Init(g.Clock(), ctx, s, nil)
		s.d.StartAfter(t.Delay())
		return fut
	}
}

// A scheduled call waits for its permit on a clock timer.
type scheduled[A, T any] struct {
	d    delay.Delayed[T]
	t    Ticket
	ctx  context.Context
	a    A
	next decorate.AsyncFunc[A, T]
}

// Start starts the call at its permit's time, and records its admission.
func (s *scheduled[A, T]) Start() *async.Future[T] {
	s.t.Started(s.ctx)
	return started(s.next(s.ctx, s.a))
}

// Stop gives the permit back for a call that will not start (canceled, or its context
// ended first).
func (s *scheduled[A, T]) Stop(cause error) (T, error) {
	var zero T
	return zero, s.t.Stopped(s.ctx, cause)
}

// started returns f, the future of a call that has started, or a future failed with
// async.ErrNilFuture when f is nil.
func started[T any](f *async.Future[T]) *async.Future[T] {
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}
