package resilienceotel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/resilience"
)

// ScopeName is the instrumentation scope of the meter that New takes from its
// MeterProvider: this package's import path.
const ScopeName = "github.com/resilience4go/resilience4go/resilienceotel"

// Metrics exports the outcomes and events of resilience4go's policies as OpenTelemetry
// metrics and span events. It is a observe.Observer: give it to a registry
// (resilience.WithObserver) or to a policy built on its own (its Observe option), then
// call Observe with the registry for the instruments read from its snapshots. The package
// documentation lists the instruments.
//
// Calls are counted in process, in atomic counters of each instance's recorder, which
// the meter's collection reads; only waits, a circuit breaker's call durations and, with
// WithCallDuration, whole calls' durations are recorded on the call's path, in
// histograms. A Metrics is safe for concurrent use.
type Metrics struct {
	opts options
	ins  instruments
	reg  metric.Registration

	mu    sync.Mutex
	byKey map[recKey]recorder // every recorder made, by layer and id; guarded by mu; nil once closed

	// closed is set by Close, under mu: from then on nothing adds to what m holds. The
	// recorders read it without a lock.
	closed atomic.Bool

	// recs and regs are what the collection reads, without a lock: every recorder made,
	// and every registry observed, replaced whole (under mu) when one is added.
	recs atomic.Pointer[[]recorder]
	regs atomic.Pointer[[]*resilience.Registry]

	// gauges holds the attribute sets of the instruments read from the snapshots, by
	// layer and id: a recKey → *gaugeAttrs, made at the first collection that sees the
	// instance.
	gauges sync.Map
}

// recKey names an instance: its layer and id.
type recKey struct {
	layer policy.Layer
	id    string
}

// recorder is the observe.Recorder of one instance, which the collection reads.
type recorder interface {
	observe.Recorder
	observe(o metric.Observer)
}

var _ observe.Observer = (*Metrics)(nil)

// New makes the instruments, on the meter of mp named ScopeName, and registers the
// callback that reports the counters and the snapshots' instruments at each collection. A
// nil mp means the global MeterProvider (otel.GetMeterProvider). It fails with the
// errors the meter returns for the instruments or the callback, joined. Options:
// WithKeyAttribute, WithCallDuration, WithSpanEvents.
func New(mp metric.MeterProvider, opts ...Option) (*Metrics, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := &Metrics{opts: defaultOptions(), byKey: map[recKey]recorder{}}
	for _, o := range opts {
		if o != nil {
			o(&m.opts)
		}
	}
	meter := mp.Meter(ScopeName)
	observables, err := m.ins.make(meter, m.opts)
	if err != nil {
		return nil, err
	}
	m.reg, err = meter.RegisterCallback(m.collect, observables...)
	if err != nil {
		return nil, err
	}
	m.recs.Store(&[]recorder{})
	m.regs.Store(&[]*resilience.Registry{})
	return m, nil
}

// Instrument returns the recorder of the instance (layer, id): the same one each time it
// is asked for the same instance. It makes one for the layers whose policy kinds were
// registered when m was made (every policy of this module's) and for observe.LayerCall;
// for any other layer, and after Close, it returns nil, and the instance is not observed; a nil m returns nil too. A registry built with WithObserver(m) calls
// it; code seldom does. It is safe for concurrent use.
func (m *Metrics) Instrument(layer policy.Layer, id string) observe.Recorder {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil
	}
	k := recKey{layer, id}
	if r, ok := m.byKey[k]; ok {
		return r
	}
	r := m.newRecorder(layer, id)
	if r == nil {
		return nil
	}
	m.byKey[k] = r
	recs := append(append(make([]recorder, 0, len(*m.recs.Load())+1), *m.recs.Load()...), r)
	m.recs.Store(&recs)
	return r
}

// newRecorder returns the recorder of a new instance of layer with this id, as the
// layer's kind declares its metrics; nil for a layer that had no kind when m was made.
func (m *Metrics) newRecorder(layer policy.Layer, id string) recorder {
	b := base{m: m, id: id, inst: attribute.String(attrName, id), spans: m.opts.spans, key: m.opts.key}
	if layer == observe.LayerCall {
		b.timed = m.ins.callDuration != nil
		return newCallRec(b)
	}
	lm := m.ins.kinds[layer]
	switch {
	case lm == nil:
		return nil
	case lm.spec == nil:
		return &eventRec{base: b}
	case lm.spec.Admissions != nil:
		return newLimiterRec(b, lm, lm.spec.Admissions, m.opts.key)
	case lm.spec.Outcomes != nil:
		b.timed = lm.spec.Outcomes.Duration != ""
		return newOutcomesRec(b, lm, lm.spec.Outcomes, lm.spec.Transitions)
	}
	return &eventRec{base: b}
}

// Observe reads the snapshots of reg's instances (reg.Snapshot) at each collection, for
// the instruments of their state that their kinds declare: available permits, breaker
// states and rates, free and queued bulkhead slots, hedge budgets, adaptive limits. The counters need no Observe:
// they come from the recorders. Observing a registry twice changes nothing; several
// registries may be observed, but instances of two of them with the same id and layer
// share their series, and their states are then added up (a breaker's state series
// reads 2): give each registry its own ids, or its own Metrics. A nil reg, or a nil m,
// fails with R4C-REG-010. After Close, Observe does nothing and returns nil: m does not
// keep reg.
func (m *Metrics) Observe(reg *resilience.Registry) error {
	switch {
	case m == nil:
		return r4c.Errorf(r4c.BadSpec, "", "", "Observe needs Metrics made with New, not nil")
	case reg == nil:
		return r4c.Errorf(r4c.BadSpec, "", "", "Observe needs a registry, not nil")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil
	}
	old := *m.regs.Load()
	for _, r := range old {
		if r == reg {
			return nil
		}
	}
	regs := append(append(make([]*resilience.Registry, 0, len(old)+1), old...), reg)
	m.regs.Store(&regs)
	return nil
}

// Close unregisters the callback: no collection reports the instruments of m from then
// on, and Instrument returns nil, so that instances built later are not observed. m then
// lets go of the registries it observed and of the recorders it made: it holds none of
// them from then on, and Observe keeps none. The recorders already made go on counting,
// unread, but make no counters for keys they had not seen (WithKeyAttribute): the calls
// of such a key are counted with its instance's. It returns the error of the meter's
// Unregister, once; later calls, and a nil m's, return nil.
func (m *Metrics) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed.Load() {
		m.mu.Unlock()
		return nil
	}
	m.closed.Store(true)
	m.mu.Unlock()
	// Not under m.mu: Unregister waits for a collection in progress, whose callback may
	// wait for a registry that is building an instance and asks Instrument.
	err := m.reg.Unregister()
	// No collection runs from here on (or, if Unregister failed, it finds nothing).
	m.mu.Lock()
	m.byKey = nil
	m.recs.Store(&[]recorder{})
	m.regs.Store(&[]*resilience.Registry{})
	m.gauges.Clear()
	m.mu.Unlock()
	return err
}

// collect is the callback: every recorder's counters, then every observed registry's
// snapshot.
func (m *Metrics) collect(_ context.Context, o metric.Observer) error {
	for _, r := range *m.recs.Load() {
		r.observe(o)
	}
	for _, reg := range *m.regs.Load() {
		m.observeSnapshot(o, reg.Snapshot())
	}
	return nil
}

// errs joins errors as a builder meets them.
type errs struct{ err error }

func (e *errs) add(err error) { e.err = errors.Join(e.err, err) }
