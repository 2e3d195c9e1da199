package waitq

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// Events is how a policy that queues calls reports their waits: the events it publishes
// for a rejection and for a call let in after waiting, and the rejections it returns, of
// type E. Its fields point into the policy and are set when the policy is built; it is
// read-only after, and safe for concurrent use.
type Events[E error] struct {
	Pub      *kind.Events          // the policy's publisher
	Rej      *policy.Rejections[E] // the policy's rejection errors
	Clock    clock.Clock           // the policy's clock, on which waits are measured
	Rejected policy.EventKind      // the kind of the event of a rejection
	Waited   policy.EventKind      // the kind of the event of a call let in after waiting
}

// Since returns the time from since to now on the clock, never negative.
func (e *Events[E]) Since(since time.Duration) time.Duration {
	return sat.Left(e.Clock.Now(), since)
}

// Expired rejects a call that waited from since until MaxWait passed: it publishes the
// rejection event (Wait = how long the call waited), if anyone listens, and returns the
// plain rejection.
func (e *Events[E]) Expired(since time.Duration) error {
	if e.Pub.Observed() {
		e.PublishRejected(e.Since(since), e.Rej.Plain)
	}
	return e.Rej.Plain
}

// RejectContext rejects a call, which waited for waited, whose context ended with
// ctxErr: it publishes the rejection event and returns the rejection that matches ctxErr.
func (e *Events[E]) RejectContext(waited time.Duration, ctxErr error) error {
	err := e.Rej.ForContext(ctxErr)
	e.PublishRejected(waited, err)
	return err
}

// PublishRejected publishes the rejection event of a call that waited for waited and is
// rejected with err.
func (e *Events[E]) PublishRejected(waited time.Duration, err error) {
	e.Pub.Publish(policy.Event{Kind: e.Rejected, Wait: waited, Err: err})
}

// PublishWaited publishes, if anyone listens, the event of a call let in now after
// waiting from since (Wait = how long).
func (e *Events[E]) PublishWaited(since time.Duration) {
	if e.Pub.Observed() {
		now := e.Clock.Now()
		e.Pub.Publish(policy.Event{Kind: e.Waited, At: now, Wait: sat.Left(now, since)})
	}
}

// Sync is a policy's blocking wait for room in its queue, for calls rejected with errors
// of type E. Its fields are set when the policy is built; it is read-only after, and its
// Wait is safe for concurrent use.
type Sync[R any, E error] struct {
	Events[E]
	Queue   *Queue[R]
	MaxWait time.Duration // how long a call may wait, on Events.Clock; more than 0
	// Recheck hands over room that came while a waiter was being queued: it calls
	// Queue.Dispatch if there is room now.
	Recheck func()
	// GiveBack gives back room r handed to a waiter whose context ended at the same
	// time, so that it goes to the next waiter.
	GiveBack func(r R)
}

// A syncWaiter is a call blocked in Sync.Wait.
type syncWaiter[R any] struct {
	Waiter[R]
	ch chan struct{} // one signal: granted, or removed by the MaxWait timer
}

// Granted is called when room is handed to the waiter.
func (w *syncWaiter[R]) Granted() { w.ch <- struct{}{} }

// Wait queues the caller and blocks it until it is handed room, MaxWait passes on the
// clock, or ctx ends. It returns the room the caller now holds and a nil error, or the
// zero R and a rejection:
//   - the plain rejection once MaxWait has passed (also when the timer fires as ctx ends),
//     after the rejection event;
//   - the rejection matching ctx's error when ctx ends first, after the rejection event.
//     Room handed to the caller as ctx ended is given back with GiveBack first.
//
// A caller handed room by the queue publishes the waited event; one that finds room as it
// is being queued (nobody queued any more) publishes nothing. ctx must not be nil. A wait
// allocates the waiter and its MaxWait timer.
func (s *Sync[R, E]) Wait(ctx context.Context) (R, error) {
	var zero R
	q := s.Queue
	w := &syncWaiter[R]{ch: make(chan struct{}, 1)}
	at := s.Clock.Now()
	// Armed before the waiter is queued, so that a waiter seen in the queue (a snapshot)
	// always has its timer; a timer that fires first keeps it from being queued.
	timer := s.Clock.AfterFunc(s.MaxWait, func() {
		if q.Remove(&w.Waiter) {
			w.ch <- struct{}{}
		}
	})
	switch q.Enqueue(&w.Waiter, w) {
	case Admitted:
		timer.Stop()
		return w.Room(), nil
	case Removed:
		return zero, s.Expired(at)
	}
	s.Recheck()
	select {
	case <-w.ch:
	case <-ctx.Done():
		if q.Remove(&w.Waiter) {
			timer.Stop()
			return zero, s.RejectContext(s.Since(at), ctx.Err())
		}
		<-w.ch // handed room, or timed out, at the same time
		if w.Holds() {
			timer.Stop()
			s.GiveBack(w.Room()) // the caller has gone: pass the room on
			return zero, s.RejectContext(s.Since(at), ctx.Err())
		}
	}
	timer.Stop()
	if !w.Holds() {
		return zero, s.Expired(at)
	}
	s.PublishWaited(at)
	return w.Room(), nil
}
