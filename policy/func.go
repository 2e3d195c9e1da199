package policy

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// Func is a call with one argument: the shape in which every policy decorates calls, so
// that wrapped functions of any arity share one composition, built once, without boxing
// their arguments into a closure per call. Functions of more arguments pass a struct of
// them as A; functions of none pass struct{}.
type Func[A, T any] func(ctx context.Context, a A) (T, error)

// AsyncFunc is Func for calls that return a future.
type AsyncFunc[A, T any] func(ctx context.Context, a A) *async.Future[T]

// Decorators makes a Policy[T] out of a policy's generic decorators, instantiated for
// calls with no argument. All three fields must be set.
type Decorators[T any] struct {
	L     Layer                                                    // the policy's layer
	Sync  func(next Func[struct{}, T]) Func[struct{}, T]           // guards synchronous calls
	Async func(next AsyncFunc[struct{}, T]) AsyncFunc[struct{}, T] // guards calls returning a future
}

var _ Policy[int] = Decorators[int]{}

// Layer returns d.L.
func (d Decorators[T]) Layer() Layer { return d.L }

// Decorate returns next guarded by d.Sync.
func (d Decorators[T]) Decorate(next Call[T]) Call[T] {
	f := d.Sync(func(ctx context.Context, _ struct{}) (T, error) { return next(ctx) })
	return func(ctx context.Context) (T, error) { return f(ctx, struct{}{}) }
}

// DecorateAsync returns next guarded by d.Async.
func (d Decorators[T]) DecorateAsync(next AsyncCall[T]) AsyncCall[T] {
	f := d.Async(func(ctx context.Context, _ struct{}) *async.Future[T] { return next(ctx) })
	return func(ctx context.Context) *async.Future[T] { return f(ctx, struct{}{}) }
}

// Of makes a Policy[T] out of a policy instance p of layer l and its generic decorators,
// instantiated for calls with no argument, e.g.
// policy.Of(retry.Layer, r, retry.DecorateFunc[struct{}, T], retry.DecorateAsyncFunc[struct{}, T]).
func Of[T, P any](l Layer, p P, sync func(P, Func[struct{}, T]) Func[struct{}, T], async func(P, AsyncFunc[struct{}, T]) AsyncFunc[struct{}, T]) Policy[T] {
	return Decorators[T]{
		L:     l,
		Sync:  func(next Func[struct{}, T]) Func[struct{}, T] { return sync(p, next) },
		Async: func(next AsyncFunc[struct{}, T]) AsyncFunc[struct{}, T] { return async(p, next) },
	}
}
