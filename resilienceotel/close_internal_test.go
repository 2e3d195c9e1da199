package resilienceotel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// OB-8: with WithKeyAttribute, a keyed limiter's recorder makes the counters of each new
// key; after Close nothing reads them, so it makes none: the calls of keys first seen
// then are counted with the instance's own, and the map of keys stops growing.
func TestOB8_NoNewKeysAfterClose(t *testing.T) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	m, err := New(mp, WithKeyAttribute(true))
	require.NoError(t, err)
	r, ok := m.Instrument(ratelimit.Layer, "tenants").(*limiterRec)
	require.True(t, ok)
	require.True(t, r.keyed)
	ctx := context.Background()
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Key: "a"})
	assert.Equal(t, 1, keysOf(r))

	require.NoError(t, m.Close())
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Key: "a"})
	for _, k := range []string{"b", "c", "d"} {
		r.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Key: k})
	}
	assert.Equal(t, 1, keysOf(r), "keys made after Close")
	a, _ := r.keys.Load("a")
	assert.Equal(t, int64(2), a.(*admissions).admitted.Load(), "a key made before Close counts on")
	assert.Equal(t, int64(3), r.own.rejected.Load(), "new keys are counted with the instance's own")
}

// keysOf returns how many keys r has counters for.
func keysOf(r *limiterRec) int {
	n := 0
	r.keys.Range(func(any, any) bool { n++; return true })
	return n
}
