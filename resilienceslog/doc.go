// Package resilienceslog logs resilience4go's events with log/slog. Each event
// (policy.Event) is one record, at the level its kind was registered with; its message is
// the kind's name and its one attribute, "event", is the group of the event's fields that
// apply, as policy.Event.LogValue makes it (kind, instance, at, then wait, retry_after,
// attempt, key, the attributes of the kind's own such as a breaker's from and to,
// changed and err when set). Through slog.NewJSONHandler a rejection reads:
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
// Each kind of event has its level, which its policy package registers with it
// (policy.EventKindInfo.Level, or LevelOf for a kind whose level depends on the event)
// and documents beside it. The built-in kinds follow one rule:
//
//   - Debug: waits for a permit, a slot or room, retry attempts, hedges, and an adaptive
//     limit's changes: what a working system does.
//   - Info: ConfigChanged, an applied fallback, a shared backend that answers again, and
//     a breaker's transition to "closed", "half-open" or "disabled".
//   - Warn: rejections, exhausted or aborted retries, exceeded timeouts, failed hedges,
//     and a breaker's transition to "open" or "forced-open": a call failed or was
//     refused.
//   - Error: a shared backend, or one of its keys, fails, and its limiters apply their
//     failure policy.
//
// A kind registered without a level (a policy of one's own) is logged at Info.
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
