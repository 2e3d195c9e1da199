package retrybudget

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
)

// NewPolicy returns b as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate and DecorateAsync count each call in b's window, once, as it arrives, and
// then call next: the budget refuses no call, only the extra attempts that a retry or a
// hedge of the same composition asks it for (see Budget). A call counts once whatever
// its attempts, because the budget's layer sits outside the retry and the hedge in the
// default order; placed inside them by a composition's order, it would count each
// attempt as a call. Counting allocates nothing, publishes nothing and records nothing.
// A ctx that is nil or already done when the call arrives is not counted, next is not
// called, and the call returns ctx's error (policy.ErrNilContext for a nil ctx), or a
// future failed with it. A nil future from next becomes a future failed with
// async.ErrNilFuture. A disabled budget counts nothing and calls next.
func NewPolicy[T any](b *Budget) policy.Policy[T] {
	return decorate.Of(Layer, b, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the budget's layer as package resilience composes it: it counts the calls
// of next, a function of any arity (its arguments carried as A) and result T,
// synchronous or returning a future, as NewPolicy's Decorate and DecorateAsync count the
// calls of a function without argument. Its type argument F is one of this module's own
// function types, which code outside the module cannot name, so it is not for calling
// directly: use NewPolicy[T](b).Decorate (or DecorateAsync), or wrap a function with
// resilience.Wrap and a resilience.RetryBudget spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](b *Budget, next F) F {
	return decorate.Dispatch(b, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

// decorateFunc is Decorate for a decorate.Func: see NewPolicy.
func decorateFunc[A, T any](b *Budget, next decorate.Func[A, T]) decorate.Func[A, T] {
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		b.arrive()
		return next(ctx, a)
	}
}

// decorateAsyncFunc is Decorate for a decorate.AsyncFunc: see NewPolicy.
func decorateAsyncFunc[A, T any](b *Budget, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		b.arrive()
		if f := next(ctx, a); f != nil {
			return f
		}
		return async.Failed[T](async.ErrNilFuture)
	}
}
