package retry

import (
	"context"
	"sync"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// NewPolicy returns r as a policy of layer LayerRetry (SPEC CO-1), for calls returning T.
func NewPolicy[T any](r *Retry) policy.Policy[T] {
	return policy.Decorators[T]{
		L:    policy.LayerRetry,
		Sync: func(next policy.Func[struct{}, T]) policy.Func[struct{}, T] { return DecorateFunc(r, next) },
		Async: func(next policy.AsyncFunc[struct{}, T]) policy.AsyncFunc[struct{}, T] {
			return DecorateAsyncFunc(r, next)
		},
	}
}

// DecorateFunc returns next retried by r. Each call attempts next; a failure that may be
// retried (see Retryable) is attempted again after its wait, slept on r's clock on the
// caller's goroutine, up to MaxAttempts attempts in all.
//
// It returns the first successful attempt's result, or the last attempt's result and
// error as they are when the retry gives up (attempts exhausted, or an error that is not
// retried: AbortOn, outside RetryOn, or policy.NeverRetried, SPEC CO-4). When ctx ends
// before a new attempt or during a wait, the retries stop and the error matches both the
// last attempt's error and ctx's error.
//
// A call that succeeds the first time allocates nothing and publishes nothing; a call
// that fails at once with an error that is not retried allocates nothing either. A
// disabled retry returns next itself.
func DecorateFunc[A, T any](r *Retry, next policy.Func[A, T]) policy.Func[A, T] {
	if !r.cfg.Enabled {
		return next
	}
	return func(ctx context.Context, a A) (T, error) {
		v, err := next(ctx, a)
		if err == nil {
			return v, nil
		}
		return retrySync(r, ctx, a, next, v, err)
	}
}

// retrySync goes on after the first attempt failed with (v, err).
func retrySync[A, T any](r *Retry, ctx context.Context, a A, next policy.Func[A, T], v T, err error) (T, error) {
	for n := 1; ; n++ {
		if d, derr := r.decide(ctx, n, err); d != retryIt {
			return v, derr
		}
		w := r.waitAfter(n, err)
		r.publish(policy.RetryAttempt, n, w, err)
		cerr := r.clk.Sleep(ctx, w)
		if cerr == nil {
			cerr = ctx.Err() // the context may end as the wait does (a timer on a manual clock)
		}
		if cerr != nil {
			err = stopped(err, cerr)
			r.publish(policy.RetryExhausted, n, 0, err)
			return v, err
		}
		if v, err = next(ctx, a); err == nil {
			return v, nil
		}
	}
}

// DecorateAsyncFunc returns next retried by r for calls that return a future (SPEC AS-1…AS-4).
// The first attempt starts at once; when an attempt's future fails with an error that
// may be retried, the next attempt is scheduled on r's clock with AfterFunc: no goroutine
// waits (SPEC AS-2). The returned future completes with the first successful attempt's
// result, or as DecorateFunc's call returns when the retry gives up or ctx ends; ctx
// ending during a wait stops the timer and fails the future at once.
//
// Cancelling the returned future stops a pending wait, so that no further attempt starts
// (SPEC AS-3), and cancels the attempt in flight. A first attempt whose future is already
// complete with a success, or with an error that is not retried, is returned as it is,
// with no allocation. A disabled retry returns next itself.
func DecorateAsyncFunc[A, T any](r *Retry, next policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T] {
	if !r.cfg.Enabled {
		return next
	}
	return func(ctx context.Context, a A) *async.Future[T] {
		first := next(ctx, a)
		if _, done, err := first.Result(); done {
			if err == nil {
				return first
			}
			if r.final(1, err) {
				r.publish(policy.RetryExhausted, 1, 0, err)
				return first
			}
		}
		return startRun(r, ctx, a, next, first)
	}
}

// A run is one asynchronous call and its retries. Its state moves from running (an
// attempt in flight) to waiting (a wait between attempts) and back, and ends in done;
// every move happens under mu, and whoever moves it to done completes the future.
type run[A, T any] struct {
	r        *Retry
	ctx      context.Context
	a        A
	next     policy.AsyncFunc[A, T]
	complete func(T, error)
	onResult func(T, error) // ru.attemptDone and ru.fire, bound once: no closure per attempt
	onTimer  func()

	mu      sync.Mutex
	state   runState
	n       int              // attempts started
	inner   *async.Future[T] // the attempt in flight, while running
	timer   clock.Timer      // the pending wait, while waiting (nil while its event is published)
	lastV   T                // the failed attempt's result, while waiting
	lastErr error
	stopCtx func() bool // unregisters ctxDone; nil for a context that never ends
}

type runState int

const (
	running runState = iota
	waiting
	done
)

func startRun[A, T any](r *Retry, ctx context.Context, a A, next policy.AsyncFunc[A, T], first *async.Future[T]) *async.Future[T] {
	ru := &run[A, T]{r: r, ctx: ctx, a: a, next: next, n: 1, inner: first}
	out, complete := async.NewCancellablePromise[T](ru.cancel)
	ru.complete, ru.onResult, ru.onTimer = complete, ru.attemptDone, ru.fire
	if ctx.Done() != nil {
		ru.mu.Lock()
		ru.stopCtx = context.AfterFunc(ctx, ru.ctxDone)
		ru.mu.Unlock()
	}
	first.OnComplete(ru.onResult)
	return out
}

// attemptDone handles the result of the attempt in flight.
func (ru *run[A, T]) attemptDone(v T, err error) {
	r := ru.r
	ru.mu.Lock()
	if ru.state != running { // cancelled
		ru.mu.Unlock()
		return
	}
	ru.inner = nil
	n := ru.n
	if err == nil {
		ru.end(v, nil, 0) // unlocks
		return
	}
	if r.final(n, err) {
		ru.end(v, err, n)
		return
	}
	if cerr := ru.ctx.Err(); cerr != nil {
		ru.end(v, stopped(err, cerr), n)
		return
	}
	ru.state, ru.lastV, ru.lastErr = waiting, v, err
	w := r.waitAfter(n, err)
	ru.mu.Unlock()

	// Published before the next attempt can be scheduled, so that events come in order.
	r.publish(policy.RetryAttempt, n, w, err)

	ru.mu.Lock()
	if ru.state != waiting { // cancelled while the event was published
		ru.mu.Unlock()
		return
	}
	if cerr := ru.ctx.Err(); cerr != nil { // ended while the event was published
		ru.stopWaiting(cerr) // unlocks
		return
	}
	ru.timer = r.clk.AfterFunc(w, ru.onTimer)
	ru.mu.Unlock()
}

// fire starts the next attempt when its wait is over.
func (ru *run[A, T]) fire() {
	ru.mu.Lock()
	if ru.state != waiting || ru.timer == nil {
		ru.mu.Unlock()
		return
	}
	ru.timer = nil
	if cerr := ru.ctx.Err(); cerr != nil {
		ru.stopWaiting(cerr)
		return
	}
	var zero T
	ru.state, ru.lastV, ru.lastErr = running, zero, nil
	ru.n++
	ru.mu.Unlock()

	f := ru.next(ru.ctx, ru.a)

	ru.mu.Lock()
	if ru.state != running { // cancelled while next ran
		ru.mu.Unlock()
		f.Cancel()
		return
	}
	ru.inner = f
	ru.mu.Unlock()
	f.OnComplete(ru.onResult)
}

// ctxDone stops a run whose context ended during a wait. A run with an attempt in flight
// is left to that attempt, which sees the same context; its result is checked against
// the context before any further attempt.
func (ru *run[A, T]) ctxDone() {
	ru.mu.Lock()
	if ru.state != waiting || ru.timer == nil {
		ru.mu.Unlock()
		return
	}
	ru.stopWaiting(ru.ctx.Err())
}

// stopWaiting ends a waiting run whose context ended with cerr. Called with mu held; it
// unlocks it.
func (ru *run[A, T]) stopWaiting(cerr error) {
	if ru.timer != nil {
		ru.timer.Stop()
		ru.timer = nil
	}
	ru.end(ru.lastV, stopped(ru.lastErr, cerr), ru.n)
}

// end completes the run with (v, err), after publishing RetryExhausted for attempt
// exhausted when it is not 0. Called with mu held; it unlocks it.
func (ru *run[A, T]) end(v T, err error, exhausted int) {
	var zero T
	ru.state, ru.lastV, ru.lastErr = done, zero, nil
	stopCtx := ru.stopCtx
	ru.mu.Unlock()
	if stopCtx != nil {
		stopCtx()
	}
	if exhausted > 0 {
		ru.r.publish(policy.RetryExhausted, exhausted, 0, err)
	}
	ru.complete(v, err)
}

// cancel is the future's cancel hook (the future is already completed with
// async.ErrCancelled): no further attempt starts, and the one in flight is cancelled.
// The call has started, so it reports false.
func (ru *run[A, T]) cancel() bool {
	ru.mu.Lock()
	if ru.state == done {
		ru.mu.Unlock()
		return false
	}
	var zero T
	ru.state, ru.lastV, ru.lastErr = done, zero, nil
	timer, inner, stopCtx := ru.timer, ru.inner, ru.stopCtx
	ru.timer, ru.inner = nil, nil
	ru.mu.Unlock()
	if stopCtx != nil {
		stopCtx()
	}
	if timer != nil {
		timer.Stop()
	}
	if inner != nil {
		inner.Cancel()
	}
	return false
}
