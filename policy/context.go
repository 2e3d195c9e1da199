package policy

import (
	"context"
	"errors"

	"github.com/resilience4go/resilience4go/async"
)

// ErrNilContext is the error of a call made with a nil context.Context. Every policy
// returns it (wrapped in its rejection, where it has one) instead of panicking, and never
// runs the function.
var ErrNilContext = errors.New("resilience4go: nil context.Context")

// ContextErr is the check every policy makes when a call arrives: ErrNilContext for a nil
// ctx, ctx.Err() otherwise. A call for which it is not nil must not run the function nor
// take anything (a permit, a slot, a half-open trial, an attempt).
func ContextErr(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	return ctx.Err()
}

// Guard returns next behind the arrival check alone: a call with a nil or done ctx gets
// ContextErr's error and never reaches next. It is what a disabled policy decorates a
// call with, and what a composition with no policy is.
func Guard[A, T any](next Func[A, T]) Func[A, T] {
	return func(ctx context.Context, a A) (T, error) {
		if err := ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		return next(ctx, a)
	}
}

// GuardAsync is Guard for calls that return a future: a call with a nil or done ctx gets
// a future failed with ContextErr's error, and a nil future from next becomes a future
// failed with async.ErrNilFuture.
func GuardAsync[A, T any](next AsyncFunc[A, T]) AsyncFunc[A, T] {
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		if f := next(ctx, a); f != nil {
			return f
		}
		return async.Failed[T](async.ErrNilFuture)
	}
}
