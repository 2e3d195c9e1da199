package resilienceotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// targetLabels are the labels Prometheus gives every series of a target under a default
// scrape configuration: a series' own label of one of these names is renamed
// exported_<name> (without honor_labels), and the name is the target's.
var targetLabels = []attribute.Key{"instance", "job"}

// pointSets returns the attribute sets of m's points.
func pointSets(t *testing.T, m metricdata.Metrics) []attribute.Set {
	t.Helper()
	var sets []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	default:
		t.Fatalf("%s: unexpected aggregation %T", m.Name, d)
	}
	return sets
}

// OB-2: every series carries the policy instance's id as the attribute name, which no
// default Prometheus scrape renames, and no attribute named as one of Prometheus' target
// labels (instance, job), which a default scrape would rename exported_instance and
// replace with the target's host and port.
func TestOB2_PolicyInstanceIsTheAttributeName(t *testing.T) {
	h := newHarness(t, resilienceotel.WithCallDuration(true))
	runEveryPolicy(t, h)
	instances := []string{"API.Get", "API.Hedged"}
	c := h.collect()
	require.NotEmpty(t, c.metrics)
	for name, m := range c.metrics {
		sets := pointSets(t, m)
		require.NotEmpty(t, sets, name)
		for _, s := range sets {
			v, ok := s.Value("name")
			if assert.True(t, ok, "%s%s has no attribute name", name, describe(s)) {
				assert.Contains(t, instances, v.AsString(), "%s%s", name, describe(s))
			}
			for _, k := range targetLabels {
				assert.False(t, s.HasValue(k), "%s%s has Prometheus' target label %s", name, describe(s), k)
			}
		}
	}
}

// OB-3: every span event carries the policy instance's id as the attribute name, as the
// series do, and none named instance.
func TestOB3_SpanEventsNameTheInstance(t *testing.T) {
	h := newHarness(t, resilienceotel.WithKeyAttribute(true))
	tr := newTracer(t)
	r := h.m.Instrument(ratelimit.Layer, "rl")
	var kinds int
	got := tr.events(t, func(ctx context.Context) {
		for k := policy.EventKind(1); k.Info().Name != ""; k++ { // every kind registered
			if k.Info().SpanEvent != "" {
				kinds++
				r.Event(ctx, policy.Event{Kind: k, Instance: "API.Get", Key: "tenant", Attempt: 1})
			}
		}
	})
	require.Len(t, got, kinds)
	for _, e := range got {
		assert.Contains(t, e, "name=API.Get", e)
		assert.NotContains(t, e, "instance=", e)
	}
}
