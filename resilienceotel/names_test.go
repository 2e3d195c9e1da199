package resilienceotel_test

// The names of the instruments the policies declare (each in its package's descriptor),
// as the dashboard and these tests read them.
const (
	RateLimiterAvailablePermits = "resilience.rate_limiter.available_permits" // observable up-down counter, {permit}: permits a call could take now
	RateLimiterWaitingCalls     = "resilience.rate_limiter.waiting_calls"     // observable up-down counter, {call}: calls waiting for a reserved permit
	RateLimiterCalls            = "resilience.rate_limiter.calls"             // observable counter, {call}: by outcome admitted|rejected
	RateLimiterWaitedCalls      = "resilience.rate_limiter.waited_calls"      // observable counter, {call}: calls admitted after a wait
	RateLimiterWaitDuration     = "resilience.rate_limiter.wait.duration"     // histogram, s: the waits of the calls that waited
	RateLimiterShadowRejections = "resilience.rate_limiter.shadow_rejections" // observable counter, {call}: let through in shadow mode, would have been rejected

	CircuitBreakerState            = "resilience.circuit_breaker.state"             // observable up-down counter, 1: one series per state, 1 for the current one
	CircuitBreakerFailureRate      = "resilience.circuit_breaker.failure_rate"      // observable gauge, %: no point while too few calls
	CircuitBreakerSlowCallRate     = "resilience.circuit_breaker.slow_call_rate"    // observable gauge, %: no point while too few calls
	CircuitBreakerCalls            = "resilience.circuit_breaker.calls"             // observable counter, {call}: by outcome succeeded|failed|ignored|not_permitted
	CircuitBreakerSlowCalls        = "resilience.circuit_breaker.slow_calls"        // observable counter, {call}: by outcome succeeded|failed
	CircuitBreakerCallDuration     = "resilience.circuit_breaker.call.duration"     // histogram, s: by outcome succeeded|failed|ignored
	CircuitBreakerTransitions      = "resilience.circuit_breaker.transitions"       // observable counter, {transition}: by from and to
	CircuitBreakerShadowRejections = "resilience.circuit_breaker.shadow_rejections" // observable counter, {call}: let through in shadow mode, would have been rejected

	BulkheadAvailableSlots   = "resilience.bulkhead.available_slots"   // observable up-down counter, {slot}: free slots
	BulkheadMaxSlots         = "resilience.bulkhead.max_slots"         // observable up-down counter, {slot}: configured slots
	BulkheadQueuedCalls      = "resilience.bulkhead.queued_calls"      // observable up-down counter, {call}: calls waiting for a slot
	BulkheadCalls            = "resilience.bulkhead.calls"             // observable counter, {call}: by outcome admitted|rejected
	BulkheadWaitDuration     = "resilience.bulkhead.wait.duration"     // histogram, s: the waits of the calls that waited
	BulkheadShedCalls        = "resilience.bulkhead.shed_calls"        // observable counter, {call}: shed for their priority, by priority
	BulkheadShadowRejections = "resilience.bulkhead.shadow_rejections" // observable counter, {call}: let through in shadow mode, would have been rejected

	RetryCalls    = "resilience.retry.calls"    // observable counter, {call}: by kind (see the package documentation)
	RetryAttempts = "resilience.retry.attempts" // observable counter, {attempt}: attempts made, first ones included

	TimeoutCalls = "resilience.timeout.calls" // observable counter, {call}: by outcome succeeded|failed|timed_out

	HedgeCalls           = "resilience.hedge.calls"            // observable counter, {call}: by outcome succeeded|failed
	HedgeAttempts        = "resilience.hedge.attempts"         // observable counter, {attempt}: attempts started, first ones included
	HedgeBudgetAvailable = "resilience.hedge.budget_available" // observable up-down counter, {attempt}: hedges the budget allows now

	AdaptiveLimitLimit            = "resilience.adaptive_limit.limit"             // observable up-down counter, {call}: the limit on calls in flight
	AdaptiveLimitInFlight         = "resilience.adaptive_limit.in_flight"         // observable up-down counter, {call}: calls in flight
	AdaptiveLimitQueuedCalls      = "resilience.adaptive_limit.queued_calls"      // observable up-down counter, {call}: calls waiting for room
	AdaptiveLimitCalls            = "resilience.adaptive_limit.calls"             // observable counter, {call}: by outcome admitted|rejected
	AdaptiveLimitShedCalls        = "resilience.adaptive_limit.shed_calls"        // observable counter, {call}: shed for their priority, by priority
	AdaptiveLimitShadowRejections = "resilience.adaptive_limit.shadow_rejections" // observable counter, {call}: let through in shadow mode, would have been rejected

)
