package ratelimit

import (
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// ErrExceeded is the errors.Is target of every rejection by a rate limiter: no permit was
// free now or within MaxWait, or the caller's context ended first. It is itself an
// *ExceededError (with no instance id, and no retry-after to tell).
var ErrExceeded error = &ExceededError{msg: "ratelimit: rate limit exceeded"}

// ErrExceedsBurst is the errors.Is target of the refusal of a call for more permits than
// the limiter's Permits (its burst): such a call can never be granted, however long it
// waits, so it does not match ErrExceeded (nothing retries it) and tells no retry-after.
// Nothing is reserved. It is itself an *ExceededError.
var ErrExceedsBurst error = &ExceededError{msg: "ratelimit: more permits than the burst", burst: true}

// ExceededError is a limiter's refusal. It matches ErrExceeded, and also, when a context
// ended the call, the context's error (context.Canceled or context.DeadlineExceeded); or,
// for a call for more permits than the burst, ErrExceedsBurst alone. Each limiter makes
// its refusals once, when it is built (and a burst refusal for each configuration), so
// refusing allocates nothing: the error carries no per-call data, but it knows its
// limiter, and RetryIn reads from it how long until its next permit is free.
type ExceededError struct {
	instance string
	cause    error    // nil, or the context error that ended the wait
	src      *Limiter // the limiter that refused; nil for a keyed limiter's, errZero and a burst
	msg      string
	burst    bool // a call for more permits than the burst: matches ErrExceedsBurst
}

// limiterName is how an error names the limiter with the instance id id: quoted, or "the
// rate limiter" for one without a name.
func limiterName(id string) string {
	if id == "" {
		return "the rate limiter"
	}
	return `"` + id + `"`
}

func newExceeded(instance string, cause error) *ExceededError {
	msg := "ratelimit: rate limit exceeded"
	if instance != "" {
		msg += " for " + limiterName(instance)
	}
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &ExceededError{instance: instance, cause: cause, msg: msg}
}

func newBurstError(instance string, permits int) error {
	return &ExceededError{instance: instance, burst: true,
		msg: "ratelimit: a call for more than the " + strconv.Itoa(permits) + " permits of " + limiterName(instance) +
			" (its burst) can never be granted"}
}

// Error returns `ratelimit: rate limit exceeded for "<instance>"` (without the "for" part
// for a limiter without a name), followed by the context error if one ended the call; or,
// for a call for more permits than the burst, `ratelimit: a call for more than the
// <Permits> permits of "<instance>" (its burst) can never be granted`.
func (e *ExceededError) Error() string { return e.msg }

// InstanceID returns the id of the limiter that refused the call: its Name, the id a
// registry gave it, or "" for a limiter built without a name.
func (e *ExceededError) InstanceID() string { return e.instance }

// Is reports whether target is ErrExceeded, or ErrExceedsBurst for a call for more
// permits than the burst.
func (e *ExceededError) Is(target error) bool {
	if e.burst {
		return target == ErrExceedsBurst
	}
	return target == ErrExceeded
}

// Unwrap returns the context error that ended the call, or nil.
func (e *ExceededError) Unwrap() error { return e.cause }

// RejectedBy returns the layer that refused the call: ratelimit.Layer.
func (e *ExceededError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the limiter has no permit for the call now.
func (e *ExceededError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns how long from now until the limiter that refused the call has a permit
// free, read live from it when it is called: from its schedule in-process, or, with a
// backend, from what its store said at its last refusal. It is the time for one permit:
// for a call of n, the Delay of a refused ReserveN(n) says when n are free. ok is false
// when the error cannot tell: the refusals of a keyed limiter, which every key shares
// (its Decision.RetryAfter and Reservation.Delay give the key's), of a zero Limiter, a
// refusal for more permits than the burst (no wait lets it through), and ErrExceeded
// itself. A disabled limiter reports 0. It never allocates, and is safe for concurrent
// use. A retry with WaitForPermit waits for it.
func (e *ExceededError) RetryIn() (wait time.Duration, ok bool) {
	l := e.src
	if l == nil || !l.built() {
		return 0, false
	}
	r := l.cur()
	switch {
	case r.direct:
		return time.Duration(l.slots.NextFree(l.now(), r.Interval, r.Tau)), true
	case r.other == (windowed{}):
		return time.Duration(l.more.NextFree(&l.slots, &r.Rate, l.now())), true
	case r.Cfg.Disabled:
		return 0, true
	}
	return time.Duration(max(sat.Sub(l.retryAt.Load(), l.now()), 0)), true
}

// errZero is the rejection of every call through a zero Limiter, which was not built with
// New and so has no configuration: it admits nothing.
var errZero = &ExceededError{msg: "ratelimit: a zero Limiter admits nothing: build limiters with New"}

var _ policy.Rejection = (*ExceededError)(nil)

func init() {
	rlcore.NewExceeded = newExceeded
	rlcore.NewBurst = newBurstError
	rlcore.ErrZero = errZero
}
