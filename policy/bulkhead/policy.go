package bulkhead

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// NewPolicy returns b as a policy of layer LayerBulkhead (SPEC CO-1), the innermost layer,
// for calls returning T.
func NewPolicy[T any](b *Bulkhead) policy.Policy[T] {
	return policy.Decorators[T]{
		L:    policy.LayerBulkhead,
		Sync: func(next policy.Func[struct{}, T]) policy.Func[struct{}, T] { return DecorateFunc(b, next) },
		Async: func(next policy.AsyncFunc[struct{}, T]) policy.AsyncFunc[struct{}, T] {
			return DecorateAsyncFunc(b, next)
		},
	}
}

// DecorateFunc returns next guarded by b: each call takes a slot with Acquire (waiting up
// to MaxWait in FIFO order, honouring ctx) and holds it until next returns, or panics. A
// rejection returns the zero T and b's *FullError (matching ErrFull, and ctx's error when
// ctx ended the wait); next is not called. Admitted calls that find a slot free, and
// calls rejected at once, allocate nothing. A disabled bulkhead returns next itself.
func DecorateFunc[A, T any](b *Bulkhead, next policy.Func[A, T]) policy.Func[A, T] {
	if !b.enabled {
		return next
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

// DecorateAsyncFunc returns next guarded by b, for calls that return a future
// (SPEC AS-1…AS-4). A call holds its slot from its start until its future completes;
// a future completed by Cancel gives the slot back at once, so work that goes on after
// its future was cancelled no longer counts against MaxConcurrent.
//   - A slot free now (and nobody waiting): next starts at once, and its own future is
//     returned.
//   - No slot and MaxWait 0, or ctx already done: a failed future with b's rejection
//     (SPEC AS-1).
//   - Otherwise the call queues, FIFO, as a callback: no goroutine waits (SPEC AS-2).
//     When a slot is handed to it, next starts on the goroutine that released the slot.
//     After MaxWait (a clock timer) the future fails with b's rejection and the call
//     leaves the queue. Cancelling the future, or ctx ending, while it waits removes it
//     from the queue at once: Cancel returns true and next never runs (SPEC AS-3); ctx
//     ending fails the future with a rejection matching ctx's error. Once started,
//     cancelling the future cancels next's future (Cancel returns false).
//
// A disabled bulkhead returns next itself.
func DecorateAsyncFunc[A, T any](b *Bulkhead, next policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T] {
	if !b.enabled {
		return next
	}
	release := func(T, error) { b.release() }
	return func(ctx context.Context, a A) *async.Future[T] {
		if b.tryAcquire() {
			return start(b, ctx, a, next, release)
		}
		if b.maxWait == 0 {
			b.publishRejected(0, b.rej.Plain)
			return async.Failed[T](b.rej.Plain)
		}
		if err := ctx.Err(); err != nil {
			return async.Failed[T](b.rejectContext(0, err))
		}
		return enqueueAsync(b, ctx, a, next, release)
	}
}

// start runs next in a slot the caller holds, and gives the slot back when next's future
// completes (or at once, if next panics).
func start[A, T any](b *Bulkhead, ctx context.Context, a A, next policy.AsyncFunc[A, T], release func(T, error)) *async.Future[T] {
	ok := false
	defer func() {
		if !ok {
			b.release()
		}
	}()
	inner := next(ctx, a)
	inner.OnComplete(release)
	ok = true
	return inner
}

// The states of an asynchronous waiter: whichever of the slot, MaxWait, Cancel and ctx
// comes first moves it from waiting, and only that one acts.
const (
	waiting int32 = iota
	started
	over
)

// An asyncWaiter is an asynchronous call queued for a slot.
type asyncWaiter[A, T any] struct {
	waiter
	state    atomic.Int32
	b        *Bulkhead
	ctx      context.Context
	a        A
	next     policy.AsyncFunc[A, T]
	release  func(T, error)
	complete func(T, error)

	mu      sync.Mutex
	timer   clock.Timer      // the MaxWait timer
	stopCtx func() bool      // stops the ctx hook; nil when ctx cannot end
	inner   *async.Future[T] // next's future, once started
	dropped bool             // the future was cancelled after the call started
}

func enqueueAsync[A, T any](b *Bulkhead, ctx context.Context, a A, next policy.AsyncFunc[A, T], release func(T, error)) *async.Future[T] {
	w := &asyncWaiter[A, T]{b: b, ctx: ctx, a: a, next: next, release: release}
	w.owner = w
	fut, complete := async.NewCancellablePromise[T](w.cancel)
	w.complete = complete
	w.at = b.clk.Now()
	// The timer and the ctx hook are armed before the waiter is queued (a waiter seen in
	// the queue always has them); one that fires first keeps it from being queued.
	w.mu.Lock()
	w.timer = b.clk.AfterFunc(b.maxWait, w.expire)
	if ctx.Done() != nil {
		w.stopCtx = context.AfterFunc(ctx, w.ctxDone)
	}
	w.mu.Unlock()
	switch b.enqueue(&w.waiter) {
	case admitted: // a slot came free meanwhile, and nobody waits for it
		w.run(false)
	case inQueue:
		b.recheck()
	}
	return fut
}

// granted is called when a slot is handed to the waiter.
func (w *asyncWaiter[A, T]) granted() { w.run(true) }

// run starts the call in the slot the waiter holds.
func (w *asyncWaiter[A, T]) run(waited bool) {
	if !w.state.CompareAndSwap(waiting, started) {
		w.b.release() // cancelled as the slot came: pass it on
		return
	}
	w.mu.Lock()
	timer, stopCtx := w.timer, w.stopCtx
	w.mu.Unlock()
	timer.Stop()
	if stopCtx != nil {
		stopCtx()
	}
	if waited {
		w.b.publishWaited(w.at)
	}
	inner := start(w.b, w.ctx, w.a, w.next, w.release)
	w.mu.Lock()
	w.inner = inner
	dropped := w.dropped
	w.mu.Unlock()
	if dropped {
		inner.Cancel()
		return
	}
	inner.OnComplete(w.complete)
}

// leave takes a waiter that will not run out of the queue. A waiter already handed a slot
// gives it back when run finds it over.
func (w *asyncWaiter[A, T]) leave() { w.b.remove(&w.waiter) }

// expire runs on the MaxWait timer.
func (w *asyncWaiter[A, T]) expire() {
	if !w.state.CompareAndSwap(waiting, over) {
		return
	}
	w.leave()
	w.mu.Lock()
	stopCtx := w.stopCtx
	w.mu.Unlock()
	if stopCtx != nil {
		stopCtx()
	}
	var zero T
	w.complete(zero, w.b.expired(w.at))
}

// ctxDone runs when ctx ends.
func (w *asyncWaiter[A, T]) ctxDone() {
	if !w.state.CompareAndSwap(waiting, over) {
		return
	}
	w.leave()
	w.mu.Lock()
	timer := w.timer
	w.mu.Unlock()
	timer.Stop()
	var zero T
	w.complete(zero, w.b.rejectContext(w.b.clk.Now()-w.at, w.ctx.Err()))
}

// cancel is the future's cancel hook (the future already failed with async.ErrCancelled).
func (w *asyncWaiter[A, T]) cancel() bool {
	if w.state.CompareAndSwap(waiting, over) {
		w.leave()
		w.mu.Lock()
		timer, stopCtx := w.timer, w.stopCtx
		w.mu.Unlock()
		timer.Stop()
		if stopCtx != nil {
			stopCtx()
		}
		return true
	}
	w.mu.Lock()
	w.dropped = true
	inner := w.inner
	w.mu.Unlock()
	if inner != nil {
		inner.Cancel()
	}
	return false
}
