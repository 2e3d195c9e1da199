package circuitbreaker

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// ErrOpen is the errors.Is target of every rejection by a circuit breaker: the breaker is
// open, forced open, or half-open with every trial call taken, and the function was not
// called. Every rejection, ErrOpen itself included, is a policy.Rejection (its layer is
// Layer, its refusal policy.RefusalUnavailable, and it cannot tell when the breaker lets
// a call through) and a policy.NeverRetried: a retry never retries it, whatever its lists
// say, or it would hammer the dependency the breaker protects. A breaker's rejection
// also has an InstanceID() string method, which returns the breaker's id ("" for ErrOpen
// itself), and its message names the breaker and the state that refused the call:
// `circuitbreaker: circuit breaker "<instance>" is <state> and does not permit the call`.
// Each breaker creates its rejections once, at construction (one per refusing state), so
// rejecting allocates nothing.
var ErrOpen error = &openError{msg: "circuitbreaker: circuit breaker does not permit the call"}

// openError is a breaker's rejection (see ErrOpen).
type openError struct {
	instance string
	state    state // the state that refused the call
	msg      string
}

func newOpenError(instance string, s state) *openError {
	return &openError{instance: instance, state: s,
		msg: "circuitbreaker: circuit breaker" + contract.IDPhrase(" ", instance) + " is " + s.String() + " and does not permit the call"}
}

func (e *openError) Error() string { return e.msg }

// InstanceID returns the id of the breaker that rejected the call ("" for ErrOpen itself).
func (e *openError) InstanceID() string { return e.instance }

// Is reports whether target is ErrOpen.
func (e *openError) Is(target error) bool { return target == ErrOpen }

// NeverRetried returns true: see ErrOpen.
func (e *openError) NeverRetried() bool { return true }

// RejectedBy returns Layer.
func (e *openError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalUnavailable: the breaker holds the dependency unavailable.
func (e *openError) Refusal() policy.Refusal { return policy.RefusalUnavailable }

// RetryIn returns false: the rejection, made once for every call the breaker refuses,
// does not know when the breaker lets a trial call through.
func (e *openError) RetryIn() (time.Duration, bool) { return 0, false }

var (
	_ policy.Rejection    = (*openError)(nil)
	_ policy.NeverRetried = (*openError)(nil)
)

// rejections are a breaker's preallocated rejection errors, one per refusing state.
type rejections struct {
	open, forcedOpen, halfOpen *openError
}

func newRejections(instance string) rejections {
	return rejections{
		open:       newOpenError(instance, stOpen),
		forcedOpen: newOpenError(instance, stForcedOpen),
		halfOpen:   newOpenError(instance, stHalfOpen),
	}
}
