package fallback

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/promise"
)

// NewPolicy returns f as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate returns next with f's fallback: a call that fails with an error f handles
// (see the package documentation), or whose outcome HandleIf's predicate selects, returns the fallback
// function's result for that error instead, after an EventApplied event; any other
// result is returned as it is. The fallback function runs on the caller's goroutine. A
// successful call allocates nothing. A ctx that is nil or already done when the call
// arrives runs neither next nor the fallback function and publishes nothing: the call
// returns ctx's error (policy.ErrNilContext for a nil ctx) as is. A disabled fallback
// lets every call through to next, but for a nil or done ctx, whose error it returns as is.
//
// Its DecorateAsync returns next with f's fallback for calls that return a future: a
// future that fails with an error f handles is replaced by one completed with the
// fallback function's result; any other outcome is passed on as it is.
// The fallback function then runs on the goroutine that completes next's future, so it
// should return quickly. Cancelling the returned future cancels next's future, and the
// fallback is not applied to the cancellation. Whichever comes first of Cancel and the
// error is the call's end: a Cancel that comes first means no EventApplied and no call of
// the fallback function; once the fallback has begun (its event published, its function
// running), Cancel returns false and the future completes with the function's result.
//
// A ctx that is nil or already done when the call arrives runs neither next nor the
// fallback function and publishes nothing: the future fails with ctx's error
// (policy.ErrNilContext for a nil ctx). A nil future returned by next counts as one
// failed with async.ErrNilFuture, which the fallback handles as any other error.
//
// A future that is already complete when next returns it, with a success or an error f
// does not handle, is returned as it is, with no allocation. A disabled fallback lets every
// call through to next, but for a nil or done ctx, whose error it returns as is.
func NewPolicy[T any](f *Fallback[T]) policy.Policy[T] {
	return decorate.Of(Layer, f, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate returns next, a decorate.Func or a decorate.AsyncFunc of argument A and result T,
// guarded by f as NewPolicy's Decorate and DecorateAsync guard functions without argument:
// it is the fallback's layer as package resilience composes it, for functions of any arity,
// e.g. Decorate[decorate.Func[A, T], A, T](f, next). Use NewPolicy, or wrap the function
// with package resilience.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](f *Fallback[T], next F) F {
	return decorate.Dispatch(f, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

// decorateFunc is Decorate for a decorate.Func: see NewPolicy.
func decorateFunc[A, T any](f *Fallback[T], next decorate.Func[A, T]) decorate.Func[A, T] {
	if f.cfg.Disabled {
		return decorate.Guard(next)
	}
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		v, err := next(ctx, a)
		if (err == nil && f.pred == nil) || !f.handles(v, err) {
			return v, err
		}
		return f.apply(ctx, err)
	}
}

// decorateAsyncFunc is Decorate for a decorate.AsyncFunc: see NewPolicy.
func decorateAsyncFunc[A, T any](f *Fallback[T], next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if f.cfg.Disabled {
		return decorate.GuardAsync(next)
	}
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		inner := next(ctx, a)
		if inner == nil {
			inner = async.Failed[T](async.ErrNilFuture)
		}
		if v, done, err := inner.Result(); done {
			if (err == nil && f.pred == nil) || !f.handles(v, err) {
				return inner
			}
			out, complete := async.NewPromise[T]()
			complete(f.apply(ctx, err))
			return out
		}
		out, p := promise.New[T](inner.Cancel)
		inner.OnComplete(func(v T, err error) {
			if (err == nil && f.pred == nil) || !f.handles(v, err) {
				p.Complete(v, err)
				return
			}
			if !p.Claim() { // Cancel came first: the caller gets async.ErrCanceled
				return
			}
			p.Complete(f.apply(ctx, err))
		})
		return out
	}
}
