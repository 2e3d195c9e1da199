package resilienceotel

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// admissions are the counts of a layer of the shape contract.Admissions, or of one client key
// of a keyed instance: the calls admitted and rejected, and of the admitted ones those
// that waited.
type admissions struct {
	waitRec     []metric.RecordOption // name (and key)
	obsAdmitted []metric.ObserveOption
	obsRejected []metric.ObserveOption
	obsInst     []metric.ObserveOption // name (and key)
	_           linePad
	admitted    counter
	rejected    counter
	waited      counter
}

func newAdmissions(kv ...attribute.KeyValue) *admissions {
	with := func(extra ...attribute.KeyValue) []attribute.KeyValue {
		return append(append(make([]attribute.KeyValue, 0, len(kv)+len(extra)), kv...), extra...)
	}
	return &admissions{
		waitRec:     recordWith(kv...),
		obsAdmitted: observeWith(with(attribute.String(attrOutcome, "admitted"))...),
		obsRejected: observeWith(with(attribute.String(attrOutcome, "rejected"))...),
		obsInst:     observeWith(kv...),
	}
}

// limiterRec is the recorder of a layer of the shape contract.Admissions: a layer that admits
// or rejects calls.
type limiterRec struct {
	base
	calls  metric.Int64Observable
	waited metric.Int64Observable  // nil: not reported
	wait   metric.Float64Histogram // nil: waits are not recorded
	keyed  bool                    // each key has its admissions, in keys
	own    *admissions             // the instance's (every call's, unless keyed)
	keys   sync.Map                // key → *admissions, when keyed
}

// newLimiterRec returns the recorder of the shape a, whose instruments lm holds; keys
// says whether the Metrics wants client keys as attributes (WithKeyAttribute).
func newLimiterRec(b base, lm *layerMetrics, a *contract.Admissions, keys bool) *limiterRec {
	return &limiterRec{base: b, calls: lm.counterOf(a.Calls), waited: lm.counterOf(a.Waited),
		wait: lm.histogramOf(a.Wait), keyed: a.Keyed && keys, own: newAdmissions(b.inst)}
}

// Record counts an admission or a rejection, and records the wait of an admitted call
// that waited.
func (r *limiterRec) Record(ctx context.Context, o observe.Outcome) {
	a := r.own
	if r.keyed && o.Key != "" {
		a = r.keyOf(o.Key)
	}
	switch o.Result {
	case observe.ResultAdmitted:
		a.admitted.Add(1)
		if o.Wait > 0 {
			a.waited.Add(1)
			if r.wait != nil {
				r.wait.Record(orBackground(ctx), seconds(int64(o.Wait)), a.waitRec...)
			}
		}
	case observe.ResultRejected:
		a.rejected.Add(1)
	}
}

// keyOf returns the admissions of key, made on first use; once the Metrics is closed,
// those of a key not seen before are the instance's own: nothing would read new ones.
func (r *limiterRec) keyOf(key string) *admissions {
	if a, ok := r.keys.Load(key); ok {
		return a.(*admissions)
	}
	if r.m.closed.Load() {
		return r.own
	}
	a, _ := r.keys.LoadOrStore(key, newAdmissions(r.inst, attribute.String(attrKey, key)))
	return a.(*admissions)
}

func (r *limiterRec) observe(o metric.Observer) {
	r.observeAdmissions(o, r.own)
	if r.keyed {
		r.keys.Range(func(_, a any) bool {
			r.observeAdmissions(o, a.(*admissions))
			return true
		})
	}
}

func (r *limiterRec) observeAdmissions(o metric.Observer, a *admissions) {
	o.ObserveInt64(r.calls, a.admitted.Load(), a.obsAdmitted...)
	o.ObserveInt64(r.calls, a.rejected.Load(), a.obsRejected...)
	if r.waited != nil {
		o.ObserveInt64(r.waited, a.waited.Load(), a.obsInst...)
	}
}
