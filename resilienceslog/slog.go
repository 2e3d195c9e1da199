package resilienceslog

import (
	"context"
	"log/slog"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Option configures a Listener or an Observer.
type Option func(*options)

type options struct {
	levels map[policy.EventKind]slog.Level // the levels set with Level, by kind
}

// Level logs every event of kind k at level l, instead of its kind's level. For a kind
// whose level depends on the event (a breaker's transition, whose level depends on the
// state entered), it sets the level of every event of the kind. Default none: each kind
// has its own level. Of two Level options for one kind, the later wins.
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
// A kind registered without a level (a policy of one's own) is logged at Info. The
// handler decides what is written: an event below its level costs a call to its Enabled
// method, and nothing is built.
func Level(k policy.EventKind, l slog.Level) Option {
	return func(o *options) {
		if o.levels == nil {
			o.levels = map[policy.EventKind]slog.Level{}
		}
		o.levels[k] = l
	}
}

// Listener returns a listener of events, for resilience.WithEventListener (or a policy's
// OnEvent), that logs each event to logger as one record with context.Background(). A
// nil logger logs to slog.Default(), as it is when each event is published. An event
// below the handler's level costs a call to the handler's Enabled method, and allocates
// nothing. The listener is safe for concurrent use, as far as logger's handler is.
//
// A record is at the level of the event's kind (see Level); its message is the kind's
// name and its one attribute, "event", is the group of the event's fields that apply, as
// policy.Event.LogValue makes it (kind, instance, at, then wait, retry_after, attempt,
// key, the attributes of the kind's own such as a breaker's from and to, changed and err
// when set). Through slog.NewJSONHandler a rejection reads:
//
//	{"time":"…","level":"WARN","msg":"RateLimiterRejected","event":{"kind":"RateLimiterRejected","instance":"SearchAPI.Search","at":0,"retry_after":1000000000,"err":"ratelimit: rate limit exceeded for \"SearchAPI.Search\""}}
//
// The message is the same for every event of a kind, so that logs can be searched by it;
// the attributes sit in one group, so that they never clash with the logger's own. The
// record's time is the wall-clock time of the log call (the handler's); event.at is the
// time on the policy's clock.
//
// A registry takes any number of listeners, besides its one observer: this is the way to
// log events from a registry that has another observer, such as the one that exports
// OpenTelemetry metrics. A listener is not given the call's context, so the records carry
// context.Background(). With Observer too, each event is logged twice.
func Listener(logger *slog.Logger, opts ...Option) func(policy.Event) {
	l := newEventLog(logger, opts)
	return func(e policy.Event) { l.log(context.Background(), e) }
}

// Observer returns an observer, for resilience.WithObserver (or keyed.Observe, for a
// keyed limiter built on its own), whose recorders log each event to logger as Listener does, but with the context of the
// call that caused it: a handler that reads the context can add what it holds (a trace
// id). Outcomes are not logged: the recorders' Record does nothing. For the whole calls
// (layer observe.LayerCall), whose recorders get no events, Instrument returns nil, so
// those are not measured. A nil logger logs to slog.Default(), as it is when each event is
// published. The observer and its recorders are safe for concurrent use, as far as
// logger's handler is.
//
// Its records carry the context of the call that caused each event (context.Background()
// for an event no call caused, such as ConfigChanged), so that a handler that reads the
// context can add, e.g., the call's trace and span ids. But a registry has one observer:
// a later WithObserver replaces an earlier one, so this one cannot sit beside an
// OpenTelemetry observer (use Listener there); use it when logs are all the observation
// there is. It also makes each policy instance hand every call's outcome to a recorder,
// which drops it: the outcomes are per call, not log lines. With Listener too, each event
// is logged twice.
func Observer(logger *slog.Logger, opts ...Option) observe.Observer {
	return &observer{rec: &recorder{newEventLog(logger, opts)}}
}

type observer struct{ rec *recorder }

// Instrument returns the one recorder shared by every instance (an event names its own
// instance), or nil for observe.LayerCall.
func (o *observer) Instrument(layer policy.Layer, _ string) observe.Recorder {
	if layer == observe.LayerCall {
		return nil
	}
	return o.rec
}

type recorder struct{ l eventLog }

// Record does nothing: outcomes are not logged.
func (*recorder) Record(context.Context, observe.Outcome) {}

// Event logs e with ctx.
func (r *recorder) Event(ctx context.Context, e policy.Event) { r.l.log(ctx, e) }

// Untimed reports true: a log has no use for latencies, so no layer reads its clock to
// measure one for it (see observe.Recorder).
func (*recorder) Untimed() bool { return true }

// WantsEvent reports whether an event of kind k about the call with ctx would be logged:
// whether the handler takes records at its level (see observe.Recorder). A kind whose
// level depends on the event (policy.EventKindInfo.LevelOf), such as a breaker's
// transition, is always wanted, unless Level set its level.
func (r *recorder) WantsEvent(ctx context.Context, k policy.EventKind) bool {
	level, ok := r.l.levels[k]
	if !ok {
		info := k.Info()
		if info.LevelOf != nil {
			return true
		}
		level = info.Level
	}
	return r.l.loggerOrDefault().Enabled(ctx, level)
}

// loggerOrDefault returns the logger, or slog.Default() as it is now.
func (l eventLog) loggerOrDefault() *slog.Logger {
	if l.logger == nil {
		return slog.Default()
	}
	return l.logger
}

// eventLog logs events: the logger (nil: slog.Default() at each event) and the levels
// set with Level, read only once built.
type eventLog struct {
	logger *slog.Logger
	levels map[policy.EventKind]slog.Level
}

func newEventLog(logger *slog.Logger, opts []Option) eventLog {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return eventLog{logger: logger, levels: o.levels}
}

// log writes e as one record, if the handler takes records at e's level; else it builds
// nothing.
func (l eventLog) log(ctx context.Context, e policy.Event) {
	logger := l.loggerOrDefault()
	level, ok := l.levels[e.Kind]
	if !ok {
		level = e.Level()
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	logger.LogAttrs(ctx, level, e.Kind.String(), slog.Attr{Key: "event", Value: e.LogValue()})
}
