package resiliencegrpc

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/policy"
)

// ErrNotFailure is matched by the error of a call that the server answered with a code
// that is not one of the client's failure codes (see NewClient): one in neither list (by
// default Canceled, Unknown, ResourceExhausted and DataLoss), or a success code that the
// retry retries. A breaker built with circuitbreaker.IgnoreOn(ErrNotFailure,
// ratelimit.ErrExceeded) ignores it, and the refusals of the client's own rate limiter,
// so they count neither as successes nor as failures; without it, every status the
// client does not count as a success is a failure. (A success code that is not retried
// reaches the breaker as a success.)
var ErrNotFailure = errors.New("resiliencegrpc: status is not a failure")

// policyError is the error of a call that one of the policies turned away, as a gRPC
// status: the server interceptors return it for the calls they refuse, and the client
// interceptors for the calls their own policies refuse before or instead of reaching the
// server. GRPCStatus gives the status that Status maps the policy's error to (a rate
// limiter's refusal is ResourceExhausted with a google.rpc.RetryInfo detail); Unwrap gives
// the policy's error, so errors.Is(err, ratelimit.ErrExceeded) and status.Code(err) both
// work on it. A policyError is safe for concurrent use.
type policyError struct {
	err     error
	method  string       // the refused call's full method name, for a server's refusal; else ""
	limited bool         // a Limit's refusal: ResourceExhausted with RetryInfo of limit.wait
	limit   limitRefusal // what a Limit's refusal says
	st      atomic.Pointer[status.Status]
}

// Error returns the status's text, as a gRPC status error prints it: for a Limit's
// refusal, "rpc error: code = ResourceExhausted desc = resiliencegrpc:
// /pkg.Service/Method: rate limit of 10 per 1s exceeded; retry in 90ms" (the quota as
// the limiter is configured, and the time until the key's next permit, rounded up to the
// millisecond); for a Guard's refusal, the method and the policy's error: "rpc error: code
// = ResourceExhausted desc = resiliencegrpc: /pkg.Service/Method: bulkhead: bulkhead
// "search" is full". The client interceptors' own refusals carry the policy's error as
// it is.
func (e *policyError) Error() string {
	if st := e.GRPCStatus(); st != nil {
		return st.Err().Error()
	}
	return "resiliencegrpc: call refused"
}

// GRPCStatus returns the status that the call ends with; grpc's status.FromError and
// status.Code find it, and a gRPC server sends it, details included. The status is made
// the first time it is asked for, and then kept.
func (e *policyError) GRPCStatus() *status.Status {
	if e == nil || e.err == nil {
		return nil
	}
	if st := e.st.Load(); st != nil {
		return st
	}
	var st *status.Status
	switch {
	case e.limited:
		st = refusedWithRetry(e.limit.message(e.method), e.limit.wait)
	case e.method != "" && carried(e.err) == nil:
		msg := "resiliencegrpc: " + e.method + ": " + e.err.Error()
		if code, wait, ok := mapped(e.err); ok {
			st = refusedWithRetry(msg, wait)
		} else {
			st = status.New(code, msg)
		}
	default:
		st = Status(e.err)
	}
	if e.st.CompareAndSwap(nil, st) {
		return st
	}
	return e.st.Load()
}

// Unwrap returns the policy's error: its rejection (a policy.Rejection, such as a rate
// limiter's *ratelimit.ExceededError), a *timeout.Error…
func (e *policyError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.err
}

// Status returns the gRPC status that err stands for. An error that carries a status
// (a gRPC status error, the error of a call that this package's interceptors refused or
// that the server failed, or any error with a GRPCStatus method, wrapped or not) keeps
// it; nil is OK. Other errors map to:
//
//   - a timeout (timeout.ErrTimeout) and any other error matching context.DeadlineExceeded:
//     DeadlineExceeded; context.Canceled: Canceled (also for a policy's refusal that the
//     context ended);
//   - a policy's refusal, a policy.Rejection (the first in err's tree) by its Refusal:
//     policy.RefusalOverloaded is ResourceExhausted, with a google.rpc.RetryInfo detail
//     whose retry_delay is its RetryIn when it tells one (a rate limiter's refusal: the
//     time until the limiter's next permit; a full bulkhead, an adaptive limit's refusal
//     and a call for more permits than a limiter's burst tell none);
//     policy.RefusalUnavailable (an open circuit breaker) is Unavailable; a refusal that
//     does not say why maps as any other error. A user's policy gets the same mapping;
//   - a configuration error (*policy.ConfigError) or a nil context: Internal;
//   - any other error: Unknown.
//
// The status's message is err's text. Status is safe for concurrent use.
func Status(err error) *status.Status {
	if err == nil {
		return status.New(codes.OK, "")
	}
	if st := carried(err); st != nil {
		return st
	}
	code, wait, hasWait := mapped(err)
	if hasWait {
		return refusedWithRetry(err.Error(), wait)
	}
	return status.New(code, err.Error())
}

// mapped returns the code that Status maps err, an error that carries no status, to, and
// the delay of its RetryInfo detail, if it has one.
func mapped(err error) (code codes.Code, wait time.Duration, hasWait bool) {
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled, 0, false
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded, 0, false
	}
	if r, ok := find[policy.Rejection](err); ok {
		switch r.Refusal() {
		case policy.RefusalOverloaded:
			wait, hasWait = r.RetryIn()
			return codes.ResourceExhausted, wait, hasWait
		case policy.RefusalUnavailable:
			return codes.Unavailable, 0, false
		}
	}
	if _, isConfig := find[*policy.ConfigError](err); isConfig || errors.Is(err, policy.ErrNilContext) {
		return codes.Internal, 0, false
	}
	return codes.Unknown, 0, false
}

// retryDelay returns the delay of the RetryInfo detail of e's status, without making the
// status: what the server sends as its grpc-retry-pushback-ms trailer too.
func (e *policyError) retryDelay() (time.Duration, bool) {
	switch {
	case e == nil || e.err == nil:
		return 0, false
	case e.limited:
		return max(e.limit.wait, 0), true
	case e.st.Load() != nil || carried(e.err) != nil:
		return retryInfo(e.GRPCStatus())
	}
	_, wait, ok := mapped(e.err)
	return max(wait, 0), ok
}

// statusError returns err as an error that carries its gRPC status: err itself when it
// already carries one, else a *policyError.
func statusError(err error) error {
	if err == nil || carried(err) != nil {
		return err
	}
	return &policyError{err: err}
}

// carried returns the status that err, or an error it wraps, carries (a GRPCStatus
// method), or nil.
func carried(err error) *status.Status {
	if gs, ok := find[interface{ GRPCStatus() *status.Status }](err); ok {
		return gs.GRPCStatus()
	}
	return nil
}

// find returns the first error of err's tree, depth first as errors.As walks it, that is
// a T. It is errors.As with a type assertion at each step instead of reflection: a
// refusal's status is found several times faster. Unlike errors.As, it does not call As
// methods; the policies' errors have none.
func find[T any](err error) (T, bool) {
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if t, ok := find[T](e); ok {
					return t, true
				}
			}
			var zero T
			return zero, false
		default:
			var zero T
			return zero, false
		}
	}
	var zero T
	return zero, false
}
