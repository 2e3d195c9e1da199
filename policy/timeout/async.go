package timeout

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/internal/promise"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// decorateAsyncFunc is Decorate for a decorate.AsyncFunc: see NewPolicy.
func decorateAsyncFunc[A, T any](t *Timeout, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		l := t.cur.Load()
		if l.cfg.Disabled {
			if f := next(ctx, a); f != nil {
				return f
			}
			return async.Failed[T](async.ErrNilFuture)
		}
		c := &asyncCall[T]{l: l, ctx: newClockCtx(ctx, l), caller: ctx}
		if t.events.Timed {
			c.start = t.now()
		}
		fut, p := promise.New[T](c.cancel)
		c.p = p
		c.timer = t.clk.AfterFunc(l.cfg.Duration, c.expire)
		returned := false
		defer func() {
			if !returned && c.end() { // next panicked: no deadline to come
				c.timer.Stop()
				c.ctx.cancel(context.Canceled)
			}
		}()
		inner := next(c.ctx, a)
		returned = true
		c.mu.Lock()
		c.inner = inner
		c.mu.Unlock()
		if c.state.Load() != running { // timed out or canceled while next ran
			inner.Cancel()
			return fut
		}
		inner.OnComplete(c.finish)
		return fut
	}
}

// The states of an asynchronous call: whichever of the inner future, the deadline and
// Cancel comes first claims the outer future and moves the call from running to over;
// only that one records the call and completes the future.
const (
	running int32 = iota
	over
)

type asyncCall[T any] struct {
	state  atomic.Int32
	l      *limit // the configuration in force when the call started, and its timeout
	ctx    *clockCtx
	caller context.Context    // the caller's context, with which the call is observed
	start  time.Duration      // clock time at which the call started; read for a recorder only
	timer  clock.Timer        // set before next runs; read only after the call is over
	p      promise.Promise[T] // completes the outer future
	mu     sync.Mutex
	inner  *async.Future[T] // set once next has returned
}

// end claims the outer future for the end of the call that calls it, and reports whether
// it won; Cancel, once it has begun, wins (its hook then ends the call).
func (c *asyncCall[T]) end() bool {
	if !c.p.Claim() {
		return false
	}
	c.state.Store(over)
	return true
}

// finish completes the outer future with the inner one's result, if in time.
func (c *asyncCall[T]) finish(v T, err error) {
	if !c.end() {
		return
	}
	c.timer.Stop()
	c.ctx.cancel(context.Canceled)
	if t := c.l.t; t.events.Rec != nil {
		t.record(c.caller, ended(err), c.start, err)
	}
	c.p.Complete(v, err)
}

// expire runs on the deadline's timer.
func (c *asyncCall[T]) expire() {
	c.ctx.expire()
	if !c.end() {
		return
	}
	c.l.publish(c.caller, c.l.err)
	if t := c.l.t; t.events.Rec != nil {
		t.record(c.caller, observe.ResultTimedOut, c.start, c.l.err)
	}
	var zero T
	c.p.Complete(zero, c.l.err)
	c.mu.Lock()
	inner := c.inner
	c.mu.Unlock()
	if inner != nil {
		inner.Cancel()
	}
}

// cancel is the outer future's cancel hook: Cancel has won the outer future, which has
// already failed with async.ErrCanceled, so neither finish nor expire acts.
func (c *asyncCall[T]) cancel() bool {
	c.state.Store(over)
	c.timer.Stop()
	c.ctx.cancel(context.Canceled)
	if t := c.l.t; t.events.Rec != nil {
		t.record(c.caller, observe.ResultFailed, c.start, async.ErrCanceled)
	}
	c.mu.Lock()
	inner := c.inner
	c.mu.Unlock()
	if inner == nil {
		return false // next is running now; its future is canceled when it returns
	}
	return inner.Cancel()
}
