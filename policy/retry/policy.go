package retry

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// NewPolicy returns r as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate returns next retried by r. Each call attempts next; a failure that may be
// retried (see below) is attempted again after its wait (see Config), slept on r's clock
// on the caller's goroutine, up to MaxAttempts attempts in all.
//
// Which errors are retried:
//   - an error for which errors.As finds a policy.NeverRetried that reports true is never
//     retried, whatever the lists say: that is how an open circuit breaker's rejection
//     ends the retries at once;
//   - an error matching AbortOn (errors.Is) is not retried;
//   - otherwise, with On set, only errors matching it are retried; without it, every
//     error is, rate-limiter rejections included (add ratelimit.ErrExceeded to AbortOn to
//     fail fast instead);
//   - an outcome the lists do not retry, a result with a nil error included, is retried
//     when If's predicate returns true for it (AbortOn and policy.NeverRetried still
//     win).
//
// It returns the first successful attempt's result, or the last attempt's result and
// error as they are when the retry gives up (attempts exhausted, an error that is not
// retried: AbortOn, outside On, or policy.NeverRetried, or a wait before the next
// attempt that would end after ctx's deadline, which is not started). When ctx ends
// before a new attempt or during a wait, the retries stop and the error matches both the
// last attempt's error and ctx's error. A ctx that is nil or already done when the call
// arrives runs no attempt and publishes nothing: the call returns ctx's error
// (policy.ErrNilContext for a nil ctx) as is.
//
// There is no rejection error of its own: when the retry gives up, the last attempt's
// error is returned as is, so errors.Is and errors.As see it unchanged. That includes a
// retry that stops before a wait that would end after the caller's context's deadline
// (the backoff, a server's Retry-After, or the wait for a rate limiter's permit): such a
// wait is never started, and the last attempt's outcome is returned at once, as it is.
// The time left is read on the real clock, also when the retry's clock is a manual one.
// The one exception is the caller's context ending between attempts: the retries stop
// (the context is checked before each new attempt and during each wait) and the error
// then matches both the last attempt's error and the context's (context.Canceled or
// context.DeadlineExceeded).
//
// In a registry's composition with a layer that limits attempts (a retry budget,
// resilience.RetryBudget), the retry asks that layer before each wait, after the deadline
// check. One it refuses ends the call as a wait past the deadline does: the last
// attempt's result and error are returned as they are, EventAborted is published (the
// limiting layer publishes its own refusal) and the call is recorded as aborted. An
// attempt it allowed that is then not made, because ctx ended or the future was canceled
// during the wait, is given back to it.
//
// Events: EventAttempt before each wait (Wait = the wait); at the end of a call that
// failed, EventExhausted when the last of MaxAttempts attempts failed with an outcome
// that would have been retried, or EventAborted when the retry stopped on an outcome it
// does not retry (the first attempt's included), because ctx ended, or before a wait that
// would end after ctx's deadline (no EventAttempt then). Events are published with ctx;
// see EventAttempt and the others for what each tells.
//
// A recorder (a registry's observer, resilience.WithObserver) gets the events with the
// context of the call that caused them (ConfigChanged with context.Background()), and is
// told, once per call, with the call's context, its outcome when it ends, with Attempts
// the attempts made: observe.ResultSucceeded when an attempt succeeded;
// observe.ResultFailed when every attempt was made and the last failed with an outcome
// the retry would have retried (the call's EventExhausted, or a result If retries, with
// its nil error, when the attempts run out); observe.ResultAborted when the retry stopped
// on an outcome it does not retry, because the caller's context ended, or before a wait
// that would end after the context's deadline (the call's EventAborted), and for an
// asynchronous call ended by Cancel on its future (Err async.ErrCanceled). Err is the
// error the call returns. A call refused on arrival because its context was nil or done,
// and a call while the retry is disabled, are not recorded. Recording adds no allocation
// and reads no clock. A call that succeeds the first time still allocates nothing.
//
// Each call reads r's configuration once, as it arrives, and keeps it to its end: a
// reload made while it runs applies from the next call.
//
// A call that succeeds the first time allocates nothing and publishes nothing; a call that
// fails at once with an error that is not retried allocates nothing either. A disabled
// retry lets every call through to next, a single attempt, but for a nil or done ctx,
// whose error it returns as is; so does a Retry not built by New.
//
// Its DecorateAsync returns next retried by r for calls that return a future. The first
// attempt starts at once; when an attempt's future fails with an error that may be
// retried, the next attempt is scheduled on r's clock with AfterFunc: no goroutine waits.
// The returned future completes with the first successful attempt's
// result, or as Decorate's call returns when the retry gives up or ctx ends (a wait
// that would end after ctx's deadline is not armed: the future completes at once); ctx
// ending during a wait stops the timer and fails the future at once. Events, and the
// outcome a recorder is told when the future completes, are Decorate's, with ctx; a
// future ended by Cancel is recorded as observe.ResultAborted with async.ErrCanceled and
// the attempts started; an attempt's result, or a wait's end, arriving while Cancel is
// under way is neither recorded nor followed by another attempt.
//
// A ctx that is nil or already done when the call arrives runs no attempt and publishes
// nothing: the future fails with ctx's error (policy.ErrNilContext for a nil ctx). An
// attempt whose next returns a nil future fails with async.ErrNilFuture, an error
// retried as any other unless the lists say otherwise.
//
// Cancelling the returned future stops a pending wait, so that no further attempt starts,
// and cancels the attempt in flight. A first attempt whose future is already complete with
// a success, or with an error that is not retried, is returned as it is, with no
// allocation. As with Decorate, each call keeps the configuration in force when it
// arrives. A disabled retry lets every call through to next, a single attempt, but for a
// nil or done ctx, whose error it returns as is; so does a Retry not built by New.
func NewPolicy[T any](r *Retry) policy.Policy[T] {
	return decorate.Of(Layer, r, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the retry's layer as package resilience composes it: it retries next, a
// function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync retry a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: retry a function
// with NewPolicy[T](r).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.Retry spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](r *Retry, next F) F {
	return decorate.Dispatch(r, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

// decorateFunc is Decorate for a decorate.Func: see NewPolicy.
func decorateFunc[A, T any](r *Retry, next decorate.Func[A, T]) decorate.Func[A, T] {
	if !r.built() {
		return decorate.Guard(next)
	}
	pred := contract.For[T](r.cls.If)
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		c := r.cfg.Load() // the call's configuration, to its end
		v, err := next(ctx, a)
		if c.Disabled {
			return v, err
		}
		if err == nil && (pred == nil || !pred(v, nil)) {
			r.record(ctx, observe.ResultSucceeded, 1, nil)
			return v, err
		}
		return retrySync(r, c, pred, ctx, a, next, v, err)
	}
}

// retrySync goes on after the first attempt, of a call configured by c, ended with
// (v, err), an outcome to retry.
func retrySync[A, T any](r *Retry, c *Config, pred func(T, error) bool, ctx context.Context, a A, next decorate.Func[A, T], v T, err error) (T, error) {
	for n := 1; ; n++ {
		if d, derr := decide(r, c, pred, ctx, n, v, err); d != retryIt {
			return v, derr
		}
		w := r.waitAfter(c, n, err)
		at, ok := r.admit(ctx, w, n+1)
		if !ok { // the last outcome, as is: a refused retry changes nothing of it
			if err != nil { // a result If retries, with its nil error, publishes nothing
				r.publish(ctx, EventAborted, n, 0, err)
			}
			r.record(ctx, observe.ResultAborted, n, err)
			return v, err
		}
		r.publish(ctx, EventAttempt, n, w, err)
		cerr := r.clk.Sleep(ctx, w)
		if cerr == nil {
			cerr = ctx.Err() // the context may end as the wait does (a timer on a manual clock)
		}
		if cerr != nil {
			r.giveBack(at)
			err = stopped(err, cerr)
			r.publish(ctx, EventAborted, n, 0, err)
			r.record(ctx, observe.ResultAborted, n, err)
			return v, err
		}
		if v, err = next(ctx, a); err == nil && (pred == nil || !pred(v, nil)) {
			r.record(ctx, observe.ResultSucceeded, n+1, nil)
			return v, nil
		}
	}
}

// decorateAsyncFunc is Decorate for a decorate.AsyncFunc: see NewPolicy.
func decorateAsyncFunc[A, T any](r *Retry, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if !r.built() {
		return decorate.GuardAsync(next)
	}
	pred := contract.For[T](r.cls.If)
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		c := r.cfg.Load() // the call's configuration, to its end
		first := attempt(next, ctx, a)
		if c.Disabled {
			return first
		}
		if v, done, err := first.Result(); done {
			if err == nil && (pred == nil || !pred(v, nil)) {
				r.record(ctx, observe.ResultSucceeded, 1, nil)
				return first
			}
			switch outcome(r, c, pred, 1, v, err) {
			case EventAborted:
				r.publish(ctx, EventAborted, 1, 0, err)
				r.record(ctx, observe.ResultAborted, 1, err)
				return first
			case EventExhausted:
				if err != nil {
					r.publish(ctx, EventExhausted, 1, 0, err)
				}
				r.record(ctx, observe.ResultFailed, 1, err)
				return first
			}
		}
		return startRun(r, c, pred, ctx, a, next, first)
	}
}

// attempt calls next, and stands a future failed with async.ErrNilFuture for a nil one.
func attempt[A, T any](next decorate.AsyncFunc[A, T], ctx context.Context, a A) *async.Future[T] {
	if f := next(ctx, a); f != nil {
		return f
	}
	return async.Failed[T](async.ErrNilFuture)
}

// A run is one asynchronous call and its retries: an attempt in flight, then a wait
// before the next attempt, and so on, until an attempt succeeds or the retry gives up.
// Its Delayed orders every step: at most one attempt or wait at a time.
type run[A, T any] struct {
	d    delay.Delayed[T]
	r    *Retry
	c    *Config             // the call's configuration, read when it arrived
	pred func(T, error) bool // If's predicate for T; nil: none
	ctx  context.Context
	a    A
	next decorate.AsyncFunc[A, T]

	// n is the attempts started: Start adds one, and a Cancel may read it meanwhile.
	n atomic.Int32
	// granted is true from the gate's grant of the next attempt, counted at grant, until
	// Start makes it; Stop gives back a grant still held. Start and a Cancel's Stop may
	// race for it: whichever swaps it first has it, and Start without it makes nothing.
	granted atomic.Bool
	grant   time.Duration
	// stopped is set by Stop before it looks for a grant to give back: Observe, granted
	// an attempt as Stop runs (Stop may run between the Delayed's check that the call goes
	// on and Observe), sees it and gives the grant back itself.
	stopped atomic.Bool
	// Written by one step (Observe, Start, end) and read by the next: the Delayed orders
	// the steps.
	lastV   T // the last attempt's result
	lastErr error
	endKind policy.EventKind // the event end publishes (EventExhausted, EventAborted); 0: none
	endRes  observe.Result   // the result end records (ResultSucceeded, ResultFailed, ResultAborted)
}

func startRun[A, T any](r *Retry, c *Config, pred func(T, error) bool, ctx context.Context, a A, next decorate.AsyncFunc[A, T], first *async.Future[T]) *async.Future[T] {
	ru := &run[A, T]{r: r, c: c, pred: pred, ctx: ctx, a: a, next: next}
	ru.n.Store(1)
	out := ru.d.Init(r.clk, ctx, ru, ru)
	ru.d.Started(first)
	return out
}

// Observe handles the result of the attempt in flight.
func (ru *run[A, T]) Observe(v T, err error) {
	r := ru.r
	n := int(ru.n.Load())
	if err == nil && (ru.pred == nil || !ru.pred(v, nil)) {
		ru.end(v, nil, 0, observe.ResultSucceeded)
		return
	}
	switch outcome(r, ru.c, ru.pred, n, v, err) {
	case EventAborted:
		ru.end(v, err, EventAborted, observe.ResultAborted)
		return
	case EventExhausted:
		k := EventExhausted
		if err == nil { // a result If retries, returned as it is
			k = 0
		}
		ru.end(v, err, k, observe.ResultFailed)
		return
	}
	if cerr := ru.ctx.Err(); cerr != nil {
		ru.end(v, stopped(err, cerr), EventAborted, observe.ResultAborted)
		return
	}
	ru.lastV, ru.lastErr = v, err
	w := r.waitAfter(ru.c, n, err)
	at, ok := r.admit(ru.ctx, w, n+1)
	if !ok { // the last outcome, as is: a refused retry changes nothing of it
		k := EventAborted
		if err == nil { // a result If retries, returned as it is, publishes nothing
			k = 0
		}
		ru.end(v, err, k, observe.ResultAborted)
		return
	}
	ru.grant = at
	ru.granted.Store(r.gate != nil)
	if ru.stopped.Load() { // a Cancel ended the call as it was observed: no wait follows
		if ru.granted.Swap(false) {
			r.giveBack(at)
		}
		return
	}
	// Published before the next attempt can be scheduled, so that events come in order.
	r.publish(ru.ctx, EventAttempt, n, w, err)
	ru.d.StartAfter(w) // ends the run at once if ctx has ended meanwhile
}

// Start starts the next attempt, its wait over, unless a Cancel's Stop, racing it, has
// already given the gate's grant of it back: that attempt is not made.
func (ru *run[A, T]) Start() *async.Future[T] {
	if !ru.granted.Swap(false) && ru.r.gate != nil {
		return async.Failed[T](async.ErrCanceled) // the call has ended: this future is canceled
	}
	ru.n.Add(1)
	return attempt(ru.next, ru.ctx, ru.a)
}

// end completes the run with (v, err), after publishing k (EventExhausted or
// EventAborted) for the last attempt when k is not 0, and recording res.
func (ru *run[A, T]) end(v T, err error, k policy.EventKind, res observe.Result) {
	ru.lastV, ru.lastErr, ru.endKind, ru.endRes = v, err, k, res
	ru.d.End()
}

// Stop returns the run's result: end's, or the last attempt's joined with ctx's error
// when ctx ended during a wait (EventAborted). A canceled run publishes nothing, and is
// recorded as aborted.
func (ru *run[A, T]) Stop(cause error) (T, error) {
	ru.stopped.Store(true)
	if ru.granted.Swap(false) { // ended during a wait: the attempt the gate counted is not made
		ru.r.giveBack(ru.grant)
	}
	n := int(ru.n.Load())
	if cause == async.ErrCanceled {
		ru.r.record(ru.ctx, observe.ResultAborted, n, cause)
		var zero T
		return zero, cause
	}
	v, err, k, res := ru.lastV, ru.lastErr, ru.endKind, ru.endRes
	if cause != nil {
		err, k, res = stopped(err, cause), EventAborted, observe.ResultAborted
	}
	if k != 0 {
		ru.r.publish(ru.ctx, k, n, 0, err)
	}
	ru.r.record(ru.ctx, res, n, err)
	return v, err
}
