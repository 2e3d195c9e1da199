// Package resilienceslog logs resilience4go's events with log/slog. Each event
// (policy.Event) is one record, at a level that fits its kind; its message is the kind's
// name and its one attribute, "event", is the group of the event's fields that apply, as
// policy.Event.LogValue makes it (kind, instance, at, then wait, retry_after, timeout,
// attempt, from, to, key, node, limit, previous_limit, changed and err when set). Through
// slog.NewJSONHandler a rejection reads:
//
//	{"time":"…","level":"WARN","msg":"RateLimiterRejected","event":{"kind":"RateLimiterRejected","instance":"SearchAPI.Search","at":0,"retry_after":1000000000,"err":"ratelimit: rate limit exceeded for \"SearchAPI.Search\""}}
//
// The message is the same for every event of a kind, so that logs can be searched by it;
// the attributes sit in one group, so that they never clash with the logger's own. The
// record's time is the wall-clock time of the log call (the handler's); event.at is the
// time on the policy's clock.
//
// # Levels
//
//   - Debug: RateLimiterWaited, BulkheadWaited, AdaptiveLimitWaited, RetryAttempt,
//     Hedged, HedgeWon, HedgeSkipped, AdaptiveLimitChanged: what a working system does.
//   - Info: ConfigChanged, FallbackApplied, RateLimiterBackendRecovered, and a
//     CircuitBreakerTransition to "closed", "half-open" or "disabled".
//   - Warn: RateLimiterRejected, CircuitBreakerRejected, BulkheadRejected,
//     AdaptiveLimitRejected, RetryExhausted, RetryAborted, TimeoutExceeded, HedgeFailed,
//     and a CircuitBreakerTransition to "open" or "forced-open": a call failed or was
//     refused.
//   - Error: RateLimiterBackendFailed, RateLimiterBackendKeyFailed: a shared backend
//     fails, and its limiters apply their failure policy.
//   - Info for any other kind.
//
// The option Level changes the level of one kind. The handler decides what is written:
// an event below its level costs a call to its Enabled method, and nothing is built.
//
// # Listener or Observer
//
// Listener makes a registry's event listener:
//
//	reg, err := resilience.NewRegistry(resilience.WithEventListener(resilienceslog.Listener(logger)))
//
// A registry takes any number of listeners, besides its one observer: this is the way to
// log events from a registry that has another observer, such as the one that exports
// OpenTelemetry metrics. A listener is not given the call's context, so the records carry
// context.Background().
//
// Observer makes a registry's observer:
//
//	reg, err := resilience.NewRegistry(resilience.WithObserver(resilienceslog.Observer(logger)))
//
// Its records carry the context of the call that caused each event (context.Background()
// for an event no call caused, such as ConfigChanged), so that a handler that reads the
// context can add, e.g., the call's trace and span ids. But a registry has one observer:
// a later WithObserver replaces an earlier one, so this one cannot sit beside an
// OpenTelemetry observer; use it when logs are all the observation there is. It also
// makes each policy instance hand every call's outcome to a recorder, which drops it:
// the outcomes are per call, not log lines.
//
// Use one or the other on a registry: with both, each event is logged twice.
package resilienceslog
