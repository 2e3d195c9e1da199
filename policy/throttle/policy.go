package throttle

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// NewPolicy returns t as a policy of layer Layer, for calls returning T: its Decorate and
// DecorateAsync guard a function with t. Decorating costs nothing per call beyond the
// throttle's own.
//
// Each call is rejected with the window's rejection probability (see Throttle):
// rejected, it counts as a request and returns the zero T and t's rejection (matching
// ErrThrottled), and the function is not called, so the layers inside the throttle spend
// nothing. Admitted, the function runs, and its outcome counts when it returns:
//   - an error matching IgnoreOn (errors.Is): neither a request nor an accept;
//   - else a request refused, when the error counts by the lists (without RefusedOn every error
//     does; with it only the errors it lists) or RefusedIf's predicate returns true for
//     the outcome (a result with a nil error included);
//   - else a request accepted.
//
// A call that panics counts as refused, and the panic goes on. The outcome is classified
// by the configuration in force when the call was admitted.
//
// A function that returns a future (DecorateAsync) is decided on when it is called:
// rejected, the call returns a failed future with t's rejection, made once when the
// function is decorated, and the function is not called. Admitted, the function's future
// is returned as is and its outcome counts when it completes (Future.OnComplete), as
// above; a future that ends with async.ErrCanceled (canceled by the caller) counts as
// ignored. A nil future from the function makes the call return a future failed with
// async.ErrNilFuture, which counts as that error does. No goroutine is started.
//
// A context that is nil or already done when the call arrives is refused at once with its
// error as is (policy.ErrNilContext for a nil one): nothing is counted, recorded or
// published, and the function is not called. A disabled throttle lets every other call
// through, uncounted and unrecorded.
//
// With a recorder (a registry's observer, resilience.WithObserver), each decision is
// recorded once, with the call's context: observe.ResultAdmitted, or
// observe.ResultRejected with Err the rejection. Each rejection publishes EventRejected.
// An admitted synchronous call, and a rejected one, allocate nothing, with a recorder or
// without; an admitted asynchronous call allocates its completion callback.
func NewPolicy[T any](t *Throttle) policy.Policy[T] {
	return decorate.Of(Layer, t, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the throttle's layer as package resilience composes it: it guards next, a
// function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](t).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.Throttle spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](t *Throttle, next F) F {
	return decorate.Dispatch(t, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

// enter decides on a call that arrives with ctx: it returns the rules in force, the time
// it arrived and whether it is admitted (recording and publishing the decision); counted
// is false for a disabled throttle, which lets the call through uncounted.
func (t *Throttle) enter(ctx context.Context) (r *rules, at time.Duration, counted, ok bool) {
	r = t.cur.Load()
	if r.cfg.Disabled {
		return r, 0, false, true
	}
	at = t.clk.Now()
	ok, p := t.admit(r, at)
	if ok {
		if t.events.Rec != nil {
			t.events.Rec.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})
		}
		return r, at, true, true
	}
	if t.events.Rec != nil {
		t.events.Rec.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: t.rej})
	}
	if t.events.Wants(ctx, EventRejected) {
		t.events.PublishCtx(ctx, policy.Event{Kind: EventRejected, At: at, RetryAfter: t.retryIn(), Err: t.rej,
			Attrs: policy.EventAttrs{slog.Float64(attrProbability, p)}})
	}
	return r, at, true, false
}

// outcome counts the outcome (v, err) of a call admitted at `at` under r; as a refusal
// when pred panics, before the panic goes on.
func outcome[T any](t *Throttle, r *rules, pred func(T, error) bool, at time.Duration, v T, err error) {
	if r.cls.Excluded(err) {
		return
	}
	refused := true
	defer func() { t.count(!refused, at) }()
	refused = contract.Counts(&r.cls, pred, v, err)
}

func decorateFunc[A, T any](t *Throttle, next decorate.Func[A, T]) decorate.Func[A, T] {
	pred := contract.For[T](t.refusedIf)
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		r, at, counted, ok := t.enter(ctx)
		if !ok {
			var zero T
			return zero, t.rej
		}
		if !counted {
			return next(ctx, a)
		}
		done := false
		defer func() {
			if !done {
				t.count(false, at) // next panicked: a refusal
			}
		}()
		v, err := next(ctx, a)
		done = true
		outcome(t, r, pred, at, v, err)
		return v, err
	}
}

func decorateAsyncFunc[A, T any](t *Throttle, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	rejected := async.Failed[T](t.rej)
	pred := contract.For[T](t.refusedIf)
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		r, at, counted, ok := t.enter(ctx)
		if !ok {
			return rejected
		}
		if !counted {
			return decorate.Start(next, ctx, a, func() {})
		}
		f := decorate.Start(next, ctx, a, func() { t.count(false, at) }) // a panic: a refusal
		f.OnComplete(func(v T, err error) {
			if !errors.Is(err, async.ErrCanceled) {
				outcome(t, r, pred, at, v, err)
			}
		})
		return f
	}
}
