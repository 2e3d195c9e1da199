package policy

import "context"

// Rejections holds a policy instance's rejection errors, made once when the instance is
// built so that rejecting allocates nothing (SPEC RL-6): one for a plain rejection and one
// for each context error that can end a wait (SPEC RL-8). E is the policy's typed error.
type Rejections[E error] struct {
	Plain, Canceled, Deadline E
	make                      func(cause error) E
}

// NewRejections makes the rejections with newErr, which builds the typed error for a
// cause: nil, context.Canceled or context.DeadlineExceeded.
func NewRejections[E error](newErr func(cause error) E) Rejections[E] {
	return Rejections[E]{
		Plain:    newErr(nil),
		Canceled: newErr(context.Canceled),
		Deadline: newErr(context.DeadlineExceeded),
		make:     newErr,
	}
}

// ForContext returns the rejection for a call ended by the context error err: one of the
// preallocated errors, or a new one for an error other than the standard two.
func (r *Rejections[E]) ForContext(err error) E {
	switch err {
	case context.Canceled:
		return r.Canceled
	case context.DeadlineExceeded:
		return r.Deadline
	}
	return r.make(err)
}
