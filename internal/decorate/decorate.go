// Package decorate is what the policies build their decorators on: the one-argument call
// shapes every policy decorates (Func, AsyncFunc), the arrival check every policy makes
// (ContextErr, Guard, GuardAsync), the adapter that makes a policy.Policy[T] out of a
// policy's generic decorators (Decorators, Of), and the choice between them by call shape
// that each policy's Decorate makes (Dispatch).
package decorate

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
)

// Func is a call with one argument: the shape in which every policy decorates calls, so
// that wrapped functions of any arity share one composition, built once, without boxing
// their arguments into a closure per call. Functions of more arguments pass a struct of
// them as A; functions of none pass struct{}.
type Func[A, T any] func(ctx context.Context, a A) (T, error)

// AsyncFunc is Func for calls that return a future.
type AsyncFunc[A, T any] func(ctx context.Context, a A) *async.Future[T]

// Decorators makes a policy.Policy[T] out of a policy's generic decorators, instantiated
// for calls with no argument. All three fields must be set.
type Decorators[T any] struct {
	L     policy.Layer                                             // the policy's layer
	Sync  func(next Func[struct{}, T]) Func[struct{}, T]           // guards synchronous calls
	Async func(next AsyncFunc[struct{}, T]) AsyncFunc[struct{}, T] // guards calls returning a future
}

var _ policy.Policy[int] = Decorators[int]{}

// Layer returns d.L.
func (d Decorators[T]) Layer() policy.Layer { return d.L }

// Decorate returns next guarded by d.Sync.
func (d Decorators[T]) Decorate(next policy.Call[T]) policy.Call[T] {
	f := d.Sync(func(ctx context.Context, _ struct{}) (T, error) { return next(ctx) })
	return func(ctx context.Context) (T, error) { return f(ctx, struct{}{}) }
}

// DecorateAsync returns next guarded by d.Async.
func (d Decorators[T]) DecorateAsync(next policy.AsyncCall[T]) policy.AsyncCall[T] {
	f := d.Async(func(ctx context.Context, _ struct{}) *async.Future[T] { return next(ctx) })
	return func(ctx context.Context) *async.Future[T] { return f(ctx, struct{}{}) }
}

// Of makes a policy.Policy[T] out of a policy instance p of layer l and its generic
// decorators sync and async, instantiated for calls with no argument
// (A = struct{}), as each policy package's NewPolicy does.
func Of[T, P any](l policy.Layer, p P, sync func(P, Func[struct{}, T]) Func[struct{}, T], async func(P, AsyncFunc[struct{}, T]) AsyncFunc[struct{}, T]) policy.Policy[T] {
	return Decorators[T]{
		L:     l,
		Sync:  func(next Func[struct{}, T]) Func[struct{}, T] { return sync(p, next) },
		Async: func(next AsyncFunc[struct{}, T]) AsyncFunc[struct{}, T] { return async(p, next) },
	}
}

// Dispatch decorates next, a Func or an AsyncFunc as F says, with policy instance p's
// decorator for that shape, sync or async: it is the whole body of each policy package's
// Decorate, e.g. return decorate.Dispatch(b, next, decorateFunc[A, T],
// decorateAsyncFunc[A, T]). It is called when a composition is built, not per call.
func Dispatch[F Func[A, T] | AsyncFunc[A, T], P, A, T any](p P, next F, sync func(P, Func[A, T]) Func[A, T], async func(P, AsyncFunc[A, T]) AsyncFunc[A, T]) F {
	if f, ok := any(next).(Func[A, T]); ok {
		return any(sync(p, f)).(F)
	}
	return any(async(p, any(next).(AsyncFunc[A, T]))).(F)
}

// Start calls next(ctx, a) and returns its future, a nil one as a future failed with
// async.ErrNilFuture. If next panics, undo runs (to give back what the call held) and
// the panic goes on.
func Start[A, T any](next AsyncFunc[A, T], ctx context.Context, a A, undo func()) *async.Future[T] {
	ok := false
	defer func() {
		if !ok {
			undo()
		}
	}()
	f := next(ctx, a)
	ok = true
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}

// ContextErr is the check every policy makes when a call arrives: policy.ErrNilContext for
// a nil ctx, ctx.Err() otherwise. A call for which it is not nil must not run the function
// nor take anything (a permit, a slot, a half-open trial, an attempt).
func ContextErr(ctx context.Context) error {
	if ctx == nil {
		return policy.ErrNilContext
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
