package timeout

import (
	"context"
	"time"
)

// clockCtx is the context of a call whose deadline is a timer of the policy's clock:
// every asynchronous call, and synchronous calls timed by a clock other than
// clock.System() (so that a manual clock controls them). It behaves like a
// context.WithTimeoutCause context: once the deadline has ended it, Err() is
// context.DeadlineExceeded and context.Cause is the timeout's *Error.
//
// Deadline() reports the wall-clock instant Duration after the call started (or the
// parent's deadline if earlier). A Clock has no wall time, so with a manual clock this is
// an approximation for callees that read it (a socket deadline, say); the cancellation
// itself always comes from the policy's clock.
//
// Contexts derived from it see context.Canceled rather than DeadlineExceeded when the
// deadline ends them (context.Cause is still the *Error, which matches
// DeadlineExceeded): the standard library links them to the cancelCtx inside. Synchronous
// calls on the System clock use the runtime's own timer context instead, whose derived
// contexts see DeadlineExceeded.
type clockCtx struct {
	context.Context // a context.WithCancelCause child of the caller's context
	cancel          context.CancelCauseFunc
	deadline        time.Time
	err             *Error
}

// newClockCtx returns the context of a call that starts now under l.
func newClockCtx(parent context.Context, l *limit) *clockCtx {
	inner, cancel := context.WithCancelCause(parent)
	deadline := time.Now().Add(l.cfg.Duration)
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	return &clockCtx{Context: inner, cancel: cancel, deadline: deadline, err: l.err}
}

// expire ends the context at its deadline. It runs on the clock's timer.
func (c *clockCtx) expire() { c.cancel(c.err) }

// expired reports whether the deadline ended the context (before anything else did).
func (c *clockCtx) expired() bool { return context.Cause(c.Context) == error(c.err) }

// Deadline returns the approximate wall-clock deadline; see the type's comment.
func (c *clockCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Err returns context.DeadlineExceeded once the deadline has ended the context, the
// parent's error if the parent ended first, context.Canceled once the call is over, and
// nil before.
func (c *clockCtx) Err() error {
	err := c.Context.Err()
	if err == context.Canceled && c.expired() {
		return context.DeadlineExceeded
	}
	return err
}

func (c *clockCtx) String() string { return "timeout.WithDeadline(" + c.deadline.String() + ")" }
