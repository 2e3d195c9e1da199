package resilienceotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience4go/resilience4go/policy"
)

// The names of the span events, by the kind of policy.Event they stand for.
const (
	EventRateLimiterRejected      = "resilience.rate_limiter.rejected"      // policy.RateLimiterRejected
	EventRateLimiterWaited        = "resilience.rate_limiter.waited"        // policy.RateLimiterWaited
	EventCircuitBreakerRejected   = "resilience.circuit_breaker.rejected"   // policy.CircuitBreakerRejected
	EventCircuitBreakerTransition = "resilience.circuit_breaker.transition" // policy.CircuitBreakerTransition
	EventBulkheadRejected         = "resilience.bulkhead.rejected"          // policy.BulkheadRejected
	EventBulkheadWaited           = "resilience.bulkhead.waited"            // policy.BulkheadWaited
	EventAdaptiveLimitRejected    = "resilience.adaptive_limit.rejected"    // policy.AdaptiveLimitRejected
	EventAdaptiveLimitWaited      = "resilience.adaptive_limit.waited"      // policy.AdaptiveLimitWaited
	EventRetryAttempt             = "resilience.retry.attempt"              // policy.RetryAttempt
	EventRetryExhausted           = "resilience.retry.exhausted"            // policy.RetryExhausted
	EventRetryAborted             = "resilience.retry.aborted"              // policy.RetryAborted
	EventHedged                   = "resilience.hedge.hedged"               // policy.Hedged
	EventHedgeWon                 = "resilience.hedge.won"                  // policy.HedgeWon
	EventHedgeSkipped             = "resilience.hedge.skipped"              // policy.HedgeSkipped
	EventHedgeFailed              = "resilience.hedge.failed"               // policy.HedgeFailed
	EventTimeoutExceeded          = "resilience.timeout.exceeded"           // policy.TimeoutExceeded
	EventFallbackApplied          = "resilience.fallback.applied"           // policy.FallbackApplied
)

// spanEventName returns the name of e's span event; "" for a kind that has none.
func spanEventName(k policy.EventKind) string {
	switch k {
	case policy.RateLimiterRejected:
		return EventRateLimiterRejected
	case policy.RateLimiterWaited:
		return EventRateLimiterWaited
	case policy.CircuitBreakerRejected:
		return EventCircuitBreakerRejected
	case policy.CircuitBreakerTransition:
		return EventCircuitBreakerTransition
	case policy.BulkheadRejected:
		return EventBulkheadRejected
	case policy.BulkheadWaited:
		return EventBulkheadWaited
	case policy.AdaptiveLimitRejected:
		return EventAdaptiveLimitRejected
	case policy.AdaptiveLimitWaited:
		return EventAdaptiveLimitWaited
	case policy.RetryAttempt:
		return EventRetryAttempt
	case policy.RetryExhausted:
		return EventRetryExhausted
	case policy.RetryAborted:
		return EventRetryAborted
	case policy.Hedged:
		return EventHedged
	case policy.HedgeWon:
		return EventHedgeWon
	case policy.HedgeSkipped:
		return EventHedgeSkipped
	case policy.HedgeFailed:
		return EventHedgeFailed
	case policy.TimeoutExceeded:
		return EventTimeoutExceeded
	case policy.FallbackApplied:
		return EventFallbackApplied
	}
	return ""
}

// addSpanEvent adds e's span event, if it has one, to the span of ctx, if that span is
// recording. The attributes are built only then. key says whether a keyed limiter's key
// is one of them.
func addSpanEvent(ctx context.Context, e policy.Event, key bool) {
	name := spanEventName(e.Kind)
	if name == "" {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent(name, trace.WithAttributes(spanAttributes(e, key)...))
}

// spanAttributes returns the attributes of e's span event: instance always, and each of
// the others when e has it.
func spanAttributes(e policy.Event, key bool) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 6)
	kv = append(kv, attribute.String(attrInstance, e.Instance))
	if key && e.Key != "" {
		kv = append(kv, attribute.String(attrKey, e.Key))
	}
	if e.Attempt > 0 {
		kv = append(kv, attribute.Int(attrAttempt, e.Attempt))
	}
	if e.Wait > 0 {
		kv = append(kv, attribute.Float64(attrWait, e.Wait.Seconds()))
	}
	if e.RetryAfter > 0 {
		kv = append(kv, attribute.Float64(attrRetryAfter, e.RetryAfter.Seconds()))
	}
	if e.Timeout > 0 {
		kv = append(kv, attribute.Float64(attrTimeout, e.Timeout.Seconds()))
	}
	if e.Kind == policy.CircuitBreakerTransition {
		kv = append(kv, attribute.String(attrFrom, snakeState(e.From)), attribute.String(attrTo, snakeState(e.To)))
	}
	if e.Err != nil {
		kv = append(kv, attribute.String(attrError, e.Err.Error()))
	}
	return kv
}

// snakeState returns a breaker state's name as the attributes give it (half_open for
// half-open); an unknown name as it is.
func snakeState(name string) string {
	if s, ok := breakerState(name); ok {
		return breakerStates[s]
	}
	return name
}
