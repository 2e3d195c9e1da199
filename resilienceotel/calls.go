package resilienceotel

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// maxLayers bounds the layers whose rejections a whole call's recorder counts without a
// map: the first maxLayers layers with a kind when the Metrics was made. A rejection by
// any other layer is counted in its map.
const maxLayers = 16

// rejections counts one layer's rejections of whole calls, for a layer without a counter
// of its own.
type rejections struct {
	obs []metric.ObserveOption
	n   counter
}

// callRec is the recorder of a whole call (observe.LayerCall).
type callRec struct {
	base
	ins          *instruments
	layers       []policy.Layer // the layers counted without a map, at most maxLayers
	obsSucceeded []metric.ObserveOption
	obsFailed    []metric.ObserveOption
	obsRejected  [maxLayers][]metric.ObserveOption
	durRec       [nResults][]metric.RecordOption // by outcome; nil without WithCallDuration
	others       sync.Map                        // a layer counted in a map → *rejections
	_            linePad
	succeeded    counter
	failed       counter
	rejected     [maxLayers]counter
}

func newCallRec(b base) *callRec {
	r := &callRec{base: b, ins: &b.m.ins,
		layers:       b.m.ins.layers[:min(len(b.m.ins.layers), maxLayers)],
		obsSucceeded: observeWith(b.inst, attribute.String(attrOutcome, "succeeded")),
		obsFailed:    observeWith(b.inst, attribute.String(attrOutcome, "failed")),
	}
	for i, l := range r.layers {
		r.obsRejected[i] = observeWith(b.inst, attribute.String(attrOutcome, "rejected"), attribute.String(attrLayer, string(l)))
	}
	if r.ins.callDuration != nil {
		for _, res := range []observe.Result{observe.ResultSucceeded, observe.ResultFailed, observe.ResultRejected} {
			r.durRec[res] = recordWith(b.inst, attribute.String(attrOutcome, recording.ResultName(res)))
		}
	}
	return r
}

// Record counts the call by outcome (a rejection by the layer that refused it), and
// records its duration with WithCallDuration.
func (r *callRec) Record(ctx context.Context, o observe.Outcome) {
	switch o.Result {
	case observe.ResultSucceeded:
		r.succeeded.Add(1)
	case observe.ResultFailed:
		r.failed.Add(1)
	case observe.ResultRejected:
		if i, ok := r.layerIndex(o.RejectedBy); ok {
			r.rejected[i&(maxLayers-1)].Add(1)
		} else {
			r.otherLayer(o.RejectedBy).n.Add(1)
		}
	default:
		return
	}
	if r.ins.callDuration != nil {
		r.ins.callDuration.Record(orBackground(ctx), seconds(int64(o.Latency)), r.durRec[o.Result&resultMask]...)
	}
}

// layerIndex returns the index of l in r.layers; false for another layer.
func (r *callRec) layerIndex(l policy.Layer) (int, bool) {
	for i, have := range r.layers {
		if have == l {
			return i, true
		}
	}
	return 0, false
}

// otherLayer returns the rejections of layer l, not in r.layers, made on first use; a
// rejection that names no layer has no attribute layer.
func (r *callRec) otherLayer(l policy.Layer) *rejections {
	if c, ok := r.others.Load(l); ok {
		return c.(*rejections)
	}
	kv := []attribute.KeyValue{r.inst, attribute.String(attrOutcome, "rejected")}
	if l != "" {
		kv = append(kv, attribute.String(attrLayer, string(l)))
	}
	c, _ := r.others.LoadOrStore(l, &rejections{obs: observeWith(kv...)})
	return c.(*rejections)
}

// observe reports succeeded and failed calls always, and rejections by each layer that
// refused at least one call.
func (r *callRec) observe(o metric.Observer) {
	o.ObserveInt64(r.ins.calls, r.succeeded.Load(), r.obsSucceeded...)
	o.ObserveInt64(r.ins.calls, r.failed.Load(), r.obsFailed...)
	for i := range r.rejected {
		if n := r.rejected[i].Load(); n > 0 {
			o.ObserveInt64(r.ins.calls, n, r.obsRejected[i]...)
		}
	}
	r.others.Range(func(_, c any) bool {
		rej := c.(*rejections)
		o.ObserveInt64(r.ins.calls, rej.n.Load(), rej.obs...)
		return true
	})
}
