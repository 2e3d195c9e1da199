package bulkhead

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// NewPolicy returns b as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate returns next guarded by b: each call takes a slot (waiting for it on the
// caller's goroutine up to the MaxWait in force when it arrives, in FIFO order, honouring
// ctx) and holds it until next returns, or panics. A rejection returns the zero T and b's
// rejection (matching ErrFull, and ctx's error when ctx ended the wait); next is not
// called. A ctx that is nil or already done when the call arrives is rejected at once,
// whatever slots are free and whatever MaxWait is: the rejection matches ErrFull and ctx's error
// (policy.ErrNilContext for a nil ctx), no slot is taken and no event is published.
// Each call's outcome is recorded once, with ctx (see below).
// Admitted calls that find a slot free, and calls rejected at once, allocate nothing (but
// for a nil ctx), with a recorder or without. A disabled bulkhead lets every call through
// to next, but for a nil or done ctx, whose error it returns as is.
//
// Its DecorateAsync returns next guarded by b, for calls that return a future. A call
// holds its slot from its start until its future completes; a future completed by Cancel
// gives the slot back at once, so work that goes on after its future was canceled no
// longer counts against MaxConcurrent.
//   - ctx nil or already done: a failed future with b's rejection, matching
//     ErrFull and ctx's error (policy.ErrNilContext for a nil ctx), whatever slots are
//     free; next never runs, no slot is taken, no event is published.
//   - A slot free now (and nobody waiting): next starts at once, and its own future is
//     returned (a nil future from next: a future failed with async.ErrNilFuture, and the
//     slot comes back at once).
//   - No slot and MaxWait 0: a failed future with b's rejection, matching
//     ErrFull.
//   - Otherwise the call queues, FIFO, as a callback: no goroutine waits. When a slot is
//     handed to it, next starts on the goroutine that released the slot (or that raised
//     MaxConcurrent in a reload); when a queued call's next panics there, the slot
//     it gives back goes to the next waiters before the panic goes on up that goroutine
//     (should one of them panic too, its panic goes on in place of the first). After
//     MaxWait, the one in force when it arrived (a clock timer) the future fails with b's
//     rejection and the call leaves the queue. Cancelling the future, or ctx ending,
//     while it waits removes it from the queue at once: Cancel returns true and next
//     never runs; ctx ending fails the future with a rejection matching ctx's error. Once
//     started, cancelling the future cancels next's future (Cancel returns false).
//
// Each call's outcome is recorded once, with ctx, when the bulkhead decides: at once, or
// when a queued call starts (ResultAdmitted, Wait = how long it waited), expires or is
// ended by ctx (ResultRejected); a call whose future is canceled while it waits records
// nothing. A disabled bulkhead lets every call through to next, but for a nil or done
// ctx, whose error it returns as is.
//
// With a recorder (a registry's observer, resilience.WithObserver), each admission
// decision is recorded once, with the call's context: observe.ResultAdmitted with Wait =
// how long the call waited for its slot (0 when it did not wait), or
// observe.ResultRejected with Err = the rejection, also for a call refused on arrival for
// its nil or done context (recorded with context.Background() for a nil one). An
// asynchronous call whose future is canceled while it waits was neither let in nor
// refused: nothing is recorded for it. A disabled bulkhead records nothing. Without a
// recorder, recording costs a nil check.
func NewPolicy[T any](b *Bulkhead) policy.Policy[T] {
	return decorate.Of(Layer, b, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the bulkhead's layer as package resilience composes it: it guards next, a
// function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](b).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.Bulkhead spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](b *Bulkhead, next F) F {
	if f, ok := any(next).(decorate.Func[A, T]); ok {
		return any(decorateFunc(b, f)).(F)
	}
	return any(decorateAsyncFunc(b, any(next).(decorate.AsyncFunc[A, T]))).(F)
}

// decorateFunc is Decorate for a decorate.Func: see NewPolicy.
func decorateFunc[A, T any](b *Bulkhead, next decorate.Func[A, T]) decorate.Func[A, T] {
	if !b.enabled {
		return decorate.Guard(next)
	}
	return func(ctx context.Context, a A) (T, error) {
		if err := b.acquire(ctx); err != nil {
			var zero T
			return zero, err
		}
		defer b.release()
		return next(ctx, a)
	}
}

// decorateAsyncFunc is Decorate for a decorate.AsyncFunc: see NewPolicy.
func decorateAsyncFunc[A, T any](b *Bulkhead, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if !b.enabled {
		return decorate.GuardAsync(next)
	}
	release := func(T, error) { b.release() }
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](b.ev.Refuse(ctx, err))
		}
		if b.tryAcquire() {
			b.ev.Admit(ctx)
			return start(b, ctx, a, next, release)
		}
		maxWait := b.cur.Load().cfg.MaxWait
		if maxWait == 0 {
			b.ev.Reject(ctx, 0, b.rej.Plain)
			return async.Failed[T](b.rej.Plain)
		}
		return enqueueAsync(b, ctx, a, next, release, maxWait)
	}
}

// start runs next in a slot the caller holds, and gives the slot back when next's future
// completes (at once, if next panics or returns a nil future, which stands for a future
// failed with async.ErrNilFuture).
func start[A, T any](b *Bulkhead, ctx context.Context, a A, next decorate.AsyncFunc[A, T], release func(T, error)) *async.Future[T] {
	ok := false
	defer func() {
		if !ok {
			b.release()
		}
	}()
	inner := next(ctx, a)
	// From here the slot is release's to give back, also when it runs at once (inner is
	// complete) and a call it starts from the queue panics.
	ok = true
	if inner == nil {
		inner = async.Failed[T](async.ErrNilFuture)
	}
	inner.OnComplete(release)
	return inner
}

// An asyncWaiter is an asynchronous call queued for a slot.
type asyncWaiter[A, T any] struct {
	waitq.Waiter[struct{}]
	at      time.Duration // clock time at which the wait began
	d       delay.Delayed[T]
	b       *Bulkhead
	ctx     context.Context
	a       A
	next    decorate.AsyncFunc[A, T]
	release func(T, error)
	waited  bool // the slot was handed over from the queue
}

// enqueueAsync queues an asynchronous call for a slot, for up to maxWait (more than 0).
func enqueueAsync[A, T any](b *Bulkhead, ctx context.Context, a A, next decorate.AsyncFunc[A, T], release func(T, error), maxWait time.Duration) *async.Future[T] {
	w := &asyncWaiter[A, T]{b: b, ctx: ctx, a: a, next: next, release: release}
	fut := w.d.Init(b.clk, ctx, w, nil)
	w.at = b.clk.Now()
	// The MaxWait timer and the ctx hook are armed before the waiter is queued (a waiter
	// seen in the queue always has them); one that fires first keeps it from being queued.
	w.d.StartWithin(maxWait)
	switch b.q.Enqueue(&w.Waiter, w) {
	case waitq.Admitted: // a slot came free meanwhile, and nobody waits for it
		w.startIn(false)
	case waitq.Queued:
		b.recheck()
	}
	return fut
}

// Granted is called when a slot is handed to the waiter.
func (w *asyncWaiter[A, T]) Granted() { w.startIn(true) }

// startIn starts the call in the slot the waiter now holds, or passes the slot on if the
// wait is already over (canceled, expired, or ctx ended as the slot came).
func (w *asyncWaiter[A, T]) startIn(waited bool) {
	w.waited = waited
	if !w.d.Start() {
		w.b.release()
	}
}

// Start runs the call in its slot, after reporting its admission.
func (w *asyncWaiter[A, T]) Start() *async.Future[T] {
	if w.waited {
		w.b.ev.AdmitWaited(w.ctx, w.at)
	} else {
		w.b.ev.Admit(w.ctx)
	}
	return start(w.b, w.ctx, w.a, w.next, w.release)
}

// Stop takes a waiter whose wait is over without a slot out of the queue (one already
// handed a slot gives it back in startIn), and returns its rejection, which it reports;
// a canceled waiter reports nothing.
func (w *asyncWaiter[A, T]) Stop(cause error) (T, error) {
	w.b.q.Remove(&w.Waiter)
	var zero T
	switch cause {
	case async.ErrCanceled:
		return zero, cause
	case delay.ErrExpired:
		return zero, w.b.ev.Expired(w.ctx, w.at)
	}
	return zero, w.b.ev.RejectContext(w.ctx, w.b.ev.Since(w.at), cause)
}
