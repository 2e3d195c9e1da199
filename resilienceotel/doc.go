// Package resilienceotel exports the outcomes and events of resilience4go's policies as
// OpenTelemetry metrics and span events.
//
// A Metrics is an observe.Observer. It is made before the registry, which asks it for
// each instance's recorder as it builds the instance, and is then told the registry,
// whose snapshots give the instruments of the instances' state:
//
//	m, err := resilienceotel.New(meterProvider)
//	reg, err := resilience.NewRegistry(resilience.WithObserver(m))
//	err = m.Observe(reg)
//	defer m.Close()
//
// A keyed.Limiter of package ratelimit/keyed, built on its own, is observed with
// keyed.Observe(m): its counters and histograms are reported, and no instrument read
// from a snapshot. Every other policy is observed through its registry.
//
// Where the detail lives:
//   - New lists the instruments (resilience.rate_limiter.*, resilience.circuit_breaker.*,
//     resilience.bulkhead.*, resilience.retry.*, resilience.timeout.*, resilience.hedge.*,
//     resilience.adaptive_limit.*, and Calls and CallDuration of whole calls), their
//     attributes, what each counts, and their counterparts among Resilience4j's metrics;
//   - WithSpanEvents lists the span events added to the call's span, and their
//     attributes;
//   - Metrics says what counting costs on a call's path; WithKeyAttribute adds a keyed
//     limiter's keys to its series, WithCallDuration the whole calls' durations.
package resilienceotel
