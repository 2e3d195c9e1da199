package slots

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
)

// Policy returns s as a policy.Policy[T] of layer l: its Decorate is Func's, its
// DecorateAsync AsyncFunc's, for calls without argument.
func Policy[T any](l policy.Layer, s *Slots) policy.Policy[T] {
	return decorate.Of(l, s, Func[struct{}, T], AsyncFunc[struct{}, T])
}

// Decorate returns next guarded by s: Func's guard for a decorate.Func, AsyncFunc's for a
// decorate.AsyncFunc. It is the policy's Decorate, as package resilience composes it.
func Decorate[F decorate.Func[A, T] | decorate.AsyncFunc[A, T], A, T any](s *Slots, next F) F {
	return decorate.Dispatch(s, next, Func[A, T], AsyncFunc[A, T])
}

// Func returns next guarded by s. A disabled s lets every call through, behind the
// arrival check (decorate.Guard). Otherwise each call is let in as with Acquire (a
// rejection returns the zero T and the rejection, and next is not called; a call let
// through in shadow mode runs next, holding nothing), holds its slot until next returns,
// and then gives it back with Complete and next's error; a next that
// panics gives it back with Release, and the panic goes on. A call let in without
// waiting, and a call rejected at once, allocate nothing.
func Func[A, T any](s *Slots, next decorate.Func[A, T]) decorate.Func[A, T] {
	if !s.enabled {
		return decorate.Guard(next)
	}
	return func(ctx context.Context, a A) (T, error) {
		p, err := s.Acquire(ctx)
		if err != nil {
			if err == ErrShadow { // let through, holding nothing
				return next(ctx, a)
			}
			var zero T
			return zero, err
		}
		done := false
		defer func() {
			if !done { // next panicked
				s.Release()
			}
		}()
		v, err := next(ctx, a)
		done = true
		s.Complete(ctx, p, err)
		return v, err
	}
}

// AsyncFunc returns next, a function that returns a future, guarded by s. A disabled s
// lets every call through, behind the arrival check (decorate.GuardAsync). Otherwise:
//   - ctx nil or already done: a future failed with the rejection that matches ctx's error
//     (policy.ErrNilContext for a nil ctx); next never runs, nothing is taken, no event
//     is published;
//   - room now for ctx's priority, and nobody of it or above waiting: next starts at once, and its own future is returned
//     (see start);
//   - no room in shadow mode: next starts at once, holding nothing, and its own future is
//     returned (a nil future: one failed with async.ErrNilFuture);
//   - no room and MaxWait 0: a future failed with the plain rejection, made once when
//     next is decorated;
//   - otherwise the call queues as a callback, by priority and FIFO within it, for up to
//     MaxWait (see enqueue).
//
// Each call's outcome is recorded once, with ctx, when s decides: at once, or when a
// queued call starts (ResultAdmitted, Wait = how long it waited), expires or is ended by
// ctx (ResultRejected); a call whose future is canceled while it waits records nothing.
func AsyncFunc[A, T any](s *Slots, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	if !s.enabled {
		return decorate.GuardAsync(next)
	}
	rejected := async.Failed[T](s.rej.Plain)
	release := func(T, error) { s.Release() }
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](s.sw.Refuse(ctx, err))
		}
		level := policy.PriorityFrom(ctx)
		if p, ok := s.TryAcquire(level); ok {
			s.sw.Admit(ctx)
			return start(s, p, ctx, a, next, release)
		}
		if s.shadow.Load() { // let through, holding nothing
			s.shadowed(ctx, level)
			if f := next(ctx, a); f != nil {
				return f
			}
			return async.Failed[T](async.ErrNilFuture)
		}
		maxWait := s.MaxWait()
		if maxWait == 0 {
			s.full(ctx, level)
			return rejected
		}
		return enqueue(s, ctx, a, next, release, maxWait, level)
	}
}

// start runs next with permit p, and gives the slot back when next's future completes:
// with Complete and the future's error, through release (s.Release, bound once per
// decorated function) when s has no Completer. A next that panics, or returns a nil
// future (which stands for a future failed with async.ErrNilFuture), gives it back at
// once with Release.
func start[A, T any](s *Slots, p Permit, ctx context.Context, a A, next decorate.AsyncFunc[A, T], release func(T, error)) *async.Future[T] {
	ok := false
	defer func() {
		if !ok {
			s.Release()
		}
	}()
	inner := next(ctx, a)
	if inner == nil {
		return async.Failed[T](async.ErrNilFuture) // given back by the deferred call
	}
	// From here the slot is the callback's to give back, also when it runs at once (inner
	// is complete) and a call it lets in from the queue panics.
	ok = true
	if s.done == nil {
		inner.OnComplete(release)
	} else {
		inner.OnComplete(func(_ T, err error) { s.done.Complete(ctx, p, err) })
	}
	return inner
}
