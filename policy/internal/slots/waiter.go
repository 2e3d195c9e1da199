package slots

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/delay"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// An asyncWaiter is an asynchronous call queued for room under the limit: a callback, not
// a goroutine.
type asyncWaiter[A, T any] struct {
	waitq.Waiter[Permit]
	at      time.Duration // clock time at which the wait began
	d       delay.Delayed[T]
	s       *Slots
	ctx     context.Context
	a       A
	next    decorate.AsyncFunc[A, T]
	release func(T, error) // s.Release, for start
	waited  bool           // let in from the queue
}

// enqueue queues an asynchronous call of priority level for room, for up to maxWait (more
// than 0), and
// returns its future. When the call is let in, next starts on the goroutine that made the
// room (a completing call, or one that raised the limit); when it panics there, the room
// it gives back goes to the next waiters before the panic goes on up that goroutine. After
// maxWait (a clock timer) the future fails with the plain rejection and the call leaves
// the queue. Cancelling the future, or ctx ending, while it waits removes it from the
// queue at once: Cancel returns true and next never runs; ctx ending fails the future with
// the rejection matching ctx's error. Once started, cancelling the future cancels next's
// future (Cancel returns false).
func enqueue[A, T any](s *Slots, ctx context.Context, a A, next decorate.AsyncFunc[A, T], release func(T, error), maxWait time.Duration, level policy.Priority) *async.Future[T] {
	w := &asyncWaiter[A, T]{s: s, ctx: ctx, a: a, next: next, release: release}
	w.Level = level
	fut := w.d.Init(s.clk, ctx, w, nil)
	w.at = s.clk.Now()
	// The MaxWait timer and the ctx hook are armed before the waiter is queued (a waiter
	// seen in the queue always has them); one that fires first keeps it from being queued.
	w.d.StartWithin(maxWait)
	switch s.q.Enqueue(&w.Waiter, w) {
	case waitq.Admitted: // room came meanwhile, and nobody waits for it
		w.startIn(false)
	case waitq.Queued:
		s.recheck()
	}
	return fut
}

// Granted is called when the waiter is let in.
func (w *asyncWaiter[A, T]) Granted() { w.startIn(true) }

// startIn starts the call the waiter now has room for, or passes the room on if the wait
// is already over (canceled, expired, or ctx ended as the room came).
func (w *asyncWaiter[A, T]) startIn(waited bool) {
	w.waited = waited
	if !w.d.Start() {
		w.s.Release()
	}
}

// Start runs the call in its room, after reporting its admission.
func (w *asyncWaiter[A, T]) Start() *async.Future[T] {
	if w.waited {
		w.s.sw.AdmitWaited(w.ctx, w.at)
	} else {
		w.s.sw.Admit(w.ctx)
	}
	return start(w.s, w.s.permit(w.Room()), w.ctx, w.a, w.next, w.release)
}

// Stop takes a waiter whose wait is over without room out of the queue (one already let
// in gives its room back in startIn), and returns its rejection, which it reports; a
// canceled waiter reports nothing.
func (w *asyncWaiter[A, T]) Stop(cause error) (T, error) {
	w.s.q.Remove(&w.Waiter)
	var zero T
	switch cause {
	case async.ErrCanceled:
		return zero, cause
	case delay.ErrExpired:
		return zero, w.s.sw.Expired(w.ctx, w.at)
	}
	return zero, w.s.sw.RejectContext(w.ctx, w.s.sw.Since(w.at), cause)
}
