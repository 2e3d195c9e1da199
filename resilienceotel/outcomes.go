package resilienceotel

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// maxClasses bounds the classes of a contract.Outcomes (contract.MaxClasses, a power of two):
// arrays indexed by a class (masked with classMask) need no bounds check.
const (
	maxClasses = contract.MaxClasses
	classMask  = maxClasses - 1
)

// outcomesRec is the recorder of a layer of the shape contract.Outcomes: calls by class,
// their attempts, the slow ones and their latencies; and, with contract.Transitions, the
// moves between states its events report.
type outcomesRec struct {
	base
	calls    metric.Int64Observable
	attempts metric.Int64Observable  // nil: not counted
	slow     metric.Int64Observable  // nil: not counted
	duration metric.Float64Histogram // nil: latencies are not recorded
	// class is the class of an outcome, by whether it made more than one attempt and by
	// result; -1: none, the outcome is not counted.
	class       [2][nResults]int8
	obsCalls    [maxClasses][]metric.ObserveOption // by class
	obsSlow     [maxClasses][]metric.ObserveOption // by class; nil: no slow series
	durRec      [maxClasses][]metric.RecordOption  // by class; nil: not timed
	obsAttempts []metric.ObserveOption
	moves       *transitions // nil: none counted
	_           linePad
	counts      [maxClasses]counter
	slowCounts  [maxClasses]counter
	nAttempts   counter
}

// newOutcomesRec returns the recorder of the shape o and, when t is not nil, of the
// transitions t; lm holds their instruments. o has at most maxClasses classes
// (contract.Metrics.Check, which New runs, checks it).
func newOutcomesRec(b base, lm *layerMetrics, o *contract.Outcomes, t *contract.Transitions) *outcomesRec {
	r := &outcomesRec{base: b, calls: lm.counterOf(o.Calls), attempts: lm.counterOf(o.Attempts),
		slow: lm.counterOf(o.Slow), duration: lm.histogramOf(o.Duration), obsAttempts: observeWith(b.inst)}
	for i := range r.class {
		for res := range r.class[i] {
			r.class[i][res] = -1
		}
	}
	for c, cl := range o.Classes[:min(len(o.Classes), maxClasses)] {
		res := cl.Result & resultMask
		if cl.Retried != contract.Retries {
			r.class[0][res] = int8(c)
		}
		if cl.Retried != contract.FirstAttempt {
			r.class[1][res] = int8(c)
		}
		out := attribute.String(o.Attr, cl.Value)
		r.obsCalls[c] = observeWith(b.inst, out)
		if cl.Slow && r.slow != nil {
			r.obsSlow[c] = observeWith(b.inst, out)
		}
		if cl.Timed && r.duration != nil {
			r.durRec[c] = recordWith(b.inst, out)
		}
	}
	if t != nil {
		r.moves = &transitions{counter: lm.counterOf(t.Counter), kind: t.Kind, states: t.States, of: t.Of,
			n: make([]atomic.Int64, len(t.States)*len(t.States))}
	}
	return r
}

// Record counts the call by class, its attempts and, if slow, its slow call; it records
// the latency of a timed class.
func (r *outcomesRec) Record(ctx context.Context, o observe.Outcome) {
	var retried int
	if o.Attempts > 1 {
		retried = 1
	}
	c := r.class[retried][o.Result&resultMask]
	if c < 0 {
		return
	}
	i := c & classMask
	r.counts[i].Add(1)
	if r.attempts != nil {
		r.nAttempts.Add(int64(o.Attempts))
	}
	if o.Slow && r.obsSlow[i] != nil {
		r.slowCounts[i].Add(1)
	}
	if r.durRec[i] != nil {
		r.duration.Record(orBackground(ctx), seconds(int64(o.Latency)), r.durRec[i]...)
	}
}

// WantsEvent reports whether the recorder wants an event of kind k: every transition,
// which it counts, and the events that make span events.
func (r *outcomesRec) WantsEvent(ctx context.Context, k policy.EventKind) bool {
	return (r.moves != nil && k == r.moves.kind) || r.base.WantsEvent(ctx, k)
}

// Event counts transitions, and adds span events.
func (r *outcomesRec) Event(ctx context.Context, e policy.Event) {
	if r.moves != nil && e.Kind == r.moves.kind {
		r.moves.count(e)
	}
	r.base.Event(ctx, e)
}

func (r *outcomesRec) observe(o metric.Observer) {
	for i := range r.counts {
		if r.obsCalls[i] != nil {
			o.ObserveInt64(r.calls, r.counts[i].Load(), r.obsCalls[i]...)
		}
		if r.obsSlow[i] != nil {
			o.ObserveInt64(r.slow, r.slowCounts[i].Load(), r.obsSlow[i]...)
		}
	}
	if r.attempts != nil {
		o.ObserveInt64(r.attempts, r.nAttempts.Load(), r.obsAttempts...)
	}
	if r.moves != nil {
		r.moves.observe(o, r.inst)
	}
}

// transitions counts the moves between states of one instance, by the states left and
// entered; rare, so unpadded.
type transitions struct {
	counter metric.Int64Observable
	kind    policy.EventKind
	states  []string
	of      func(policy.Event) (from, to int, ok bool)
	n       []atomic.Int64 // by from × len(states) + to
}

// count counts the transition e reports, if it names two of the states.
func (t *transitions) count(e policy.Event) {
	from, to, ok := t.of(e)
	if ok && from >= 0 && to >= 0 && from < len(t.states) && to < len(t.states) {
		t.n[from*len(t.states)+to].Add(1)
	}
}

// observe reports each pair of states that was moved between at least once.
func (t *transitions) observe(o metric.Observer, inst attribute.KeyValue) {
	for i := range t.n {
		if n := t.n[i].Load(); n > 0 {
			from, to := t.states[i/len(t.states)], t.states[i%len(t.states)]
			o.ObserveInt64(t.counter, n, metric.WithAttributes(inst,
				attribute.String(attrFrom, from), attribute.String(attrTo, to)))
		}
	}
}
