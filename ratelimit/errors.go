package ratelimit

import "errors"

// ErrExceeded is the errors.Is target of every rejection by a rate limiter: no permit was
// free now or within maxWait, or the caller's context ended first.
var ErrExceeded = errors.New("ratelimit: rate limit exceeded")

// ExceededError is a limiter's rejection. Each limiter creates its rejections once, at
// construction, so rejecting allocates nothing. It matches ErrExceeded and,
// when a context ended the call, the context's error (context.Canceled or
// context.DeadlineExceeded).
//
// It carries no per-call data: the retry-after of a refused call is Reservation.Delay
// (how long until the next permit).
type ExceededError struct {
	instance string
	cause    error // nil, or the context error that ended the wait
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

// Unwrap returns the context error that ended the call, or nil.
func (e *ExceededError) Unwrap() error { return e.cause }

// errZero is the rejection of every call through a zero Limiter, which was not built with
// New and so has no configuration: it admits nothing.
var errZero = &ExceededError{instance: "", msg: "ratelimit: a zero Limiter admits nothing: build limiters with New"}
