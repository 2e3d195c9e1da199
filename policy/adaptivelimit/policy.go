package adaptivelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// NewPolicy returns l as a policy of layer Layer, for calls returning T: its Decorate and
// DecorateAsync guard a function with l.
//
// A synchronous call is let in as with Acquire (waiting up to MaxWait in FIFO order,
// honouring its context) and counts as in flight until the function returns; its outcome
// is then a sample for the algorithm (see below: a nil error or an ordinary error is a
// sample, context.DeadlineExceeded, DropOn or a context past its deadline a drop, a
// cancellation or IgnoreOn none). A function that panics counts out
// without a sample, and the panic goes on. A rejection returns the zero T and l's
// rejection (matching ErrLimitExceeded, and the context's error when the context ended
// the wait); the function is not called. A context that is nil or already done when the
// call arrives is rejected at once, whatever the limit and MaxWait: the rejection matches
// ErrLimitExceeded and the context's error (policy.ErrNilContext for a nil context),
// nothing is counted and no event is published. Each call's outcome is recorded once,
// with its context (see below). Calls let in without waiting, and
// calls rejected at once, allocate nothing, with a recorder or without. A disabled
// limiter lets every call through, but for a nil or done context, whose error it returns
// as is.
//
// A call that returns a future counts as in flight from its start until its future
// completes, and its outcome is then a sample, as above; a future completed by Cancel
// counts out at once, without a sample (unless the context's deadline has passed: an
// outer timeout that cancels the future makes the call a drop).
//   - Context nil or already done: a failed future with l's rejection, matching
//     ErrLimitExceeded and the context's error (policy.ErrNilContext for a nil context),
//     whatever the limit; the function never runs, nothing is counted, no event is
//     published.
//   - The call fits under the limit now (and nobody waits): the function starts at once,
//     and its own future is returned (a nil future from it: a future failed with
//     async.ErrNilFuture, and the call counts out at once, without a sample).
//   - It does not fit and MaxWait is 0: a failed future with l's rejection, made once
//     when the function is decorated.
//   - Otherwise the call queues, FIFO, as a callback: no goroutine waits. When it is let
//     in, the function starts on the goroutine that made room (a completing call, or the
//     one whose sample raised the limit); when a queued call's function panics there, the
//     room it gives back goes to the next waiters before the panic goes on up that
//     goroutine (should one of them panic too, its panic goes on in place of the first).
//     After MaxWait (a clock timer) the future fails with l's rejection and the call
//     leaves the queue. Cancelling the future, or the context ending, while it waits
//     removes it from the queue at once: Cancel returns true and the function never runs;
//     the context ending fails the future with a rejection matching the context's error.
//     Once started, cancelling the future cancels the function's future (Cancel returns
//     false).
//
// Each call's outcome is recorded once, with its context, when the limiter decides: at
// once, or when a queued call starts (ResultAdmitted, Wait = how long it waited), expires
// or is ended by its context (ResultRejected); a call whose future is canceled while it
// waits records nothing. A disabled limiter lets every call through, but for a nil or
// done context, whose error it returns as is.
//
// The samples: each call that completes gives a sample: its latency, from the moment it
// was let in (the wait does not count) to its return or completion, on the limiter's
// clock; the calls in flight once it was let in, itself included; and whether it was a
// drop, a sign of overload. By its outcome:
//   - nil, or an error not named below (a "not found" is an answer too): a sample;
//   - an error matching IgnoreOn: no sample (IgnoreOn wins over what follows);
//   - an error matching context.DeadlineExceeded or DropOn, or any error once the call's
//     context has passed its deadline (an outer timeout that cancels the call's future
//     makes it fail with async.ErrCanceled, but its context reports the deadline): a
//     drop;
//   - async.ErrCanceled or context.Canceled, the caller giving up: no sample;
//   - a panic, or a nil future: no sample.
//
// With AIMD, a call slower than LatencyThreshold is a drop too. A call that leaves no
// sample still counts out. Permit.Record applies the same rules, without a context. How
// the samples move the limit, the algorithm's documentation tells (see AIMD).
//
// With a recorder (a registry's observer, resilience.WithObserver), each admission
// decision is recorded once, with the call's context: observe.ResultAdmitted with Wait =
// how long the call waited to be let in (0 when it did not wait), or
// observe.ResultRejected with Err = the rejection, also for a call refused on arrival for
// its nil or done context (recorded with context.Background() for a nil one). Acquire
// records as the decorated calls do. An asynchronous call whose future is canceled while
// it waits was neither let in nor refused: nothing is recorded for it. A disabled limiter
// records nothing. Without a recorder, recording costs a nil check.
func NewPolicy[T any](l *Limiter) policy.Policy[T] {
	return decorate.Of(Layer, l, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the adaptive limit's layer as package resilience composes it: it guards
// next, a function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](l).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.AdaptiveLimit spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](l *Limiter, next F) F {
	if f, ok := any(next).(decorate.Func[A, T]); ok {
		return any(decorateFunc(l, f)).(F)
	}
	return any(decorateAsyncFunc(l, any(next).(decorate.AsyncFunc[A, T]))).(F)
}

func decorateFunc[A, T any](l *Limiter, next decorate.Func[A, T]) decorate.Func[A, T] {
	if !l.enabled {
		return decorate.Guard(next)
	}
	return func(ctx context.Context, a A) (T, error) {
		p, err := l.acquire(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		done := false
		defer func() {
			if !done { // next panicked
				l.complete(ctx, p, ignored)
			}
		}()
		v, err := next(ctx, a)
		done = true
		l.complete(ctx, p, l.classify(ctx, err))
		return v, err
	}
}

func decorateAsyncFunc[A, T any](l *Limiter, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if !l.enabled {
		return decorate.GuardAsync(next)
	}
	rejected := async.Failed[T](l.rej.Plain)
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](l.sw.Refuse(ctx, err))
		}
		if p, ok := l.tryAcquire(); ok {
			l.sw.Admit(ctx)
			return start(l, p, ctx, a, next)
		}
		if l.maxWait == 0 {
			l.sw.Reject(ctx, 0, l.rej.Plain)
			return rejected
		}
		return enqueueAsync(l, ctx, a, next)
	}
}

// start runs next with permit p and records its outcome when its future completes (at
// once, without a sample, if next panics or returns a nil future).
func start[A, T any](l *Limiter, p Permit, ctx context.Context, a A, next decorate.AsyncFunc[A, T]) *async.Future[T] {
	ok := false
	defer func() {
		if !ok {
			l.complete(ctx, p, ignored)
		}
	}()
	inner := next(ctx, a)
	if inner == nil {
		return async.Failed[T](async.ErrNilFuture) // counted out by the deferred call
	}
	// From here the permit is the callback's to give back, also when it runs at once
	// (inner is complete) and a call it lets in from the queue panics.
	ok = true
	inner.OnComplete(func(_ T, err error) { l.complete(ctx, p, l.classify(ctx, err)) })
	return inner
}

// An asyncWaiter is an asynchronous call queued for room under the limit.
type asyncWaiter[A, T any] struct {
	waitq.Waiter[admission]
	at     time.Duration // clock time at which the wait began
	d      delay.Delayed[T]
	l      *Limiter
	ctx    context.Context
	a      A
	next   decorate.AsyncFunc[A, T]
	waited bool // let in from the queue
}

func enqueueAsync[A, T any](l *Limiter, ctx context.Context, a A, next decorate.AsyncFunc[A, T]) *async.Future[T] {
	w := &asyncWaiter[A, T]{l: l, ctx: ctx, a: a, next: next}
	fut := w.d.Init(l.clk, ctx, w, nil)
	w.at = l.clk.Now()
	// The MaxWait timer and the ctx hook are armed before the waiter is queued (a waiter
	// seen in the queue always has them); one that fires first keeps it from being queued.
	w.d.StartWithin(l.maxWait)
	switch l.q.Enqueue(&w.Waiter, w) {
	case waitq.Admitted: // room came meanwhile, and nobody waits for it
		w.startIn(false)
	case waitq.Queued:
		l.recheck()
	}
	return fut
}

// Granted is called when the waiter is let in.
func (w *asyncWaiter[A, T]) Granted() { w.startIn(true) }

// startIn starts the call the waiter now has room for, or passes the room on if the wait
// is already over (canceled, expired, or ctx ended as the room came).
func (w *asyncWaiter[A, T]) startIn(waited bool) {
	w.waited = waited
	if !w.d.Start() {
		w.l.giveBack(w.Room())
	}
}

// Start runs the call in its room, after reporting its admission.
func (w *asyncWaiter[A, T]) Start() *async.Future[T] {
	if w.waited {
		w.l.sw.AdmitWaited(w.ctx, w.at)
	} else {
		w.l.sw.Admit(w.ctx)
	}
	return start(w.l, w.l.permit(w.Room()), w.ctx, w.a, w.next)
}

// Stop takes a waiter whose wait is over without room out of the queue (one already let
// in gives its room back in startIn), and returns its rejection, which it reports; a
// canceled waiter reports nothing.
func (w *asyncWaiter[A, T]) Stop(cause error) (T, error) {
	w.l.q.Remove(&w.Waiter)
	var zero T
	switch cause {
	case async.ErrCanceled:
		return zero, cause
	case delay.ErrExpired:
		return zero, w.l.sw.Expired(w.ctx, w.at)
	}
	return zero, w.l.sw.RejectContext(w.ctx, w.l.sw.Since(w.at), cause)
}
