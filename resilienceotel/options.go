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
// its span events carry no key.
func WithKeyAttribute(on bool) Option { return func(o *options) { o.key = on } }

// WithCallDuration records the duration of every whole call (observe.LayerCall) in the
// histogram resilience.call.duration, in seconds, by outcome. A synchronous histogram
// costs a few hundred nanoseconds per call, more than an admitted call through a rate
// limiter costs in all, so it is off by default; the counter resilience.calls is kept
// either way.
func WithCallDuration(on bool) Option { return func(o *options) { o.callDuration = on } }

// WithSpanEvents adds an event to the span of the call's context (trace.SpanFromContext)
// for each rejection, retry, breaker transition, hedge, timeout, wait and applied
// fallback, when that span is recording; the package documentation lists them. Spans
// that are not recording cost one context lookup per event and nothing else. Default on.
func WithSpanEvents(on bool) Option { return func(o *options) { o.spans = on } }
