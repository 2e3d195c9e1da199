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

// Level logs every event of kind k at level l, instead of its kind's level (see the
// package's documentation). For a kind whose level depends on the event (a breaker's
// transition, whose level depends on the state entered), it sets the level of every
// event of the kind. Default none: each kind has its own level.
// Of two Level options for one kind, the later wins.
func Level(k policy.EventKind, l slog.Level) Option {
	return func(o *options) {
		if o.levels == nil {
			o.levels = map[policy.EventKind]slog.Level{}
		}
		o.levels[k] = l
	}
}

// Listener returns a listener of events, for resilience.WithEventListener (or a policy's
// OnEvent), that logs each event to logger as one record (see the package's
// documentation) with context.Background(). A nil logger logs to slog.Default(), as it is
// when each event is published. An event below the handler's level costs a call to
// the handler's Enabled method, and allocates nothing. The listener is safe for
// concurrent use, as far as logger's handler is.
func Listener(logger *slog.Logger, opts ...Option) func(policy.Event) {
	l := newEventLog(logger, opts)
	return func(e policy.Event) { l.log(context.Background(), e) }
}

// Observer returns an observer, for resilience.WithObserver (or a policy's Observe),
// whose recorders log each event to logger as Listener does, but with the context of the
// call that caused it: a handler that reads the context can add what it holds (a trace
// id). Outcomes are not logged: the recorders' Record does nothing. For the whole calls
// (layer observe.LayerCall), whose recorders get no events, Instrument returns nil, so
// those are not measured. A nil logger logs to slog.Default(), as it is when each event is
// published. The observer and its recorders are safe for concurrent use, as far as
// logger's handler is. A registry has one observer: see the package's documentation for
// when to use Listener instead.
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
