// Package rejections holds a policy instance's rejection errors, made once so that
// rejecting allocates nothing.
package rejections

import "context"

// Set holds a policy instance's rejection errors, made once when the instance is built so
// that rejecting allocates nothing: one for a plain rejection and one for each context
// error that can end a wait, so that a call whose context ends while it waits is rejected
// with an error that matches both the policy's sentinel and the context's error. E is the
// policy's typed error. It is read-only once made: safe for concurrent use.
type Set[E error] struct {
	// Plain is the rejection with no cause; Canceled and Deadline have context.Canceled
	// and context.DeadlineExceeded as their cause.
	Plain, Canceled, Deadline E
	make                      func(cause error) E
}

// New makes the rejections with newErr, which builds the typed error for a cause: nil,
// context.Canceled or context.DeadlineExceeded.
func New[E error](newErr func(cause error) E) Set[E] {
	return Set[E]{
		Plain:    newErr(nil),
		Canceled: newErr(context.Canceled),
		Deadline: newErr(context.DeadlineExceeded),
		make:     newErr,
	}
}

// ForContext returns the rejection for a call ended by the context error err: one of the
// preallocated errors, or a new one for an error other than the standard two.
func (r *Set[E]) ForContext(err error) E {
	switch err {
	case context.Canceled:
		return r.Canceled
	case context.DeadlineExceeded:
		return r.Deadline
	}
	return r.make(err)
}
