package circuitbreaker

import (
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// ErrOpen is the errors.Is target of every rejection by a circuit breaker: the breaker is
// open, forced open, or half-open with every trial call taken, and the function was not
// called. It is itself an *OpenError (with no instance id), so that even the bare sentinel
// is never retried.
var ErrOpen error = &OpenError{msg: "circuitbreaker: circuit breaker does not permit the call"}

// OpenError is a breaker's rejection. Each breaker creates its rejections once, at
// construction (one per rejecting state), so rejecting allocates nothing. It matches
// ErrOpen, carries the breaker's instance id and the state that refused the call, and
// implements policy.NeverRetried: a retry never retries it, whatever its lists say.
type OpenError struct {
	instance string
	state    State
	msg      string
}

func newOpenError(instance string, s State) *OpenError {
	return &OpenError{instance: instance, state: s,
		msg: `circuitbreaker: circuit breaker "` + instance + `" is ` + s.String() + " and does not permit the call"}
}

// Error returns `circuitbreaker: circuit breaker "<instance>" is <state> and does not
// permit the call`, where <state> is State's String: "open", "forced-open" or
// "half-open".
func (e *OpenError) Error() string { return e.msg }

// InstanceID returns the id of the breaker that rejected the call ("" for ErrOpen itself).
func (e *OpenError) InstanceID() string { return e.instance }

// State returns the state that refused the call: Open, ForcedOpen, or HalfOpen when every
// trial call was taken.
func (e *OpenError) State() State { return e.state }

// Is reports whether target is ErrOpen.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// NeverRetried returns true: a call refused by a breaker must not be retried, or the
// retry would hammer a dependency the breaker protects; retries learn it through
// policy.NeverRetried and errors.As.
func (e *OpenError) NeverRetried() bool { return true }

// RejectedBy returns the layer that refused the call: circuitbreaker.Layer (for
// ErrOpen itself too).
func (e *OpenError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalUnavailable: the breaker holds the dependency unavailable.
func (e *OpenError) Refusal() policy.Refusal { return policy.RefusalUnavailable }

// RetryIn returns false: the rejection, made once for every call the breaker refuses,
// does not know when the breaker lets a trial call through.
func (e *OpenError) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*OpenError)(nil)

// rejections are a breaker's preallocated rejection errors, one per refusing state.
type rejections struct {
	open, forcedOpen, halfOpen *OpenError
}

func newRejections(instance string) rejections {
	return rejections{
		open:       newOpenError(instance, Open),
		forcedOpen: newOpenError(instance, ForcedOpen),
		halfOpen:   newOpenError(instance, HalfOpen),
	}
}
