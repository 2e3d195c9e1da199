package resilienceotel

import (
	"go.opentelemetry.io/otel/metric"
)

// The names of the instruments. The package documentation says what each reports.
const (
	RateLimiterAvailablePermits = "resilience.rate_limiter.available_permits" // observable up-down counter, {permit}: permits a call could take now
	RateLimiterWaitingCalls     = "resilience.rate_limiter.waiting_calls"     // observable up-down counter, {call}: calls waiting for a reserved permit
	RateLimiterCalls            = "resilience.rate_limiter.calls"             // observable counter, {call}: by outcome admitted|rejected
	RateLimiterWaitedCalls      = "resilience.rate_limiter.waited_calls"      // observable counter, {call}: calls admitted after a wait
	RateLimiterWaitDuration     = "resilience.rate_limiter.wait.duration"     // histogram, s: the waits of the calls that waited

	CircuitBreakerState        = "resilience.circuit_breaker.state"          // observable up-down counter, 1: one series per state, 1 for the current one
	CircuitBreakerFailureRate  = "resilience.circuit_breaker.failure_rate"   // observable gauge, %: no point while too few calls
	CircuitBreakerSlowCallRate = "resilience.circuit_breaker.slow_call_rate" // observable gauge, %: no point while too few calls
	CircuitBreakerCalls        = "resilience.circuit_breaker.calls"          // observable counter, {call}: by outcome succeeded|failed|ignored|not_permitted
	CircuitBreakerSlowCalls    = "resilience.circuit_breaker.slow_calls"     // observable counter, {call}: by outcome succeeded|failed
	CircuitBreakerCallDuration = "resilience.circuit_breaker.call.duration"  // histogram, s: by outcome succeeded|failed|ignored
	CircuitBreakerTransitions  = "resilience.circuit_breaker.transitions"    // observable counter, {transition}: by from and to

	BulkheadAvailableSlots = "resilience.bulkhead.available_slots" // observable up-down counter, {slot}: free slots
	BulkheadMaxSlots       = "resilience.bulkhead.max_slots"       // observable up-down counter, {slot}: configured slots
	BulkheadQueuedCalls    = "resilience.bulkhead.queued_calls"    // observable up-down counter, {call}: calls waiting for a slot
	BulkheadCalls          = "resilience.bulkhead.calls"           // observable counter, {call}: by outcome admitted|rejected
	BulkheadWaitDuration   = "resilience.bulkhead.wait.duration"   // histogram, s: the waits of the calls that waited

	RetryCalls    = "resilience.retry.calls"    // observable counter, {call}: by kind (see the package documentation)
	RetryAttempts = "resilience.retry.attempts" // observable counter, {attempt}: attempts made, first ones included

	TimeoutCalls = "resilience.timeout.calls" // observable counter, {call}: by outcome succeeded|failed|timed_out

	HedgeCalls           = "resilience.hedge.calls"            // observable counter, {call}: by outcome succeeded|failed
	HedgeAttempts        = "resilience.hedge.attempts"         // observable counter, {attempt}: attempts started, first ones included
	HedgeBudgetAvailable = "resilience.hedge.budget_available" // observable up-down counter, {attempt}: hedges the budget allows now

	AdaptiveLimitLimit       = "resilience.adaptive_limit.limit"        // observable up-down counter, {call}: the limit on calls in flight
	AdaptiveLimitInFlight    = "resilience.adaptive_limit.in_flight"    // observable up-down counter, {call}: calls in flight
	AdaptiveLimitQueuedCalls = "resilience.adaptive_limit.queued_calls" // observable up-down counter, {call}: calls waiting for room
	AdaptiveLimitCalls       = "resilience.adaptive_limit.calls"        // observable counter, {call}: by outcome admitted|rejected

	Calls        = "resilience.calls"         // observable counter, {call}: by outcome succeeded|failed|rejected (with layer)
	CallDuration = "resilience.call.duration" // histogram, s: by outcome; only with WithCallDuration
)

// The attribute keys of the series and span events.
const (
	attrInstance   = "instance"
	attrOutcome    = "outcome"
	attrKind       = "kind"
	attrState      = "state"
	attrFrom       = "from"
	attrTo         = "to"
	attrLayer      = "layer"
	attrKey        = "key"
	attrAttempt    = "attempt"
	attrWait       = "wait"
	attrRetryAfter = "retry_after"
	attrTimeout    = "timeout"
	attrError      = "error.message"
)

// durationBuckets are the advised bucket boundaries of the histograms, in seconds: those
// of the OpenTelemetry semantic conventions for durations (http.server.request.duration).
// A View replaces them.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// instruments holds every instrument of a Metrics.
type instruments struct {
	rlAvailable metric.Int64ObservableUpDownCounter
	rlWaiting   metric.Int64ObservableUpDownCounter
	rlCalls     metric.Int64ObservableCounter
	rlWaited    metric.Int64ObservableCounter
	rlWait      metric.Float64Histogram

	cbState       metric.Int64ObservableUpDownCounter
	cbFailureRate metric.Float64ObservableGauge
	cbSlowRate    metric.Float64ObservableGauge
	cbCalls       metric.Int64ObservableCounter
	cbSlow        metric.Int64ObservableCounter
	cbDuration    metric.Float64Histogram
	cbTransitions metric.Int64ObservableCounter

	bhAvailable metric.Int64ObservableUpDownCounter
	bhMax       metric.Int64ObservableUpDownCounter
	bhQueued    metric.Int64ObservableUpDownCounter
	bhCalls     metric.Int64ObservableCounter
	bhWait      metric.Float64Histogram

	rtCalls    metric.Int64ObservableCounter
	rtAttempts metric.Int64ObservableCounter

	toCalls metric.Int64ObservableCounter

	hgCalls    metric.Int64ObservableCounter
	hgAttempts metric.Int64ObservableCounter
	hgBudget   metric.Int64ObservableUpDownCounter

	alLimit    metric.Int64ObservableUpDownCounter
	alInFlight metric.Int64ObservableUpDownCounter
	alQueued   metric.Int64ObservableUpDownCounter
	alCalls    metric.Int64ObservableCounter

	calls        metric.Int64ObservableCounter
	callDuration metric.Float64Histogram // nil unless WithCallDuration
}

// make makes the instruments on meter and returns the observable ones, which the
// callback reports.
func (in *instruments) make(meter metric.Meter, o options) ([]metric.Observable, error) {
	b := instrumentBuilder{meter: meter}

	in.rlAvailable = b.upDown(RateLimiterAvailablePermits, "{permit}",
		"Permits a call could take now without waiting, per rate limiter.")
	in.rlWaiting = b.upDown(RateLimiterWaitingCalls, "{call}",
		"Calls that hold a reserved permit and wait for its time, per rate limiter.")
	in.rlCalls = b.counter(RateLimiterCalls, "{call}",
		"Calls a rate limiter decided on, by outcome: admitted or rejected.")
	in.rlWaited = b.counter(RateLimiterWaitedCalls, "{call}",
		"Calls a rate limiter admitted after a wait for their permit.")
	in.rlWait = b.histogram(RateLimiterWaitDuration,
		"How long the calls that waited for a rate limiter's permit waited.")

	in.cbState = b.upDown(CircuitBreakerState, "1",
		"A circuit breaker's state: one series per state, 1 for the current state and 0 for the others.")
	in.cbFailureRate = b.gauge(CircuitBreakerFailureRate, "%",
		"The percentage of a circuit breaker's buffered calls that failed; no point while it has fewer than its minimum number of calls.")
	in.cbSlowRate = b.gauge(CircuitBreakerSlowCallRate, "%",
		"The percentage of a circuit breaker's buffered calls that were slow; no point while it has fewer than its minimum number of calls.")
	in.cbCalls = b.counter(CircuitBreakerCalls, "{call}",
		"Calls through a circuit breaker, by outcome: succeeded, failed, ignored or not_permitted.")
	in.cbSlow = b.counter(CircuitBreakerSlowCalls, "{call}",
		"Calls through a circuit breaker slower than its slow-call threshold, by outcome: succeeded or failed.")
	in.cbDuration = b.histogram(CircuitBreakerCallDuration,
		"How long the calls a circuit breaker let through took, by outcome: succeeded, failed or ignored.")
	in.cbTransitions = b.counter(CircuitBreakerTransitions, "{transition}",
		"A circuit breaker's moves from one state to another, by the states left and entered.")

	in.bhAvailable = b.upDown(BulkheadAvailableSlots, "{slot}", "A bulkhead's free slots.")
	in.bhMax = b.upDown(BulkheadMaxSlots, "{slot}", "A bulkhead's configured slots.")
	in.bhQueued = b.upDown(BulkheadQueuedCalls, "{call}", "Calls waiting for a bulkhead's slot.")
	in.bhCalls = b.counter(BulkheadCalls, "{call}",
		"Calls a bulkhead decided on, by outcome: admitted or rejected.")
	in.bhWait = b.histogram(BulkheadWaitDuration,
		"How long the calls that waited for a bulkhead's slot waited before they got it.")

	in.rtCalls = b.counter(RetryCalls, "{call}",
		"Calls through a retry, by kind: succeeded_without_retry, succeeded_with_retry, failed_without_retry, failed_with_retry or aborted.")
	in.rtAttempts = b.counter(RetryAttempts, "{attempt}", "Attempts a retry made, first attempts included.")

	in.toCalls = b.counter(TimeoutCalls, "{call}",
		"Calls through a timeout, by outcome: succeeded, failed or timed_out.")

	in.hgCalls = b.counter(HedgeCalls, "{call}", "Calls through a hedge, by outcome: succeeded or failed.")
	in.hgAttempts = b.counter(HedgeAttempts, "{attempt}", "Attempts a hedge started, first attempts included.")
	in.hgBudget = b.upDown(HedgeBudgetAvailable, "{attempt}",
		"Hedges a hedge's budget would allow now; no point when the budget is off.")

	in.alLimit = b.upDown(AdaptiveLimitLimit, "{call}", "An adaptive limit's current limit on calls in flight.")
	in.alInFlight = b.upDown(AdaptiveLimitInFlight, "{call}", "Calls in flight under an adaptive limit.")
	in.alQueued = b.upDown(AdaptiveLimitQueuedCalls, "{call}", "Calls waiting for room under an adaptive limit.")
	in.alCalls = b.counter(AdaptiveLimitCalls, "{call}",
		"Calls an adaptive limit decided on, by outcome: admitted or rejected.")

	in.calls = b.counter(Calls, "{call}",
		"Whole calls through a wrapped function or pipeline, by outcome: succeeded, failed, or rejected with the layer that refused it.")
	if o.callDuration {
		in.callDuration = b.histogram(CallDuration,
			"How long whole calls through a wrapped function or pipeline took, by outcome.")
	}
	return b.observables, b.err
}

// instrumentBuilder makes instruments on a meter, keeping the observable ones and the
// errors.
type instrumentBuilder struct {
	meter       metric.Meter
	observables []metric.Observable
	errs
}

func (b *instrumentBuilder) counter(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := b.meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.add(err)
	if c != nil {
		b.observables = append(b.observables, c)
	}
	return c
}

func (b *instrumentBuilder) upDown(name, unit, desc string) metric.Int64ObservableUpDownCounter {
	c, err := b.meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.add(err)
	if c != nil {
		b.observables = append(b.observables, c)
	}
	return c
}

func (b *instrumentBuilder) gauge(name, unit, desc string) metric.Float64ObservableGauge {
	g, err := b.meter.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.add(err)
	if g != nil {
		b.observables = append(b.observables, g)
	}
	return g
}

func (b *instrumentBuilder) histogram(name, desc string) metric.Float64Histogram {
	h, err := b.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	b.add(err)
	return h
}
