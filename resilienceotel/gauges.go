package resilienceotel

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/resilience"
)

// gaugeAttrs are the attribute sets of one instance's instruments read from snapshots:
// by instrument (as layerMetrics.gauges lists them), one per series.
type gaugeAttrs struct {
	series [][][]metric.ObserveOption
}

// gaugeAttrsOf returns the attribute sets of the instance (layer, id) of lm's kind, made
// once.
func (m *Metrics) gaugeAttrsOf(lm *layerMetrics, layer policy.Layer, id string) *gaugeAttrs {
	k := recKey{layer, id}
	if g, ok := m.gauges.Load(k); ok {
		return g.(*gaugeAttrs)
	}
	inst := attribute.String(attrName, id)
	own := observeWith(inst)
	g := &gaugeAttrs{series: make([][][]metric.ObserveOption, len(lm.gauges))}
	for i, mk := range lm.gauges {
		if len(mk.decl.Values) == 0 {
			g.series[i] = [][]metric.ObserveOption{own}
			continue
		}
		for _, v := range mk.decl.Values {
			g.series[i] = append(g.series[i], observeWith(inst, attribute.String(mk.decl.Key, v)))
		}
	}
	got, _ := m.gauges.LoadOrStore(k, g)
	return got.(*gaugeAttrs)
}

// observeSnapshot reports the instruments read from a registry's snapshot: for each
// instance, those its kind declares with a Read.
func (m *Metrics) observeSnapshot(o metric.Observer, s resilience.Snapshot) {
	for _, p := range s.Policies {
		lm := m.ins.kinds[p.Layer]
		if lm == nil || len(lm.gauges) == 0 {
			continue
		}
		g := m.gaugeAttrsOf(lm, p.Layer, p.ID)
		for i, mk := range lm.gauges {
			for series, opts := range g.series[i] {
				v, ok := mk.decl.Read(p.State, series)
				switch {
				case !ok:
				case mk.float != nil:
					o.ObserveFloat64(mk.float, v, opts...)
				case mk.ints != nil:
					o.ObserveInt64(mk.ints, int64(v), opts...)
				}
			}
		}
	}
}
