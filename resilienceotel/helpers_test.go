package resilienceotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/resilienceotel"
)

// harness is a Metrics on a MeterProvider read by a ManualReader.
type harness struct {
	t      *testing.T
	reader *sdkmetric.ManualReader
	m      *resilienceotel.Metrics
}

func newHarness(t *testing.T, opts ...resilienceotel.Option) *harness {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	m, err := resilienceotel.New(mp, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return &harness{t: t, reader: reader, m: m}
}

// collected is one collection, by instrument name.
type collected struct {
	t       *testing.T
	metrics map[string]metricdata.Metrics
}

func (h *harness) collect() collected {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(h.t, h.reader.Collect(context.Background(), &rm))
	c := collected{t: h.t, metrics: map[string]metricdata.Metrics{}}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(h.t, resilienceotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			c.metrics[m.Name] = m
		}
	}
	return c
}

// attrs builds the attribute set of a series from "key=value" pairs.
func attrs(pairs ...string) attribute.Set {
	kv := make([]attribute.KeyValue, 0, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			panic("attrs: " + p)
		}
		kv = append(kv, attribute.String(k, v))
	}
	return attribute.NewSet(kv...)
}

func describe(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// intPoints returns the points of an int64 sum or gauge, by their attributes.
func (c collected) intPoints(name string) map[string]int64 {
	c.t.Helper()
	m, ok := c.metrics[name]
	if !ok {
		return nil
	}
	out := map[string]int64{}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out[describe(p.Attributes)] = p.Value
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out[describe(p.Attributes)] = p.Value
		}
	default:
		c.t.Fatalf("%s is a %T, not an int64 sum or gauge", name, m.Data)
	}
	return out
}

// int returns the value of the int64 point of name whose attributes are exactly pairs.
func (c collected) int(name string, pairs ...string) int64 {
	c.t.Helper()
	points := c.intPoints(name)
	want := describe(attrs(pairs...))
	v, ok := points[want]
	require.Truef(c.t, ok, "%s has no point %s; it has %v", name, want, points)
	return v
}

// float returns the value of the float64 gauge point of name whose attributes are
// exactly pairs.
func (c collected) float(name string, pairs ...string) float64 {
	c.t.Helper()
	v, ok := c.floatOK(name, pairs...)
	require.Truef(c.t, ok, "%s has no point %s", name, describe(attrs(pairs...)))
	return v
}

func (c collected) floatOK(name string, pairs ...string) (float64, bool) {
	c.t.Helper()
	m, ok := c.metrics[name]
	if !ok {
		return 0, false
	}
	d, ok := m.Data.(metricdata.Gauge[float64])
	require.Truef(c.t, ok, "%s is a %T, not a float64 gauge", name, m.Data)
	want := attrs(pairs...)
	for _, p := range d.DataPoints {
		if p.Attributes.Equals(&want) {
			return p.Value, true
		}
	}
	return 0, false
}

// hist returns the count and sum of the histogram point of name whose attributes are
// exactly pairs.
func (c collected) hist(name string, pairs ...string) (uint64, float64) {
	c.t.Helper()
	m, ok := c.metrics[name]
	require.Truef(c.t, ok, "no instrument %s", name)
	d, ok := m.Data.(metricdata.Histogram[float64])
	require.Truef(c.t, ok, "%s is a %T, not a float64 histogram", name, m.Data)
	want := attrs(pairs...)
	var have []string
	for _, p := range d.DataPoints {
		if p.Attributes.Equals(&want) {
			return p.Count, p.Sum
		}
		have = append(have, describe(p.Attributes))
	}
	c.t.Fatalf("%s has no point %s; it has %v", name, describe(want), have)
	return 0, 0
}

// has reports whether name has a point whose attributes are exactly pairs.
func (c collected) has(name string, pairs ...string) bool {
	c.t.Helper()
	m, ok := c.metrics[name]
	if !ok {
		return false
	}
	want := attrs(pairs...)
	sets := pointSets(c.t, m)
	for _, s := range sets {
		if s.Equals(&want) {
			return true
		}
	}
	return false
}
