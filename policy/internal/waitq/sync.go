package waitq

import (
	"context"
	"log/slog"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Events is how a policy that queues calls reports their admissions and rejections: the
// events it publishes for a rejection and for a call let in after waiting, each with the
// context of the call, the outcome it records of each call (observe.ResultAdmitted with
// the wait, or observe.ResultRejected with the rejection), and the rejections it returns,
// of type E. Its fields point into the policy and are set when the policy is built; it is
// read-only after, and safe for concurrent use. Without a recorder, recording costs a nil
// check.
type Events[E error] struct {
	Pub      *contract.Events   // the policy's publisher and recorder
	Rej      *rejections.Set[E] // the policy's rejection errors
	Clock    clock.Clock        // the policy's clock, on which waits are measured
	Rejected policy.EventKind   // the kind of the event of a rejection
	Waited   policy.EventKind   // the kind of the event of a call let in after waiting
	// Shed, when set, reports whether a call of a level refused for want of room is shed
	// for its priority (room remains for higher levels), and counts it; the rejection
	// events then carry the attributes "priority" (the level's name, unless it is
	// policy.PriorityCritical, a call's without a priority) and "shed" (true, when the call
	// was shed), so that a call without a priority that is not shed has the event it had
	// before priorities. Nil: no attributes.
	Shed func(level policy.Priority) bool
}

// The keys of the attributes of a rejection event when Events.Shed is set.
const (
	AttrPriority = "priority" // the call's level, its name (policy.Priority.String)
	AttrShed     = "shed"     // true: the call was shed for its priority
)

// Since returns the time from since to now on the clock, never negative.
func (e *Events[E]) Since(since time.Duration) time.Duration {
	return sat.Left(e.Clock.Now(), since)
}

// Admit records, if outcomes are recorded, that the call whose context is ctx was let in
// without waiting. It publishes nothing. Without a recorder it is one inlined nil check.
func (e *Events[E]) Admit(ctx context.Context) {
	if e.Pub.Recording() {
		recordAdmitted(e.Pub, ctx)
	}
}

// recordAdmitted is Admit's recording, out of line so that Admit's check inlines.
//
//go:noinline
func recordAdmitted(pub *contract.Events, ctx context.Context) {
	pub.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})
}

// Refuse returns the rejection of a call refused on arrival because its context ctx was
// nil or already done, the one matching ctxErr (decorate.ContextErr's error), and records
// it if outcomes are recorded; it publishes nothing. A nil ctx is recorded as
// context.Background().
func (e *Events[E]) Refuse(ctx context.Context, ctxErr error) E {
	rej := e.Rej.ForContext(ctxErr)
	if e.Pub.Recording() {
		if ctx == nil {
			ctx = context.Background()
		}
		e.Pub.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: rej})
	}
	return rej
}

// Expired rejects the call whose context is ctx, which waited from since until MaxWait
// passed, as Full does.
func (e *Events[E]) Expired(ctx context.Context, since time.Duration) error {
	if e.Shed == nil && !e.Pub.Observed() {
		return e.Rej.Plain
	}
	return e.Full(ctx, policy.PriorityFrom(ctx), e.Since(since))
}

// Full rejects the call whose context is ctx and priority p (policy.PriorityFrom(ctx)),
// which found no room after waiting for waited (0: at once): it counts it if it is shed
// for its priority, publishes the rejection event, if anyone listens or records, records
// the rejection, and returns the plain rejection. A critical call is never shed.
func (e *Events[E]) Full(ctx context.Context, p policy.Priority, waited time.Duration) error {
	e.RejectShed(ctx, waited, e.Rej.Plain, p < policy.PriorityCritical && e.Shed != nil && e.Shed(p))
	return e.Rej.Plain
}

// RejectShed is Reject for a call that found no room, shed for its priority or not (see
// Shed, which the caller has called).
func (e *Events[E]) RejectShed(ctx context.Context, waited time.Duration, err error, shed bool) {
	if e.Pub.Observed() {
		e.reject(ctx, waited, err, shed)
	}
}

// RejectContext rejects the call, which waited for waited, whose context ctx ended with
// ctxErr: it publishes the rejection event, records the rejection and returns the
// rejection that matches ctxErr.
func (e *Events[E]) RejectContext(ctx context.Context, waited time.Duration, ctxErr error) error {
	err := e.Rej.ForContext(ctxErr)
	e.Reject(ctx, waited, err)
	return err
}

// Reject publishes the rejection event of the call whose context is ctx, which waited for
// waited and is rejected with err, and records the rejection; when nobody listens or
// records, it does nothing.
func (e *Events[E]) Reject(ctx context.Context, waited time.Duration, err error) {
	if e.Pub.Observed() {
		e.reject(ctx, waited, err, false)
	}
}

// reject is Reject's and Full's publishing and recording, out of line so that their
// checks inline. shed says whether the call was shed for its priority.
func (e *Events[E]) reject(ctx context.Context, waited time.Duration, err error, shed bool) {
	ev, _ := e.rejection(ctx, waited, err, shed)
	e.Pub.PublishCtx(ctx, ev)
	if e.Pub.Recording() {
		e.Pub.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Err: err})
	}
}

// rejection returns the rejection event of the call whose context is ctx, which waited
// for waited and is rejected with err, shed for its priority or not, and the index of its
// first free attribute.
func (e *Events[E]) rejection(ctx context.Context, waited time.Duration, err error, shed bool) (policy.Event, int) {
	ev := policy.Event{Kind: e.Rejected, Wait: waited, Err: err}
	i := 0
	if e.Shed != nil { // the attributes that differ from a call without a priority
		if p := policy.PriorityFrom(ctx); p != policy.PriorityCritical {
			ev.Attrs[i] = slog.String(AttrPriority, p.String())
			i++
		}
		if shed {
			ev.Attrs[i] = slog.Bool(AttrShed, true)
			i++
		}
	}
	return ev, i
}

// Shadowed reports, if anyone listens or records, the call whose context is ctx that a
// policy in shadow mode lets through at once although it found no room (shed for its
// priority or not): it publishes the rejection event the call would have had, with the
// attribute shadow (true) after the others, and records the call as admitted, without a
// wait: it runs.
func (e *Events[E]) Shadowed(ctx context.Context, shed bool) {
	if e.Pub.Observed() {
		ev, i := e.rejection(ctx, 0, e.Rej.Plain, shed)
		ev.Attrs[i] = contract.ShadowEvent
		e.Pub.PublishCtx(ctx, ev)
		if e.Pub.Recording() {
			recordAdmitted(e.Pub, ctx)
		}
	}
}

// AdmitWaited reports, if anyone listens or records, that the call whose context is ctx
// is let in now after waiting from since: it publishes the waited event (Wait = how
// long) and records the admission with that wait.
func (e *Events[E]) AdmitWaited(ctx context.Context, since time.Duration) {
	if e.Pub.Observed() {
		now := e.Clock.Now()
		wait := sat.Left(now, since)
		e.Pub.PublishCtx(ctx, policy.Event{Kind: e.Waited, At: now, Wait: wait})
		if e.Pub.Recording() {
			e.Pub.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: wait})
		}
	}
}

// Sync is a policy's blocking wait for room in its queue, for calls rejected with errors
// of type E. Its fields are set when the policy is built; it is read-only after, and its
// Wait is safe for concurrent use.
type Sync[R any, E error] struct {
	Events[E]
	Queue *Queue[R]
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

// Wait queues the caller and blocks it until it is handed room, maxWait (more than 0)
// passes on the clock, or ctx ends. It returns the room the caller now holds and a nil error, or the
// zero R and a rejection:
//   - the plain rejection once maxWait has passed (also when the timer fires as ctx ends),
//     after the rejection event;
//   - the rejection matching ctx's error when ctx ends first, after the rejection event.
//     Room handed to the caller as ctx ended is given back with GiveBack first.
//
// A caller handed room by the queue publishes the waited event; one that finds room as it
// is being queued (nobody queued any more) publishes nothing. Every event goes out with
// ctx, and each wait records its outcome once: ResultAdmitted (with how long the caller
// waited, 0 when it found room as it was being queued) or ResultRejected. ctx must not be
// nil. A wait allocates the waiter and its maxWait timer.
func (s *Sync[R, E]) Wait(ctx context.Context, maxWait time.Duration) (R, error) {
	var zero R
	q := s.Queue
	w := &syncWaiter[R]{ch: make(chan struct{}, 1)}
	w.Level = policy.PriorityFrom(ctx)
	at := s.Clock.Now()
	// Armed before the waiter is queued, so that a waiter seen in the queue (a snapshot)
	// always has its timer; a timer that fires first keeps it from being queued.
	timer := s.Clock.AfterFunc(maxWait, func() {
		if q.Remove(&w.Waiter) {
			w.ch <- struct{}{}
		}
	})
	switch q.Enqueue(&w.Waiter, w) {
	case Admitted:
		timer.Stop()
		s.Admit(ctx)
		return w.Room(), nil
	case Removed:
		return zero, s.Expired(ctx, at)
	}
	s.Recheck()
	select {
	case <-w.ch:
	case <-ctx.Done():
		if q.Remove(&w.Waiter) {
			timer.Stop()
			return zero, s.RejectContext(ctx, s.Since(at), ctx.Err())
		}
		<-w.ch // handed room, or timed out, at the same time
		if w.Holds() {
			timer.Stop()
			s.GiveBack(w.Room()) // the caller has gone: pass the room on
			return zero, s.RejectContext(ctx, s.Since(at), ctx.Err())
		}
	}
	timer.Stop()
	if !w.Holds() {
		return zero, s.Expired(ctx, at)
	}
	s.AdmitWaited(ctx, at)
	return w.Room(), nil
}
