// Package resilienceotel exports the outcomes and events of resilience4go's policies as
// OpenTelemetry metrics and span events.
//
// A Metrics is a observe.Observer. It is made before the registry, which asks it for each
// instance's recorder as it builds the instance, and is then told the registry, whose
// snapshots give the instruments of the instances' state:
//
//	m, err := resilienceotel.New(meterProvider)
//	reg, err := resilience.NewRegistry(resilience.WithObserver(m))
//	err = m.Observe(reg)
//	defer m.Close()
//
// A policy built on its own is observed with its package's Observe option (e.g.
// keyed.Observe(m) for a keyed.Limiter of package ratelimit/keyed); its counters and histograms are reported,
// and no instrument read from a snapshot.
//
// # Cost
//
// Counting happens in process: each instance's recorder holds atomic counters, one per
// outcome, each on a cache line of its own, and the OpenTelemetry counters are observable
// ones, reported from those atomics by one callback at each collection, with attribute
// sets made when the recorder is. Recording an admitted or a rejected call is an atomic
// add: no map lookup (but with WithKeyAttribute) and no allocation. Histograms are
// synchronous and are recorded only where a call already took time: the waits of calls
// that waited, the durations of the calls a circuit breaker let through, and the whole
// call's duration with WithCallDuration (off by default). The instruments of the
// instances' state are read from Registry.Snapshot at collection time.
//
// # Instruments
//
// Each policy declares its instruments in its package's descriptor: their names, units
// and descriptions, how an outcome at its layer updates them, and how its snapshot is
// read for the instruments of its state. New makes those of every registered policy,
// and this package names none of them; only the instruments of whole calls (Calls,
// CallDuration) are its own.
//
// Every series has the attribute name, the policy instance's id (a Name, or the wrapped
// function's id), as Resilience4j's metrics have the tag name. It is not called
// instance: Prometheus gives every series of a scrape target the label instance (the
// target's host and port), and under a default scrape configuration renames a series'
// own label instance exported_instance; no default scrape renames name. New refuses a
// policy kind that declares an attribute named name, instance or job (Prometheus' other
// target label). Counters are observable counters (cumulative, monotonic). The
// instruments of a state are observable up-down counters where their values add up
// across instances (slots, permits, calls) and observable gauges where they do not (the
// rates). Histograms are in seconds, with the buckets advised by the OpenTelemetry
// semantic conventions for durations (0.005s to 10s), which a View can replace.
//
//	instrument                                 kind          unit          attributes
//	resilience.rate_limiter.available_permits  up-down       {permit}      name
//	resilience.rate_limiter.calls              counter       {call}        name, outcome: admitted|rejected, key
//	resilience.rate_limiter.waiting_calls      up-down       {call}        name
//	resilience.rate_limiter.waited_calls       counter       {call}        name, key
//	resilience.rate_limiter.wait.duration      histogram     s             name, key
//	resilience.circuit_breaker.state           up-down       1             name, state: closed|open|half_open|disabled|forced_open
//	resilience.circuit_breaker.failure_rate    gauge         %             name
//	resilience.circuit_breaker.slow_call_rate  gauge         %             name
//	resilience.circuit_breaker.calls           counter       {call}        name, outcome: succeeded|failed|ignored|not_permitted
//	resilience.circuit_breaker.slow_calls      counter       {call}        name, outcome: succeeded|failed
//	resilience.circuit_breaker.call.duration   histogram     s             name, outcome: succeeded|failed|ignored
//	resilience.circuit_breaker.transitions     counter       {transition}  name, from, to (states as above)
//	resilience.bulkhead.available_slots        up-down       {slot}        name
//	resilience.bulkhead.max_slots              up-down       {slot}        name
//	resilience.bulkhead.queued_calls           up-down       {call}        name
//	resilience.bulkhead.calls                  counter       {call}        name, outcome: admitted|rejected
//	resilience.bulkhead.wait.duration          histogram     s             name
//	resilience.retry.calls                     counter       {call}        name, kind (below)
//	resilience.retry.attempts                  counter       {attempt}     name
//	resilience.timeout.calls                   counter       {call}        name, outcome: succeeded|failed|timed_out
//	resilience.hedge.calls                     counter       {call}        name, outcome: succeeded|failed
//	resilience.hedge.attempts                  counter       {attempt}     name
//	resilience.hedge.budget_available          up-down       {attempt}     name
//	resilience.adaptive_limit.limit            up-down       {call}        name
//	resilience.adaptive_limit.in_flight        up-down       {call}        name
//	resilience.adaptive_limit.queued_calls     up-down       {call}        name
//	resilience.adaptive_limit.calls            counter       {call}        name, outcome: admitted|rejected
//	resilience.calls                           counter       {call}        name, outcome: succeeded|failed|rejected, layer
//	resilience.call.duration                   histogram     s             name, outcome: succeeded|failed|rejected
//
// What they count, from the outcomes observe.Outcome documents:
//
//   - rate_limiter.calls, bulkhead.calls and adaptive_limit.calls count the calls let
//     through and those refused; a call that waits is counted when its wait ends (while
//     it waits, waiting_calls or queued_calls counts it); waited_calls and the
//     wait.duration histograms the admitted calls that waited (Wait > 0), with their
//     wait; a call rejected after waiting records no wait.
//   - circuit_breaker.calls counts each call by its outcome, not_permitted for a call the
//     breaker refused; slow_calls the calls slower than the slow-call threshold;
//     call.duration the latency of every call let through (an ignored error included).
//     transitions counts every move, those made by hand (ForceOpen, Disable, Reset) and
//     by a Reload included; a pair of states appears once it has moved.
//   - circuit_breaker.state has one series per state, 1 for the current one and 0 for
//     the others; failure_rate and slow_call_rate (0 to 100) have no point while the
//     breaker has fewer calls than its minimum, or is disabled or forced open (its
//     snapshot says -1 then; an absent point is OpenTelemetry's way to say unknown).
//   - retry.calls counts each call once it ends, by kind: succeeded_without_retry (the
//     first attempt succeeded), succeeded_with_retry, failed_without_retry (the only
//     attempt allowed failed), failed_with_retry (every attempt failed) and aborted (the
//     retry stopped on an error it does not retry, or on the caller's context).
//     retry.attempts adds each call's attempts.
//   - hedge.attempts adds each call's attempts started; hedge.budget_available has no
//     point for a hedge whose budget is off.
//   - resilience.calls counts whole calls through a wrapped function or pipeline
//     (observe.LayerCall): succeeded and failed always, and rejected with layer, the
//     layer that refused the call (its policy.Rejection), once that layer has refused one.
//     A fallback's replacement is a success. resilience.call.duration exists only with
//     WithCallDuration.
//   - key, a keyed limiter's key, is an attribute only with WithKeyAttribute; the
//     limiter's series without key then stay at 0 beside the keyed ones.
//
// rate_limiter.waiting_calls counts the calls of this process that hold a reserved
// permit and wait for its time, sync or async (ratelimit.Snapshot.Waiting), with a
// backend as without one; calls waiting in other processes that share the backend are
// theirs to report.
//
// # Span events
//
// With WithSpanEvents (the default), an event whose kind has a span event name
// (policy.EventKindInfo.SpanEvent, registered with the kind by its policy package) is
// added under that name to the span of the call's context, when it is recording. The
// built-in kinds that have one:
//
//	event                                  policy.EventKind                attributes
//	resilience.rate_limiter.rejected       ratelimit.EventRejected         retry_after, error.message, key
//	resilience.rate_limiter.waited         ratelimit.EventWaited           wait, key
//	resilience.circuit_breaker.rejected    circuitbreaker.EventRejected    retry_after, error.message
//	resilience.circuit_breaker.transition  circuitbreaker.EventTransition  from, to
//	resilience.bulkhead.rejected           bulkhead.EventRejected          wait, error.message
//	resilience.bulkhead.waited             bulkhead.EventWaited            wait
//	resilience.adaptive_limit.rejected     adaptivelimit.EventRejected     wait, error.message
//	resilience.adaptive_limit.waited       "AdaptiveLimitWaited"           wait
//	resilience.retry.attempt               retry.EventAttempt              attempt, wait, error.message
//	resilience.retry.exhausted             retry.EventExhausted            attempt, error.message
//	resilience.retry.aborted               retry.EventAborted              attempt, error.message
//	resilience.hedge.hedged                hedge.EventHedged               attempt, wait, error.message
//	resilience.hedge.won                   hedge.EventWon                  attempt
//	resilience.hedge.skipped               hedge.EventSkipped              attempt
//	resilience.hedge.failed                hedge.EventFailed               attempt, error.message
//	resilience.timeout.exceeded            timeout.EventExceeded           timeout, error.message
//	resilience.fallback.applied            fallback.EventApplied           error.message
//
// Every event has name, the instance's id, as the series have; the others are there
// when the policy's event has them: attempt (an integer), wait and retry_after (seconds,
// floating point), error.message (the error's text), key (only with WithKeyAttribute),
// and the attributes of the kind's own (policy.Event.Attrs) under their keys: a string,
// integer, float or bool as it is, a duration in seconds (floating point), each first
// converted by its policy.EventAttr.SpanValue when the kind gives one. So timeout is in
// seconds, and from and to name a breaker's states as the state attribute names them. The event's
// time is the span's clock's, not the policy's. The other kinds (backend health,
// configuration and adaptive limit changes) make no span event.
//
// # Resilience4j
//
// The instruments that have a counterpart among Resilience4j's Micrometer metrics:
//
//	resilience.rate_limiter.available_permits  resilience4j.ratelimiter.available.permissions
//	resilience.rate_limiter.waiting_calls      resilience4j.ratelimiter.waiting_threads
//	resilience.circuit_breaker.state           resilience4j.circuitbreaker.state
//	resilience.circuit_breaker.failure_rate    resilience4j.circuitbreaker.failure.rate
//	resilience.circuit_breaker.slow_call_rate  resilience4j.circuitbreaker.slow.call.rate
//	resilience.circuit_breaker.calls           resilience4j.circuitbreaker.calls (kind successful|failed|ignored)
//	                                           and resilience4j.circuitbreaker.not.permitted.calls
//	resilience.circuit_breaker.call.duration   resilience4j.circuitbreaker.calls (the timer's durations)
//	resilience.circuit_breaker.slow_calls      resilience4j.circuitbreaker.slow.calls
//	resilience.bulkhead.available_slots        resilience4j.bulkhead.available.concurrent.calls
//	resilience.bulkhead.max_slots              resilience4j.bulkhead.max.allowed.concurrent.calls
//	resilience.retry.calls                     resilience4j.retry.calls (kind successful_without_retry|…)
//	resilience.timeout.calls                   resilience4j.timelimiter.calls (kind successful|failed|timeout)
//
// The differences: Resilience4j reports -1 for a rate it cannot compute yet, where these
// gauges have no point; its counters are by kind, these by outcome, with the values
// above; its circuit breaker gauges count the calls buffered in the window
// (resilience4j.circuitbreaker.buffered.calls), where these count every call since the
// process started. The other instruments, span events and the hedge and adaptive limit
// have no counterpart there.
package resilienceotel
