// Package async provides Future, a result that arrives later, and Delayed, a call that
// starts after a wait on a clock.
//
// A Future is completed exactly once, with a value or an error. It costs no goroutine:
// work that completes it may run on a goroutine started by Go, on a clock timer, or on any
// goroutine that holds the completion function returned by NewPromise. Futures compose with
// context.Context: Await takes a context, and cancelling a future asks its work to stop.
// Map, Then and All build a future out of others; cancelling it cancels them.
//
// # Delayed calls
//
// Delayed starts a call after a wait on a clock.Clock, with no goroutine per waiting call:
// the policies use it to wait for a rate-limiter permit, for a bulkhead slot, or between
// retries. The owner keeps a Delayed in its per-call struct and implements Starter, which
// starts the work and, when the call ends without starting it, says what the future
// completes with; an Observer, when there is one, receives each result so that the owner
// can wait and start again. ErrExpired is the cause Stop gets when a StartWithin wait runs
// out.
//
// Init prepares the call and returns its future. A wait begins with StartAfter (the work
// starts when the delay has passed) or StartWithin (the work starts when the owner calls
// Start, or the call ends with ErrExpired when the delay passes first). Whichever comes
// first of the start, Cancel, the context ending and, for StartWithin, the delay, ends the
// wait, and only that one acts: the wait's timer is stopped and, once no more waits can
// come, the hook on the context is removed, so nothing stays registered on a long-lived
// context. A context that has already ended when a wait begins, or when the work would
// start, ends the call at once.
//
// Without an Observer, the call starts once, and the result of the started work completes
// the future. With one, each result goes to the Observer, which waits again (StartAfter,
// StartWithin) or ends the call with End; the context hook is registered at the first
// wait and removed when the call ends.
package async

import (
	"context"
	"errors"
	"sync"
)

// ErrCanceled is the error of a future completed by Cancel, whether Cancel was called on
// it or reached it from a future built on it (Map, Then, All). Test for it with
// errors.Is, as for context.Canceled.
var ErrCanceled = errors.New("async: future canceled")

// ErrPanicked is the error of a future whose work panicked when it was started later,
// on a goroutine that is not the caller's (a Delayed call started by a clock timer or by
// the release of a slot): the future fails with ErrPanicked, so that its awaiters do not
// wait for ever, and the panic goes on up that goroutine. Test for it with errors.Is.
var ErrPanicked = errors.New("async: the started work panicked")

// Future is the result of an asynchronous computation. Its zero value is not usable: make
// one with NewPromise, NewCancelablePromise, Go, Completed or Failed. All methods are safe
// for concurrent use.
//
// A nil *Future (e.g. returned by a function that forgot to return one) acts as a future
// failed with ErrNilFuture: Done is closed, Await and Result return ErrNilFuture,
// OnComplete calls its function with it, and Cancel returns false. No method panics.
type Future[T any] struct {
	mu        sync.Mutex
	done      chan struct{}
	completed bool
	val       T
	err       error
	callbacks []func(T, error)
	onCancel  func() bool
}

// NewPromise returns a pending future and the function that completes it. Only the first
// call of complete has an effect; later calls (and calls after Cancel) are ignored.
func NewPromise[T any]() (*Future[T], func(T, error)) {
	f := &Future[T]{done: make(chan struct{})}
	return f, f.complete
}

// NewCancelablePromise is NewPromise for work that can be stopped. Cancel calls onCancel
// once, after completing the future with ErrCanceled; onCancel stops the work and
// reports whether it had not started yet (true: it never will). onCancel must not block.
func NewCancelablePromise[T any](onCancel func() (notStarted bool)) (*Future[T], func(T, error)) {
	f := &Future[T]{done: make(chan struct{}), onCancel: onCancel}
	return f, f.complete
}

// Completed returns a future already completed with v.
func Completed[T any](v T) *Future[T] {
	f := &Future[T]{done: closedChan, completed: true, val: v}
	return f
}

// Failed returns a future already completed with err.
func Failed[T any](err error) *Future[T] {
	f := &Future[T]{done: closedChan, completed: true, err: err}
	return f
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Go runs fn on a new goroutine with a context derived from ctx and returns its future.
// Cancel cancels that context (the work has started, so Cancel returns false) and
// completes the future with ErrCanceled; fn's own result is then discarded.
func Go[T any](ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	cctx, cancel := context.WithCancel(ctx)
	f, complete := NewCancelablePromise[T](func() bool { cancel(); return false })
	go func() {
		defer cancel()
		complete(fn(cctx))
	}()
	return f
}

func (f *Future[T]) complete(v T, err error) { f.tryComplete(v, err) }

// tryComplete completes the future and reports whether this call did it.
func (f *Future[T]) tryComplete(v T, err error) bool {
	f.mu.Lock()
	if f.completed {
		f.mu.Unlock()
		return false
	}
	f.completed = true
	f.val, f.err = v, err
	cbs := f.callbacks
	f.callbacks = nil
	f.onCancel = nil
	close(f.done)
	f.mu.Unlock()
	for _, cb := range cbs {
		cb(v, err)
	}
	return true
}

// Done returns a channel that is closed when the future completes.
func (f *Future[T]) Done() <-chan struct{} {
	if f == nil {
		return closedChan
	}
	return f.done
}

// Await blocks until the future completes or ctx ends. It returns the future's value and
// error, or the zero value and ctx.Err() if ctx ended first (the future is not canceled:
// call Cancel for that).
func (f *Future[T]) Await(ctx context.Context) (T, error) {
	if f == nil {
		var zero T
		return zero, ErrNilFuture
	}
	select {
	case <-f.done:
	default:
		select {
		case <-f.done:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
	return f.val, f.err
}

// Result returns the value and error without blocking; ok is false while the future is
// pending.
func (f *Future[T]) Result() (v T, ok bool, err error) {
	if f == nil {
		return v, true, ErrNilFuture
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.completed {
		return v, false, nil
	}
	return f.val, true, f.err
}

// Cancel completes a pending future with ErrCanceled and asks its work to stop. It returns
// true if the future was pending and its work had not started, so it never will (a plain
// promise from NewPromise counts as not started); false if the future was already
// complete, or its work had already started (it is asked to stop, and its result is
// discarded).
func (f *Future[T]) Cancel() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	onCancel := f.onCancel
	f.mu.Unlock()
	var zero T
	if !f.tryComplete(zero, ErrCanceled) {
		return false
	}
	if onCancel == nil {
		return true
	}
	return onCancel()
}

// OnComplete calls fn with the future's value and error once it completes: at once, on the
// caller's goroutine, if it already has; otherwise on the goroutine that completes it.
// fn must not block.
func (f *Future[T]) OnComplete(fn func(T, error)) {
	if f == nil {
		var zero T
		fn(zero, ErrNilFuture)
		return
	}
	f.mu.Lock()
	if !f.completed {
		f.callbacks = append(f.callbacks, fn)
		f.mu.Unlock()
		return
	}
	v, err := f.val, f.err
	f.mu.Unlock()
	fn(v, err)
}
