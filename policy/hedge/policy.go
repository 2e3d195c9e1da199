package hedge

import (
	"context"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/future"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/promise"
)

// DecorateAsyncFunc is the hedge's layer as package resilience composes it: it returns
// next hedged by h, for calls of argument A that return a future of T. Its parameter and
// result have a function type of this module's own, which code outside the module cannot
// name; its underlying type is func(ctx context.Context, a A) *async.Future[T], so a
// function of that shape passes as next and the result can be called, or assigned to a
// variable of that shape, as the examples do. To hedge a function within a composition of
// policies, wrap it with resilience.WrapAsync (or WrapAsync1) and a resilience.Hedge spec
// instead. There is no synchronous counterpart: to hedge a synchronous fn, decorate
// func(ctx context.Context, a A) *async.Future[T] { return async.Go(ctx, ...) } and Await
// the future.
//
// How a call goes:
//   - A ctx that is nil or already done when the call arrives starts nothing, publishes
//     nothing and is not counted by the budget: the future fails with ctx's error
//     (policy.ErrNilContext for a nil ctx).
//   - Otherwise the call counts in h's budget and attempt 1 starts at once. Each attempt
//     runs next with a context of its own, derived from ctx, that the hedge cancels when
//     the attempt is no longer needed (see below).
//   - Another attempt starts, up to MaxAttempts in all, when no result has arrived Delay
//     after the last attempt started (a timer of h's clock: no goroutine waits), or at
//     once when an attempt fails with an error that counts: not matching AbortOn and,
//     when On is set, matching it (errors.Is). Each new attempt must be allowed by the
//     budget (see Budget); one that is refused is not started, EventSkipped is published,
//     and the call tries no further hedge: it goes on with the attempts already running.
//   - An attempt that fails with an error matching AbortOn ends the call at once with
//     that error, every other attempt canceled. An error that does not count (outside a
//     non-empty On list) is a result but not a reason to hedge: the call waits for the
//     attempts still in flight (the delay's timer keeps running), and fails with it if
//     there are none.
//   - The first success completes the call. Every other attempt is then canceled through
//     every inner layer: its future's Cancel is called (an inner circuit breaker records
//     nothing for a future completed with async.ErrCanceled, an inner bulkhead frees its
//     slot, a waiting rate limiter gives its permit back), then its context is canceled;
//     the delay's timer is stopped.
//   - When every attempt has failed and none can start, the call fails with the last
//     error to arrive.
//   - Cancel on the call's future, or ctx ending, cancels every attempt and the timer; a
//     ctx that ends fails the call with ctx's error (context.Canceled or
//     context.DeadlineExceeded), as does an attempt's failure that arrives once ctx has
//     ended.
//   - A nil future from next counts as a future failed with async.ErrNilFuture. A panic
//     in next goes on up the goroutine that started the attempt (the caller's for
//     attempt 1, a clock timer's or the one that completed the previous attempt for the
//     others) and ends the call first: the timer is stopped, the other attempts are
//     canceled and the call's future, if the caller has it, fails with async.ErrPanicked.
//     A panic in attempt 1's next reaches the caller, its context canceled, nothing left
//     behind.
//
// Cancelling the returned future cancels every attempt and the timer; Cancel reports true
// only when every attempt started was still waiting to start in an inner layer (e.g.
// queued in a bulkhead), and so never will. Whichever comes first of Cancel and another
// end of the call is the call's end, and only it is recorded and published: an attempt's
// result arriving while Cancel is under way publishes no HedgeWon or HedgeFailed, and
// once another end has begun, Cancel returns false and changes nothing.
//
// No goroutine waits for a call: the delay is a timer of h's clock, and the end of ctx is
// watched by one context.AfterFunc hook per call that waits (for a ctx whose Done channel
// is not the standard library's, the context package watches it with a goroutine). An
// attempt's context registers nothing on ctx: it has ctx's deadline and values; its Err
// is nil until the hedge cancels it, then ctx's error if ctx has ended, else
// context.Canceled; and its Done channel, made at the first call of Done, is closed when
// the hedge cancels it: when the attempt's result arrives, when the call ends (when
// another attempt wins or the future is canceled while next is running the attempt, once
// next has returned, its future canceled first), and when ctx ends (through the call's
// hook; if ctx ends while next is running attempt 1, once next has returned). A context
// derived from an attempt's (context.WithCancel, or context.AfterFunc) is canceled with
// it, on the goroutine that cancels it, and costs no goroutine and no map; the first
// async.Go called with an attempt's context gives fn a context that behaves as
// context.WithCancel of it, in one allocation (context.WithCancel of it costs six, with
// its registration on it and the attempt's Done channel). A call whose attempt 1 returns
// a future already complete with a success, or with an error that does not start a
// hedge, returns that future as it is: it allocates only attempt 1's context, one object
// (and what next allocates). A call that waits allocates its state (which
// holds its future), its timer and the timer's function, its context hook when ctx can
// end, and for each attempt its context and its completion callback: hedging async.Go
// with context.Background(), a call whose attempt 1 answers costs at most eight
// allocations with async.Go's own two and the context it gives fn.
//
// Events: EventHedged, EventWon, EventSkipped and EventFailed, as their documentation
// tells, published with ctx. With a recorder (a registry's observer,
// resilience.WithObserver), each call is recorded once, with ctx, when it ends:
// observe.ResultSucceeded when an attempt succeeded, else observe.ResultFailed with Err
// the error the call fails with (ctx's error, async.ErrCanceled for a call ended by
// Cancel on its future, async.ErrPanicked); Attempts is the attempts started, Latency the
// time from the call's arrival to its end on h's clock. A call refused on arrival because
// its ctx was nil or done, a call whose first attempt panics on the caller's goroutine,
// and a call while the hedge is disabled are not recorded. Recording adds no allocation
// and reads the clock once more, at the call's end. A disabled hedge lets every call
// through to next as a single attempt, but for a nil or done ctx, whose error it returns
// as is, and a nil future from next, which becomes a future failed with
// async.ErrNilFuture.
func DecorateAsyncFunc[A, T any](h *Hedge, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if !h.enabled {
		return decorate.GuardAsync(next)
	}
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		begin := h.clk.Now()
		if h.budget != nil {
			h.budget.arrive(begin)
		}
		actx := newAttemptCtx(ctx)
		f := decorate.Start(next, actx, a, actx.cancel) // a panic in next cancels actx
		_, done, err := f.Result()
		if done && (err == nil || !h.cls.Error(err)) {
			actx.cancel()
			if h.events.Rec != nil {
				h.record(ctx, 1, begin, err)
			}
			return f
		}
		return hedged(h, next, ctx, a, begin, f, actx, done)
	}
}

// A call is one hedged call whose attempt 1 did not settle it at once: its attempts, the
// timer of the next one and the hook on the caller's context. Its fields after mu change
// only under mu; whichever of a success, a final failure, Cancel, the context ending or a
// panic comes first claims the future (Cancel: before its hook runs) and sets done, and
// only that one records the call and completes the future.
type call[A, T any] struct {
	h       *Hedge
	next    decorate.AsyncFunc[A, T]
	ctx     context.Context
	a       A
	begin   time.Duration      // clock time at which the call arrived
	fut     future.Future[T]   // the call's future, whose Cancel calls c.StopWork
	p       promise.Promise[T] // completes fut; claimed by the call's end
	onTimer func()             // c.timerFired, bound once

	mu       sync.Mutex
	done     bool
	started  int  // attempts started
	inflight int  // attempts started whose result has not arrived
	noHedge  bool // the budget refused a hedge: no further one is tried
	stale    int  // timer functions still to come for timers that Stop could not stop
	timer    clock.Timer
	stopCtx  func() bool // removes the hook on ctx; nil when none is registered
	att      [maxAttempts]attempt[T]
}

// An attempt is one started attempt of a call.
type attempt[T any] struct {
	ctx *attemptCtx      // its context; nil once its result has arrived
	fut *async.Future[T] // nil until next has returned, and once its result has arrived
}

// hedged goes on with a call whose attempt 1, f (whose context is actx), has not settled
// it: f is pending, or failed with an error that starts a hedge at once.
func hedged[A, T any](h *Hedge, next decorate.AsyncFunc[A, T], ctx context.Context, a A, begin time.Duration,
	f *async.Future[T], actx *attemptCtx, settled bool) *async.Future[T] {
	c := &call[A, T]{h: h, next: next, ctx: ctx, a: a, begin: begin}
	fut, p := promise.Init[T](&c.fut, c)
	c.p = p
	c.onTimer = c.timerFired
	c.mu.Lock()
	c.started, c.inflight = 1, 1
	c.att[0] = attempt[T]{ctx: actx, fut: f}
	if !settled { // its result starts the next attempt at once otherwise
		elapsed := sat.Left(h.clk.Now(), begin)
		c.timer = h.clk.AfterFunc(max(h.delay-elapsed, 0), c.onTimer)
	}
	if ctx.Done() != nil {
		// Never runs c.ctxEnded on this goroutine: it waits for c.mu on its own.
		c.stopCtx = context.AfterFunc(ctx, c.ctxEnded)
	}
	c.mu.Unlock()
	f.OnComplete(c.resultOf(1))
	return fut
}

func (c *call[A, T]) resultOf(n int) func(T, error) {
	return func(v T, err error) { c.result(n, v, err) }
}

// result handles the result of attempt n. It runs on the goroutine that completes the
// attempt's future, often one that async.Go started with the smallest stack: its success
// path is kept shallow (the error paths and the events are out of line in failed and
// publishWon), so that ending the call does not grow that goroutine's stack.
func (c *call[A, T]) result(n int, v T, err error) {
	c.mu.Lock()
	at := &c.att[n-1]
	own := at.ctx
	*at = attempt[T]{}
	if c.done {
		c.mu.Unlock()
		own.cancel()
		return
	}
	c.inflight--
	if err != nil {
		c.failed(n, err, own)
		return
	}
	if !c.claim(own) {
		return
	}
	if c.started > 1 {
		c.publishWon(n)
	}
	c.finish(v, nil, own)
}

// publishWon publishes EventWon for attempt n, out of line (see result).
//
//go:noinline
func (c *call[A, T]) publishWon(n int) { c.h.publish(c.ctx, EventWon, n, 0, nil) }

// failed handles attempt n's failure with err; own is its context. Called with c.mu held;
// it unlocks it.
func (c *call[A, T]) failed(n int, err error, own *attemptCtx) {
	h := c.h
	if cerr := c.ctx.Err(); cerr != nil { // ended, and its hook has yet to run
		if c.claim(own) {
			var zero T
			c.finish(zero, cerr, own)
		}
		return
	}
	if h.cls.Excluded(err) {
		c.fail(n, err, own)
		return
	}
	if h.cls.Error(err) && c.canHedge() {
		if h.allowed(c.ctx, c.started+1) {
			c.stopTimer()
			c.start(err, own)
			return
		}
		c.skip()
	}
	if c.inflight == 0 {
		c.fail(n, err, own)
		return
	}
	c.mu.Unlock()
	own.cancel()
}

// timerFired starts the next attempt, its delay over.
func (c *call[A, T]) timerFired() {
	c.mu.Lock()
	if c.stale > 0 { // the function of a timer that Stop could not stop
		c.stale--
		c.mu.Unlock()
		return
	}
	if c.done || c.timer == nil {
		c.mu.Unlock()
		return
	}
	c.timer = nil
	if err := c.ctx.Err(); err != nil { // ended, and its hook has yet to run
		if c.claim(nil) {
			var zero T
			c.finish(zero, err, nil)
		}
		return
	}
	if !c.canHedge() {
		c.mu.Unlock()
		return
	}
	if !c.h.allowed(c.ctx, c.started+1) {
		c.skip()
		c.mu.Unlock()
		return
	}
	c.start(nil, nil)
}

// canHedge reports whether another attempt may be tried: not once Cancel has begun
// ending the call, whose hook is to come. c.mu must be held.
func (c *call[A, T]) canHedge() bool {
	return c.started < c.h.max && !c.noHedge && !c.p.Begun()
}

// skip records the budget's refusal of the next attempt. c.mu must be held.
func (c *call[A, T]) skip() {
	c.noHedge = true
	c.stopTimer()
	c.h.publish(c.ctx, EventSkipped, c.started+1, 0, nil)
}

// stopTimer stops the timer of the next attempt, if any. c.mu must be held.
func (c *call[A, T]) stopTimer() {
	if c.timer == nil {
		return
	}
	if !c.timer.Stop() {
		c.stale++ // its function runs, or waits for c.mu: it must do nothing
	}
	c.timer = nil
}

// start starts the next attempt, which the budget has allowed; trigger is the error that
// started it at once (nil after the delay), prev the context of the attempt whose result
// led to it, canceled once c.mu is released (nil: none). Called with c.mu held; it
// unlocks it.
func (c *call[A, T]) start(trigger error, prev *attemptCtx) {
	h := c.h
	c.started++
	n := c.started
	c.inflight++
	actx := newAttemptCtx(c.ctx)
	c.att[n-1].ctx = actx
	now := h.clk.Now()
	h.events.PublishCtx(c.ctx, policy.Event{Kind: EventHedged, At: now, Attempt: n, Wait: sat.Left(now, c.begin), Err: trigger})
	if c.canHedge() {
		c.timer = h.clk.AfterFunc(h.delay, c.onTimer)
	}
	c.mu.Unlock()
	prev.cancel()
	f := c.run(actx)
	c.mu.Lock()
	if c.done { // ended while next ran: its future is canceled first, then its context
		c.mu.Unlock()
		f.Cancel()
		actx.cancel()
		return
	}
	c.att[n-1].fut = f
	c.mu.Unlock()
	f.OnComplete(c.resultOf(n))
}

// run calls next for an attempt after the first, and ends the call with async.ErrPanicked if
// next panics (the panic goes on).
func (c *call[A, T]) run(actx *attemptCtx) *async.Future[T] {
	ok := false
	defer func() {
		if !ok {
			c.mu.Lock()
			if c.done { // ended while next ran: its context is left to cancel
				c.mu.Unlock()
				actx.cancel()
				return
			}
			if c.claim(actx) {
				var zero T
				c.finish(zero, async.ErrPanicked, actx)
			}
		}
	}()
	f := c.next(actx, c.a)
	ok = true
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}

// fail ends the call with attempt n's error err, publishing EventFailed if it hedged,
// unless Cancel has begun ending it. Called with c.mu held; it unlocks it.
func (c *call[A, T]) fail(n int, err error, own *attemptCtx) {
	if !c.claim(own) {
		return
	}
	if c.started > 1 {
		c.h.publish(c.ctx, EventFailed, n, 0, err)
	}
	var zero T
	c.finish(zero, err, own)
}

// claim claims the call's future for the end about to be published, recorded and
// completed, and reports whether it won. When Cancel has begun first, it unlocks c.mu,
// cancels own (the context of the attempt whose result came, already taken out of the
// call; nil: none) and reports false: the cancel hook, which is to come, ends the call.
// Called with c.mu held.
func (c *call[A, T]) claim(own *attemptCtx) bool {
	if c.p.Claim() {
		return true
	}
	c.mu.Unlock()
	own.cancel()
	return false
}

// finish ends the call and completes its future with (v, err), once every other attempt,
// the timer and the hook are canceled, and the call's outcome recorded; own is the
// context of the attempt that ended it, canceled too (nil: none). The future is claimed
// (claim). Called with c.mu held; it unlocks it.
func (c *call[A, T]) finish(v T, err error, own *attemptCtx) {
	started := c.started
	c.end()
	own.cancel()
	if c.h.events.Rec != nil {
		c.h.record(c.ctx, started, c.begin, err)
	}
	c.p.Complete(v, err)
}

// StopWork is the future's cancel hook: the future has already failed with
// async.ErrCanceled, which is recorded as the call's outcome.
func (c *call[A, T]) StopWork() bool {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return false
	}
	started := c.started
	notStarted := c.end()
	if c.h.events.Rec != nil {
		c.h.record(c.ctx, started, c.begin, async.ErrCanceled)
	}
	return notStarted
}

// ctxEnded is the hook on the caller's context.
func (c *call[A, T]) ctxEnded() {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	c.stopCtx = nil // it has run
	if c.claim(nil) {
		var zero T
		c.finish(zero, c.ctx.Err(), nil)
	}
}

// end marks the call done, stops the timer, removes the hook on the context and cancels
// every attempt whose result has not arrived: its future first, so that the inner layers
// see async.ErrCanceled rather than an error from its context, then its context. An
// attempt whose next is still running has no future yet: start (or run, if next panics)
// cancels it in the same order once next returns, unless the caller's context has ended,
// whose end its context follows at once. It reports whether every attempt
// started was canceled before it started in an inner layer. Called with c.mu held; it
// unlocks it.
func (c *call[A, T]) end() bool {
	c.done = true
	c.stopTimer()
	stopCtx := c.stopCtx
	c.stopCtx = nil
	live := false
	for i := range c.att[:c.started] {
		live = live || c.att[i].ctx != nil
	}
	if live {
		return c.cancelAttempts(stopCtx)
	}
	c.mu.Unlock() // every attempt's result has arrived
	if stopCtx != nil {
		stopCtx()
	}
	return false
}

// cancelAttempts is end when some attempt's result has not arrived: it removes the hook
// on the context (stopCtx, nil: none) and cancels those attempts, and reports whether
// every attempt started was canceled before it started in an inner layer. Called with
// c.mu held; it unlocks it.
func (c *call[A, T]) cancelAttempts(stopCtx func() bool) bool {
	n := c.started
	att := c.att
	c.att = [maxAttempts]attempt[T]{}
	c.mu.Unlock()
	if stopCtx != nil {
		stopCtx()
	}
	notStarted := true
	live := c.ctx.Err() == nil // else the attempts' contexts end with it, at once
	for _, at := range att[:n] {
		if at.ctx != nil && at.fut == nil && live { // next is running: start cancels it
			notStarted = false
			continue
		}
		notStarted = at.fut != nil && at.fut.Cancel() && notStarted
		at.ctx.cancel()
	}
	return notStarted
}
