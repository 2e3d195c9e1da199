package ratelimit

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/internal/throttle"
	"github.com/resilience4go/resilience4go/policy"
)

// ErrExceeded is the errors.Is target of every rejection by a rate limiter: no permit was
// free now or within maxWait, or the caller's context ended first. It is itself an
// *ExceededError (with no instance id, and no next permit to tell), so that the bare
// sentinel is a policy.Rejection as every rejection is.
var ErrExceeded error = &ExceededError{msg: "ratelimit: rate limit exceeded"}

// ExceededError is a limiter's rejection. Each limiter creates its rejections once, at
// construction, so rejecting allocates nothing. It matches ErrExceeded and,
// when a context ended the call, the context's error (context.Canceled or
// context.DeadlineExceeded).
//
// It carries no per-call data, but it knows its limiter: NextPermit reads, when it is
// called, how long until that limiter's next permit is free. The retry-after of one
// refused call is also Reservation.Delay. A retry with WaitForPermit waits for that
// permit.
type ExceededError struct {
	instance string
	cause    error    // nil, or the context error that ended the wait
	src      *Limiter // the limiter that refused; nil for errZero
	msg      string
}

func newExceeded(instance string, cause error) *ExceededError {
	msg := "ratelimit: rate limit exceeded for " + quote(instance)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &ExceededError{instance: instance, cause: cause, msg: msg}
}

func quote(s string) string { return `"` + s + `"` }

// Error returns `ratelimit: rate limit exceeded for "<instance>"`, followed by the context
// error if one ended the call.
func (e *ExceededError) Error() string { return e.msg }

// InstanceID returns the id of the limiter that rejected the call.
func (e *ExceededError) InstanceID() string { return e.instance }

// Is reports whether target is ErrExceeded.
func (e *ExceededError) Is(target error) bool { return target == ErrExceeded }

// NextPermit returns how long from now until the limiter that refused the call has a
// permit free, read live from it: from its schedule in-process, or, with a Backend, from
// what its store said at its last refusal. It never allocates, and is safe for
// concurrent use. ok is false for the rejections of a Keyed limiter, which every key
// shares (its Decide and Reservation.Delay give the key's retry-after), and of a zero
// Limiter; a disabled limiter reports 0.
func (e *ExceededError) NextPermit() (wait time.Duration, ok bool) {
	l := e.src
	if l == nil || l.perKey || !l.built() {
		return 0, false
	}
	r := l.cur()
	switch {
	case r.direct:
		return time.Duration(l.slots.nextFree(l.now(), r.interval, r.tau)), true
	case r.cfg.Disabled:
		return 0, true
	}
	return time.Duration(max(sat.Sub(l.retryAt.Load(), l.now()), 0)), true
}

// Unwrap returns the context error that ended the call, or nil.
func (e *ExceededError) Unwrap() error { return e.cause }

// errZero is the rejection of every call through a zero Limiter, which was not built with
// New and so has no configuration: it admits nothing.
var errZero = &ExceededError{instance: "", msg: "ratelimit: a zero Limiter admits nothing: build limiters with New"}

// RejectedBy returns the layer that refused the call: ratelimit.Layer.
func (e *ExceededError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the limiter has no permit for the call now.
func (e *ExceededError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn is NextPermit: the time until the limiter that refused the call has a permit
// free, and false when the rejection cannot tell (a Keyed limiter's, ErrExceeded).
func (e *ExceededError) RetryIn() (time.Duration, bool) { return e.NextPermit() }

var (
	_ throttle.Error   = (*ExceededError)(nil)
	_ policy.Rejection = (*ExceededError)(nil)
)

// CodeBadKey is the code of the error that refuses a call of a Keyed limiter for a key
// that is not equal to itself: a NaN, or a value holding one (in a field, an element or
// an interface), which no call could find again; or a key of an interface type holding
// a value that cannot be compared (a slice, a map, a function).
const CodeBadKey = "R4C-RLM-001"
