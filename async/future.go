// Package async provides Future, a result that arrives later.
//
// A Future is completed exactly once, with a value or an error. It costs no goroutine:
// work that completes it may run on a goroutine started by Go, on a clock timer, or on any
// goroutine that holds the completion function returned by NewPromise. Futures compose with
// context.Context: Await takes a context, and cancelling a future asks its work to stop
// (SPEC AS-4).
package async

import (
	"context"
	"errors"
	"sync"
)

// ErrCancelled is the error of a future completed by Cancel.
var ErrCancelled = errors.New("async: future cancelled")

// Future is the result of an asynchronous computation. Its zero value is not usable: make
// one with NewPromise, NewCancellablePromise, Go, Completed or Failed. All methods are safe
// for concurrent use.
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

// NewCancellablePromise is NewPromise for work that can be stopped. Cancel calls onCancel
// once, after completing the future with ErrCancelled; onCancel stops the work and
// reports whether it had not started yet (true: it never will). onCancel must not block.
func NewCancellablePromise[T any](onCancel func() (notStarted bool)) (*Future[T], func(T, error)) {
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
// completes the future with ErrCancelled; fn's own result is then discarded.
func Go[T any](ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	cctx, cancel := context.WithCancel(ctx)
	f, complete := NewCancellablePromise[T](func() bool { cancel(); return false })
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
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Await blocks until the future completes or ctx ends. It returns the future's value and
// error, or the zero value and ctx.Err() if ctx ended first (the future is not cancelled:
// call Cancel for that).
func (f *Future[T]) Await(ctx context.Context) (T, error) {
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
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.completed {
		return v, false, nil
	}
	return f.val, true, f.err
}

// Cancel completes a pending future with ErrCancelled and asks its work to stop. It returns
// true if the work had not started, so it never will (SPEC AS-3), and for a plain promise;
// false if the future was already complete, or its work had already started (it is asked
// to stop, and its result is discarded).
func (f *Future[T]) Cancel() bool {
	f.mu.Lock()
	onCancel := f.onCancel
	f.mu.Unlock()
	var zero T
	if !f.tryComplete(zero, ErrCancelled) {
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
