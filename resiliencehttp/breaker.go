package resiliencehttp

import (
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/resilience"
)

// CircuitBreaker is resilience.CircuitBreaker for a Transport: the breaker counts 5xx
// responses (or what TransportConfig.Failure says) and transport errors as failures, and
// ignores — counts neither as success nor as failure — responses that are retried but are
// not failures (ErrNotFailure: 429 by default) and the rejections of the transport's own
// rate limiter (ratelimit.ErrExceeded, which an outer breaker would otherwise record as
// failures): neither says that the dependency is broken. 4xx responses that are not
// retried are successes. opts come after these and add to them.
//
// With resilience.CircuitBreaker instead, every StatusError counts as a failure, 429
// included.
func CircuitBreaker(opts ...circuitbreaker.Option) resilience.Spec {
	return resilience.CircuitBreaker(append([]circuitbreaker.Option{
		circuitbreaker.IgnoreOn(ErrNotFailure, errRateLimited)}, opts...)...)
}
