package resilienceotel

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// gaugeAttrs are the attribute sets of one instance's instruments read from snapshots:
// instance, and for a breaker instance and each state.
type gaugeAttrs struct {
	inst   []metric.ObserveOption
	states [len(breakerStates)][]metric.ObserveOption
}

// gaugeAttrsOf returns the attribute sets of the instance (layer, id), made once.
func (m *Metrics) gaugeAttrsOf(layer policy.Layer, id string) *gaugeAttrs {
	k := recKey{layer, id}
	if g, ok := m.gauges.Load(k); ok {
		return g.(*gaugeAttrs)
	}
	inst := attribute.String(attrInstance, id)
	g := &gaugeAttrs{inst: observeWith(inst)}
	if layer == circuitbreaker.Layer {
		for s, name := range breakerStates {
			g.states[s] = observeWith(inst, attribute.String(attrState, name))
		}
	}
	got, _ := m.gauges.LoadOrStore(k, g)
	return got.(*gaugeAttrs)
}

// observeSnapshot reports the instruments read from a registry's snapshot.
func (m *Metrics) observeSnapshot(o metric.Observer, s resilience.Snapshot) {
	in := &m.ins
	for _, rl := range s.RateLimiters {
		g := m.gaugeAttrsOf(ratelimit.Layer, rl.Instance)
		o.ObserveInt64(in.rlAvailable, int64(rl.AvailablePermits), g.inst...)
		o.ObserveInt64(in.rlWaiting, int64(rl.Waiting), g.inst...)
	}
	for _, cb := range s.CircuitBreakers {
		g := m.gaugeAttrsOf(circuitbreaker.Layer, cb.Instance)
		for st := range g.states {
			var v int64
			if int(cb.State) == st {
				v = 1
			}
			o.ObserveInt64(in.cbState, v, g.states[st]...)
		}
		if cb.FailureRate >= 0 {
			o.ObserveFloat64(in.cbFailureRate, cb.FailureRate, g.inst...)
		}
		if cb.SlowCallRate >= 0 {
			o.ObserveFloat64(in.cbSlowRate, cb.SlowCallRate, g.inst...)
		}
	}
	for _, bh := range s.Bulkheads {
		g := m.gaugeAttrsOf(bulkhead.Layer, bh.Instance)
		o.ObserveInt64(in.bhAvailable, int64(bh.AvailableSlots), g.inst...)
		o.ObserveInt64(in.bhMax, int64(bh.MaxConcurrent), g.inst...)
		o.ObserveInt64(in.bhQueued, int64(bh.Waiting), g.inst...)
	}
	for _, h := range s.Hedges {
		if h.BudgetAvailable < 0 {
			continue // the budget is off
		}
		g := m.gaugeAttrsOf(hedge.Layer, h.Instance)
		o.ObserveInt64(in.hgBudget, int64(h.BudgetAvailable), g.inst...)
	}
	for _, al := range s.AdaptiveLimits {
		g := m.gaugeAttrsOf(adaptivelimit.Layer, al.Instance)
		o.ObserveInt64(in.alLimit, int64(al.Limit), g.inst...)
		o.ObserveInt64(in.alInFlight, int64(al.InFlight), g.inst...)
		o.ObserveInt64(in.alQueued, int64(al.Queued), g.inst...)
	}
}
