package circuitbreaker

import (
	"context"
	"errors"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
)

// NewPolicy returns b as a policy of layer Layer, for calls returning T: its Decorate and
// DecorateAsync guard a function with b. Decorating costs nothing per call beyond the
// breaker's own.
//
// Each call asks b for permission: refused, it returns the zero T and b's rejection
// (matching ErrOpen, never retried), and the function is not called, so the layers inside
// the breaker spend nothing. Admitted, the function runs and its outcome is recorded in
// the state that admitted it, with its duration (on b's clock, from before the call to
// after it) when it is measured: with a SlowCallThreshold, or for a recorder that wants
// latencies. A panic in the function is recorded as a failure and propagates. Admitted
// and rejected calls allocate nothing, with or without a recorder.
//
// How an outcome counts: a call that returns a nil error is a success. An error matching
// IgnoreOn (errors.Is) counts as nothing (in half-open it gives its trial slot back).
// Otherwise, without RecordOn every error is a failure; with RecordOn only the matching
// errors are failures and other errors count as successes. RecordIf adds the outcomes its
// predicate returns true for, a result with a nil error included (IgnoreOn still wins). A
// call that panics is recorded as a failure and the panic goes on. When SlowCallThreshold
// is set, a call that takes longer than it on the breaker's clock is also slow, whether
// it succeeded or failed (strictly longer, as in Resilience4j). It is not set by default
// (0): no call is slow, and SlowCallRateThreshold never opens the breaker.
//
// Errors from the caller's context (context.Canceled, context.DeadlineExceeded) are
// errors like any other, as in Resilience4j: they count as failures unless listed in
// IgnoreOn (add them there if callers giving up should not open the breaker).
//
// An outcome is recorded in the state that admitted the call: a call admitted while
// closed that completes after the breaker has opened (or been reset, forced open, ...) is
// not recorded, and neither is a trial that completes after the breaker gave up on it
// (MaxWaitInHalfOpen): its late success does not close the breaker, its late failure
// does not reopen it, and it neither takes nor frees a trial slot of a later half-open.
// The caller still gets the call's own result.
//
// With a recorder (a registry's observer, resilience.WithObserver), each call asked of b
// is recorded once, with its context: a refused call as observe.ResultRejected (Err the
// rejection) when it is refused; an admitted one when the function returns, as
// observe.ResultSucceeded, ResultFailed or ResultIgnored, as b counts it (a panic:
// ResultFailed with a nil Err), with Latency, the call's duration on b's clock (0 for a
// recorder that has no use for latencies), and Slow, whether it was above the
// SlowCallThreshold in force when it was admitted (false without one). It is recorded
// whatever state the breaker is in when the call ends, even when the breaker no longer
// counts it. The transitions a call makes and its rejection event are published, and
// reach the recorder, with its context; those of TransitionTo, Reset and reloads with
// context.Background().
//
// A context that is nil or already done when the call arrives, whatever the state, does
// not ask b: the function is not called, no half-open trial is taken, nothing is recorded
// (by b nor by its recorder), no state changes and no event is published; the call
// returns the context's error (policy.ErrNilContext for a nil context) as is. A call
// admitted while b is disabled is neither counted nor recorded.
//
// A function that returns a future (DecorateAsync) asks permission when it is called:
// refused, the call returns a failed future with b's rejection and the function is not
// called. Admitted, the function's future is returned as is and its outcome is recorded
// when it completes (Future.OnComplete), its duration, when it is measured, running from
// the call to the completion. A future that ends with async.ErrCanceled (e.g. canceled by
// the caller) gives its permission back without recording anything, like an ignored
// error. A half-open trial whose future has not completed MaxWaitInHalfOpen after the
// breaker went half-open is given up: the breaker opens again and the future's outcome,
// when it comes, is not recorded. No goroutine is started. A function that returns a nil
// future is a failed call: its outcome is async.ErrNilFuture (a failure unless IgnoreOn
// lists it), and the call returns a future failed with it. With a recorder, a future that
// ends with async.ErrCanceled is recorded as observe.ResultIgnored. A context that is nil
// or already done fails the returned future with its error, as above. The failed futures
// of rejections are created once, when the function is decorated, and shared by the
// calls they reject (a completed future never changes): rejecting allocates nothing, with
// or without a recorder. Admitted calls allocate their completion callback.
//
// What a call costs: an admitted call loads the state and the configuration in force (two
// atomic loads, no lock) and reads the clock only for what needs the time:
//   - with a SlowCallThreshold, or a recorder that wants latencies, its start and its
//     end, to measure it;
//   - otherwise none at its start, and at its end only for a time-based window (the
//     bucket), a half-open trial (its deadline), or a transition to open (with the
//     system clock it is then read under the mutex; another clock is read before the
//     mutex, for every outcome that goes on to it).
//
// Its outcome is recorded under the breaker's mutex, in a small ring or bucket, with one
// exception: a call that succeeded without being slow, while a count-based window is full
// of such calls, changes nothing (it would replace one success by another, and the rates
// stay 0), so it only reads one atomic flag and writes nothing shared: without a
// threshold, recorder or result predicate, such a call takes no lock, reads no clock and
// makes no atomic write. A rejected call reads the clock at most once and takes no lock
// while the breaker stays open. Neither allocates, with or without a recorder. A call
// whose error is ignored in the closed state reads its end only for a recorder, and then
// only when the call is measured (a threshold, or a recorder that wants latencies).
func NewPolicy[T any](b *Breaker) policy.Policy[T] {
	return decorate.Of(Layer, b, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the breaker's layer as package resilience composes it: it guards next, a
// function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](b).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.CircuitBreaker spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](b *Breaker, next F) F {
	return decorate.Dispatch(b, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

func decorateFunc[A, T any](b *Breaker, next decorate.Func[A, T]) decorate.Func[A, T] {
	pred := contract.For[T](b.recordIf)
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		first, ok := b.closedPermit()
		if !ok {
			var rej *openError
			if first, rej = b.acquire(ctx); rej != nil {
				var zero T
				return zero, rej
			}
			if first.word == noRecord {
				return next(ctx, a)
			}
		}
		p := first // never assigned again: the deferred function below copies it
		done := false
		defer func() {
			if !done {
				b.record(ctx, p, failedBit, false, nil) // next panicked
			}
		}()
		v, err := next(ctx, a)
		done = true
		if err == nil && pred == nil && p.r.lean && p.closed() && b.clean.Load() {
			// A success, with no predicate to ask, of a call admitted while closed whose
			// window is full of fast successes: recording it changes nothing (see record),
			// and no one measures or records it.
			return v, nil
		}
		onResult(ctx, b, pred, p, v, err)
		return v, err
	}
}

func decorateAsyncFunc[A, T any](b *Breaker, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	open, forcedOpen, halfOpen :=
		async.Failed[T](b.rej.open), async.Failed[T](b.rej.forcedOpen), async.Failed[T](b.rej.halfOpen)
	pred := contract.For[T](b.recordIf)
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		p, rej := b.acquire(ctx)
		switch rej {
		case nil:
		case b.rej.open:
			return open
		case b.rej.forcedOpen:
			return forcedOpen
		default:
			return halfOpen
		}
		if p.word == noRecord {
			if f := next(ctx, a); f != nil {
				return f
			}
			return async.Failed[T](async.ErrNilFuture)
		}
		done := false
		defer func() {
			if !done {
				b.record(ctx, p, failedBit, false, nil) // next panicked
			}
		}()
		f := next(ctx, a)
		// From here the outcome is the callback's to record, also when it runs at once
		// (f is complete) and a RecordIf predicate panics in it: onResult records that as a
		// failure itself.
		done = true
		if f == nil {
			f = async.Failed[T](async.ErrNilFuture)
		}
		f.OnComplete(func(v T, err error) {
			if errors.Is(err, async.ErrCanceled) {
				b.record(ctx, p, 0, true, err)
				return
			}
			onResult(ctx, b, pred, p, v, err)
		})
		return f
	}
}
