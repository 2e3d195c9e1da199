package async

import (
	"sync"

	"github.com/resilience4go/resilience4go/internal/future"
)

// ErrNilFuture is the error of a nil *Future: a function that should have returned a
// future returned nil. Await, Result and OnComplete of a nil future report it, and Then
// and All fail with it when a step returns, or they are given, a nil future.
var ErrNilFuture = future.ErrNilFuture

// Map returns a future completed with fn applied to f's value, or with f's error (fn is
// then not called). fn runs on the goroutine that completes f, or on the caller's if f is
// already complete, so it must not block. Cancelling the returned future cancels f.
func Map[T, U any](f *Future[T], fn func(T) (U, error)) *Future[U] {
	out, complete := NewCancelablePromise[U](f.Cancel)
	f.OnComplete(func(v T, err error) {
		if err != nil {
			var zero U
			complete(zero, err)
			return
		}
		complete(fn(v))
	})
	return out
}

// Then chains an asynchronous step: once f succeeds, fn starts the next future, whose
// result becomes the returned future's. An error of f skips fn; a nil future from fn fails
// the returned future with ErrNilFuture. fn runs as Map's does and must not block.
// Cancelling the returned future cancels f, or the next step once it has started.
func Then[T, U any](f *Future[T], fn func(T) *Future[U]) *Future[U] {
	var (
		mu   sync.Mutex
		next *Future[U]
	)
	out, complete := NewCancelablePromise[U](func() bool {
		mu.Lock()
		n := next
		mu.Unlock()
		if n != nil {
			n.Cancel()
			return false
		}
		return f.Cancel()
	})
	f.OnComplete(func(v T, err error) {
		if err != nil {
			var zero U
			complete(zero, err)
			return
		}
		n := fn(v)
		if n == nil {
			var zero U
			complete(zero, ErrNilFuture)
			return
		}
		mu.Lock()
		next = n
		mu.Unlock()
		if _, done, _ := out.Result(); done { // canceled while fn ran
			n.Cancel()
			return
		}
		n.OnComplete(complete)
	})
	return out
}

// All returns a future of every value of fs, in order, once all succeed; it fails with the
// first error as soon as one fails (the others are not canceled). Cancelling it cancels
// every future in fs. A nil future in fs fails it with ErrNilFuture. No fs gives a future
// already completed with an empty slice.
func All[T any](fs ...*Future[T]) *Future[[]T] {
	out, complete := NewCancelablePromise[[]T](func() bool {
		notStarted := true
		for _, f := range fs {
			notStarted = f.Cancel() && notStarted
		}
		return notStarted
	})
	var (
		mu        sync.Mutex
		vals      = make([]T, len(fs))
		remaining = len(fs)
	)
	if remaining == 0 {
		complete(vals, nil)
		return out
	}
	for i, f := range fs {
		if f == nil {
			complete(nil, ErrNilFuture)
			return out
		}
		f.OnComplete(func(v T, err error) {
			if err != nil {
				complete(nil, err)
				return
			}
			mu.Lock()
			vals[i] = v
			remaining--
			last := remaining == 0
			mu.Unlock()
			if last {
				complete(vals, nil)
			}
		})
	}
	return out
}
