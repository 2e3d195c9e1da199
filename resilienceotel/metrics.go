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
// metrics and span events. It is an observe.Observer: give it to a registry
// (resilience.WithObserver), or to a keyed.Limiter built on its own (keyed.Observe),
// then call Observe with the registry for the instruments read from its snapshots. New
// lists the instruments, WithSpanEvents the span events.
//
// Counting happens in process: each instance's recorder holds atomic counters, one per
// outcome, each on a cache line of its own, and the OpenTelemetry counters are observable
// ones, reported from those atomics by one callback at each collection, with attribute
// sets made when the recorder is. Recording an admitted or a rejected call is an atomic
// add: no map lookup (but with WithKeyAttribute) and no allocation. Histograms are
// synchronous and are recorded only where a call already took time, on the call's path:
// the waits of calls that waited, the durations of the calls a circuit breaker let
// through, and the whole call's duration with WithCallDuration (off by default). The
// instruments of the instances' state are read from Registry.Snapshot at collection
// time. A Metrics is safe for concurrent use.
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
//	resilience.rate_limiter.shadow_rejections  counter       {call}        name
//	resilience.circuit_breaker.state           up-down       1             name, state: closed|open|half_open|disabled|forced_open
//	resilience.circuit_breaker.failure_rate    gauge         %             name
//	resilience.circuit_breaker.slow_call_rate  gauge         %             name
//	resilience.circuit_breaker.calls           counter       {call}        name, outcome: succeeded|failed|ignored|not_permitted
//	resilience.circuit_breaker.slow_calls      counter       {call}        name, outcome: succeeded|failed
//	resilience.circuit_breaker.call.duration   histogram     s             name, outcome: succeeded|failed|ignored
//	resilience.circuit_breaker.transitions     counter       {transition}  name, from, to (states as above)
//	resilience.circuit_breaker.shadow_rejections counter     {call}        name
//	resilience.bulkhead.available_slots        up-down       {slot}        name
//	resilience.bulkhead.max_slots              up-down       {slot}        name
//	resilience.bulkhead.queued_calls           up-down       {call}        name
//	resilience.bulkhead.calls                  counter       {call}        name, outcome: admitted|rejected
//	resilience.bulkhead.wait.duration          histogram     s             name
//	resilience.bulkhead.shed_calls             counter       {call}        name, priority: sheddable|sheddable_plus|critical|critical_plus
//	resilience.bulkhead.shadow_rejections      counter       {call}        name
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
//	resilience.adaptive_limit.shed_calls       counter       {call}        name, priority: sheddable|sheddable_plus|critical|critical_plus
//	resilience.adaptive_limit.shadow_rejections counter      {call}        name
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
//   - bulkhead.shed_calls and adaptive_limit.shed_calls count the calls shed for their
//     priority (a subset of the rejected ones): refused while room remained under the
//     limit, kept for higher priorities; one series per priority.
//   - <layer>.shadow_rejections counts the calls an instance in shadow mode let through
//     that it would have rejected (they are counted as admitted in <layer>.calls).
//   - circuit_breaker.calls counts each call by its outcome, not_permitted for a call the
//     breaker refused; slow_calls the calls slower than the slow-call threshold;
//     call.duration the latency of every call let through (an ignored error included).
//     transitions counts every move, those made by hand (circuitbreaker.Breaker's
//     TransitionTo and Reset) and by a Reload included; a pair of states appears once
//     it has moved.
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
