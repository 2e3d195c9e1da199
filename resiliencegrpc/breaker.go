package resiliencegrpc

import (
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/resilience"
)

// CircuitBreaker is resilience.CircuitBreaker for a Client: the breaker counts the
// FailureCodes (and errors that are not statuses, such as a failure to connect) as
// failures and the SuccessCodes as successes, and ignores the statuses in neither list
// (ErrNotFailure: a server's ResourceExhausted, a Canceled call) and the refusals of the
// client's own rate limiter (ratelimit.ErrExceeded, which the breaker, outside the
// limiter, would otherwise count as failures). opts come after these and add to them.
//
// With resilience.CircuitBreaker instead, every status the client does not count as a
// success is a failure.
func CircuitBreaker(opts ...circuitbreaker.Option) resilience.Spec {
	return resilience.CircuitBreaker(append([]circuitbreaker.Option{
		circuitbreaker.IgnoreOn(ErrNotFailure, errRateLimited)}, opts...)...)
}
