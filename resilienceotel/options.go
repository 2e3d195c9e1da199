package resilienceotel

// Option configures the Metrics that New makes.
type Option func(*options)

type options struct {
	key          bool // a keyed limiter's key is an attribute of its series and span events
	callDuration bool // the whole call's duration is recorded (resilience.call.duration)
	spans        bool // events are added to the call's span
}

func defaultOptions() options { return options{spans: true} }

// WithKeyAttribute adds the attribute key, the client's key of a keyed rate limiter
// (a keyed.Limiter, through keyed.Observe), to that limiter's counter and histogram
// series and to its span events. Each key then makes series of its own, held for as long
// as the Metrics lives, evicted keys included, and each call of such a limiter looks its
// key's counters up in a map: turn it on only for a limiter with few keys (tenants, not
// client addresses). Default off: a keyed limiter's series are its instance's alone, and
// its span events carry no key. With it, the limiter's series without key stay at 0
// beside the keyed ones.
func WithKeyAttribute(on bool) Option { return func(o *options) { o.key = on } }

// WithCallDuration records the duration of every whole call (observe.LayerCall) in the
// histogram resilience.call.duration, in seconds, by outcome. A synchronous histogram
// costs a few hundred nanoseconds per call, more than an admitted call through a rate
// limiter costs in all, so it is off by default; the counter resilience.calls is kept
// either way.
func WithCallDuration(on bool) Option { return func(o *options) { o.callDuration = on } }

// WithSpanEvents adds an event to the span of the call's context (trace.SpanFromContext)
// for each rejection, retry, breaker transition, hedge, timeout, wait and applied
// fallback, when that span is recording. Spans that are not recording cost one context
// lookup per event and nothing else. Default on.
//
// An event whose kind has a span event name (policy.EventKindInfo.SpanEvent, registered
// with the kind by its policy package) is added under that name. The built-in kinds that
// have one:
//
//	event                                  policy.EventKind                attributes
//	resilience.rate_limiter.rejected       ratelimit.EventRejected         retry_after, error.message, key
//	resilience.rate_limiter.waited         ratelimit.EventWaited           wait, key
//	resilience.circuit_breaker.rejected    circuitbreaker.EventRejected    retry_after, error.message
//	resilience.circuit_breaker.transition  circuitbreaker.EventTransition  from, to
//	resilience.bulkhead.rejected           bulkhead.EventRejected          wait, error.message
//	resilience.bulkhead.waited             bulkhead.EventWaited            wait
//	resilience.adaptive_limit.rejected     adaptivelimit.EventRejected     wait, error.message
//	resilience.adaptive_limit.waited       adaptivelimit.EventWaited       wait
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
// seconds, and from and to name a breaker's states as the state attribute of
// resilience.circuit_breaker.state names them (see New). The event's time is the span's
// clock's, not the policy's. The other kinds (backend health, configuration and adaptive
// limit changes) make no span event.
func WithSpanEvents(on bool) Option { return func(o *options) { o.spans = on } }
