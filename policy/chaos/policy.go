package chaos

import (
	"context"
	"reflect"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/promise"
)

// NewPolicy returns c as a policy of layer Layer, for calls returning T: its Decorate
// guards a function that returns (T, error), its DecorateAsync one that returns a future.
// Below, next is that function and ctx the context of a call.
//
// Its Decorate returns next guarded by c. A call whose ctx is nil or already done
// returns ctx's error (policy.ErrNilContext for a nil ctx) as is; next does not run. A
// call that arrives while c is disabled, or that the draw leaves alone, runs next as is,
// on the caller's goroutine, allocating nothing. An injected call goes as Chaos says, on
// the caller's goroutine: the latency is the clock's Sleep (a manual clock advances by
// it), and ctx ending during it fails the call with ctx's error.
//
// Its DecorateAsync returns next guarded by c, for calls that return a future. A call
// whose ctx is nil or already done gets a future failed with ctx's error. A call not
// injected into gets next's own future (a nil one is a future failed with
// async.ErrNilFuture). An injected call without latency runs the behaviour and the
// result's function on the caller's goroutine and returns a completed future, or next's.
// An injected call with a latency returns a pending future at once: a clock timer ends the
// wait (no goroutine waits) and goes on, on the timer's goroutine, with the behaviour,
// the result or error, or next. Cancelling the future during the wait ends the call:
// Cancel returns true and next never runs; ctx ending during the wait fails the future
// with ctx's error. Once next has started, cancelling the future cancels next's future.
//
// A Result of another type than T is refused when a registry wraps the function
// (R4C-REG-010); here, each call that would return it fails instead with a
// *policy.ConfigError of code R4C-REG-010 saying so.
func NewPolicy[T any](c *Chaos) policy.Policy[T] {
	return decorate.Of(Layer, c, decorateFunc[struct{}, T], decorateAsyncFunc[struct{}, T])
}

// Decorate is the chaos policy's layer as package resilience composes it: it guards next,
// a function of any arity (its arguments carried as A) and result T, synchronous or
// returning a future, as NewPolicy's Decorate and DecorateAsync guard a function without
// argument. Its type argument F is one of this module's own function types, which code
// outside the module cannot name, so it is not for calling directly: guard a function
// with NewPolicy[T](c).Decorate (or DecorateAsync), or wrap it with resilience.Wrap and a
// resilience.Chaos spec.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](c *Chaos, next F) F {
	return decorate.Dispatch(c, next, decorateFunc[A, T], decorateAsyncFunc[A, T])
}

// injection is what an injected call of result T ends with, after its latency: the
// policy, and Result's function for T (nil: none), or the error of a Result of another
// type.
type injection[T any] struct {
	c      *Chaos
	result func(context.Context) (T, error)
	badErr error // R4C-REG-010: Result's type is not T
}

// injectionOf returns the injection of c for calls of result T.
func injectionOf[T any](c *Chaos) injection[T] {
	in := injection[T]{c: c}
	if c.result == nil {
		return in
	}
	if fn, ok := c.result.fn.(func(context.Context) (T, error)); ok {
		in.result = fn
		return in
	}
	in.badErr = r4c.Errorf(r4c.BadSpec, string(Layer), c.events.ID,
		"the chaos policy's result is a %v but the function returns %v", c.result.typ, reflect.TypeFor[T]())
	return in
}

// end runs what an injected call under st does after its latency: the behaviour, then
// the result or the fault. It returns done false when the call goes on to the function,
// else what the call returns.
func (in *injection[T]) end(ctx context.Context, st *state) (done bool, v T, err error) {
	c := in.c
	if c.behavior != nil {
		c.injected(ctx, kindBehavior, 0, nil)
		if err := c.behavior.fn(ctx); err != nil {
			return true, v, err
		}
	}
	switch {
	case in.badErr != nil:
		return true, v, in.badErr
	case c.result != nil:
		c.injected(ctx, kindResult, 0, nil)
		v, err = in.result(ctx)
		return true, v, err
	case st.fault != nil:
		c.injected(ctx, kindError, 0, st.fault)
		return true, v, st.fault
	}
	return false, v, nil
}

// decorateFunc is Decorate for a decorate.Func: see NewPolicy.
func decorateFunc[A, T any](c *Chaos, next decorate.Func[A, T]) decorate.Func[A, T] {
	in := injectionOf[T](c)
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		st := c.cur.Load()
		if !st.cfg.Enabled || !c.hit(st) {
			return next(ctx, a)
		}
		if d := st.cfg.Latency; d > 0 {
			c.injected(ctx, kindLatency, d, nil)
			if err := c.clk.Sleep(ctx, d); err != nil {
				var zero T
				return zero, err
			}
		}
		if done, v, err := in.end(ctx, st); done {
			return v, err
		}
		return next(ctx, a)
	}
}

// decorateAsyncFunc is Decorate for a decorate.AsyncFunc: see NewPolicy.
func decorateAsyncFunc[A, T any](c *Chaos, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	in := injectionOf[T](c)
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		st := c.cur.Load()
		if !st.cfg.Enabled || !c.hit(st) {
			return started(next(ctx, a))
		}
		if d := st.cfg.Latency; d > 0 {
			c.injected(ctx, kindLatency, d, nil)
			w := &waiting[A, T]{in: &in, st: st, ctx: ctx, a: a, next: next}
			f := w.d.Init(c.clk, ctx, w, nil)
			w.d.StartAfter(d)
			return f
		}
		return afterLatency(&in, st, ctx, a, next)
	}
}

// afterLatency goes on with an injected call that returns a future, its latency over.
// The future of a call that ends here holds what a synchronous call returns: Result's
// value with its error, not only the error.
func afterLatency[A, T any](in *injection[T], st *state, ctx context.Context, a A, next decorate.AsyncFunc[A, T]) *async.Future[T] {
	done, v, err := in.end(ctx, st)
	switch {
	case !done:
		return started(next(ctx, a))
	case err == nil:
		return async.Completed(v)
	}
	f, p := promise.New[T](nil)
	p.Complete(v, err)
	return f
}

// waiting is an injected call that returns a future, waiting out its latency on a clock
// timer.
type waiting[A, T any] struct {
	d    delay.Delayed[T]
	in   *injection[T]
	st   *state
	ctx  context.Context
	a    A
	next decorate.AsyncFunc[A, T]
}

// Start goes on with the call, its latency over.
func (w *waiting[A, T]) Start() *async.Future[T] {
	return afterLatency(w.in, w.st, w.ctx, w.a, w.next)
}

// Stop ends the call during its latency: its future fails with cause (its context's
// error, or async.ErrCanceled).
func (w *waiting[A, T]) Stop(cause error) (T, error) {
	var zero T
	return zero, cause
}

// started returns f, the future of a call that has started, or a future failed with
// async.ErrNilFuture when f is nil.
func started[T any](f *async.Future[T]) *async.Future[T] {
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}
