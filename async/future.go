// Package async provides Future, a result that arrives later.
//
// A Future is completed exactly once, with a value or an error. It costs no goroutine:
// work that completes it may run on a goroutine started by Go, on a clock timer, or on any
// goroutine that holds the completion function returned by NewPromise. Futures compose with
// context.Context: Await takes a context, and cancelling a future asks its work to stop.
// Map, Then and All build a future out of others; cancelling it cancels them.
//
// The policies return futures from the calls they decorate asynchronously (a policy's
// DecorateAsync): a wait for a permit, for a slot or between retries is a timer of the
// policy's clock, not a parked goroutine, and cancelling the future ends the wait.
package async

import (
	"context"

	"github.com/resilience4go/resilience4go/internal/future"
)

// ErrCanceled is the error of a future completed by Cancel, whether Cancel was called on
// it or reached it from a future built on it (Map, Then, All). Test for it with
// errors.Is, as for context.Canceled.
var ErrCanceled = future.ErrCanceled

// ErrPanicked is the error of a future whose work panicked when it was started later,
// on a goroutine that is not the caller's (a policy's call started by a clock timer or by
// the release of a slot): the future fails with ErrPanicked, so that its awaiters do not
// wait for ever, and the panic goes on up that goroutine. Test for it with errors.Is.
var ErrPanicked = future.ErrPanicked

// Future is the result of an asynchronous computation. Its zero value is not usable: make
// one with NewPromise, NewCancelablePromise, Go, Completed or Failed. All methods are safe
// for concurrent use.
//
// A nil *Future (e.g. returned by a function that forgot to return one) acts as a future
// failed with ErrNilFuture: Done is closed, Await and Result return ErrNilFuture,
// OnComplete calls its function with it, and Cancel returns false. No method panics.
type Future[T any] future.Future[T]

// core returns f as the implementation's type.
func (f *Future[T]) core() *future.Future[T] { return (*future.Future[T])(f) }

// NewPromise returns a pending future and the function that completes it. Only the first
// call of complete has an effect; later calls (and calls after Cancel) are ignored.
func NewPromise[T any]() (*Future[T], func(T, error)) {
	f := future.New[T](nil)
	return (*Future[T])(f), f.Complete
}

// NewCancelablePromise is NewPromise for work that can be stopped. Cancel calls onCancel
// once, after completing the future with ErrCanceled; onCancel stops the work and
// reports whether it had not started yet (true: it never will). onCancel must not block.
func NewCancelablePromise[T any](onCancel func() (notStarted bool)) (*Future[T], func(T, error)) {
	f := future.New[T](onCancel)
	return (*Future[T])(f), f.Complete
}

// Completed returns a future already completed with v.
func Completed[T any](v T) *Future[T] { return (*Future[T])(future.Completed(v)) }

// Failed returns a future already completed with err.
func Failed[T any](err error) *Future[T] { return (*Future[T])(future.Failed[T](err)) }

// Go runs fn on a new goroutine with a context derived from ctx and returns its future.
// Cancel cancels that context (the work has started, so Cancel returns false) and
// completes the future with ErrCanceled; fn's own result is then discarded. The derived
// context is canceled too when fn returns or exits, as one from context.WithCancel whose
// cancel function is deferred.
//
// With ctx context.Background() or context.TODO(), a call costs two allocations: one
// holding the future, its goroutine's state and the context given to fn, and the
// goroutine's start (a goroutine sending (T, error) to a buffered channel costs three).
// That context has no values and no deadline, and implements AfterFunc, so that the
// contexts fn derives from it with the context package follow it without a goroutine
// each; one derived through a context of another type (e.g. context.WithTimeout of a
// context.WithValue of it) costs a goroutine while both are live, as the context package
// makes for any parent it does not know. With any other ctx, fn gets
// context.WithCancel(ctx), which adds two allocations, or, when ctx is the context a
// policy gives an attempt of its call, a context that behaves as that one, made by the
// policy at the cost of one. A panic of fn is not recovered: it ends the program, as a
// panic on any goroutine does.
func Go[T any](ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	return (*Future[T])(future.Go(ctx, fn))
}

// Done returns a channel that is closed when the future completes. The channel is made
// by the first call while the future is pending; a future that never had Done called
// has none to close.
func (f *Future[T]) Done() <-chan struct{} { return f.core().Done() }

// Await blocks until the future completes or ctx ends. It returns the future's value and
// error, or the zero value and ctx.Err() if ctx ended first (the future is not canceled:
// call Cancel for that). A nil ctx, like one that never ends, waits for the future; it
// then parks on a sync.WaitGroup inside the future, so that in a testing/synctest bubble a
// future made outside the bubble must not be completed inside it.
func (f *Future[T]) Await(ctx context.Context) (T, error) { return f.core().Await(ctx) }

// Result returns the value and error without blocking; ok is false while the future is
// pending.
func (f *Future[T]) Result() (v T, ok bool, err error) { return f.core().Result() }

// Cancel completes a pending future with ErrCanceled and asks its work to stop. It returns
// true if the future was pending and its work had not started, so it never will (a plain
// promise from NewPromise counts as not started); false if the future was already
// complete, or its work had already started (it is asked to stop, and its result is
// discarded), or the policy completing it had already begun to (e.g. to publish an event
// first): Cancel then does nothing.
func (f *Future[T]) Cancel() bool { return f.core().Cancel() }

// OnComplete calls fn with the future's value and error once it completes: at once, on the
// caller's goroutine, if it already has; otherwise on the goroutine that completes it.
// fn must not block.
func (f *Future[T]) OnComplete(fn func(T, error)) { f.core().OnComplete(fn) }
