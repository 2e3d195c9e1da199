package resilienceotel

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// counter is a count bumped by calls, alone on its cache line: the pad keeps the next
// counter, or the fields after it, off the line, so that calls bumping one counter on
// one core do not invalidate the line another core bumps another counter on, or reads
// a recorder's fixed fields from. A run of counters is preceded by a linePad.
type counter struct {
	atomic.Int64
	_ [cacheLine - 8]byte
}

// cacheLine is the size the counters are padded to, in bytes.
const cacheLine = 64

// linePad keeps the fields before a run of counters off the first counter's line.
type linePad [cacheLine - 8]byte

// nResults bounds the observe.Result values: arrays indexed by a Result (masked with
// resultMask) need no bounds check.
const (
	nResults   = 8
	resultMask = nResults - 1
)

// observeWith returns the option that reports a value with set, ready to be passed on
// without building a slice per observation.
func observeWith(kv ...attribute.KeyValue) []metric.ObserveOption {
	return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// recordWith is observeWith for a histogram's Record.
func recordWith(kv ...attribute.KeyValue) []metric.RecordOption {
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// seconds returns d in seconds, as the histograms take it.
func seconds(d int64) float64 { return float64(d) / 1e9 }

// base is what every recorder holds: its Metrics, its instance and the options its
// Event reads. Its Event adds span events.
type base struct {
	m     *Metrics
	id    string
	inst  attribute.KeyValue // name=id, the instance
	spans bool               // WithSpanEvents
	key   bool               // WithKeyAttribute
	timed bool               // the recorder records latencies (see Untimed)
}

// Untimed reports whether the recorder has no use for latencies (see observe.Recorder): true
// but for a circuit breaker's, and a whole call's with WithCallDuration, whose
// histograms record them. The layers then read no clock for it.
func (b *base) Untimed() bool { return !b.timed }

// Event adds the span event of e, if it has one, to the span of ctx, if it records.
func (b *base) Event(ctx context.Context, e policy.Event) {
	if b.spans {
		addSpanEvent(ctx, e, b.key)
	}
}

// WantsEvent reports whether an event of kind k about the call with ctx makes a span
// event: span events are on, k has one (policy.EventKindInfo.SpanEvent), and ctx's span
// is recording (see observe.Recorder).
func (b *base) WantsEvent(ctx context.Context, k policy.EventKind) bool {
	return b.spans && k.Info().SpanEvent != "" && trace.SpanFromContext(ctx).IsRecording()
}

// WantsKeys reports whether a keyed limiter's keys are attributes: WithKeyAttribute
// (see observe.Recorder). Without it, a limiter formats no key for the recorder.
func (b *base) WantsKeys() bool { return b.key }

// eventRec is the recorder of a layer that records no outcome (a fallback): its events
// only.
type eventRec struct{ base }

// Record does nothing: the layer records no outcome.
func (*eventRec) Record(context.Context, observe.Outcome) {}

func (*eventRec) observe(metric.Observer) {}

// orBackground returns ctx, or context.Background() for a nil ctx (a call refused for
// its nil context), so that a meter never sees a nil context.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
