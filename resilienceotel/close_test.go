package resilienceotel_test

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// newClosable returns a Metrics on a MeterProvider of its own, which the test closes.
func newClosable(t *testing.T, opts ...resilienceotel.Option) *resilienceotel.Metrics {
	t.Helper()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	m, err := resilienceotel.New(mp, opts...)
	require.NoError(t, err)
	return m
}

// observedRegistry returns a weak pointer to a registry with an instance, which m has
// been told to Observe, and which nothing else holds.
func observedRegistry(t *testing.T, m *resilienceotel.Metrics) weak.Pointer[resilience.Registry] {
	t.Helper()
	reg, err := resilience.NewRegistry(resilience.WithObserver(m))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "API.Get", ok,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	require.NoError(t, m.Observe(reg))
	return weak.Make(reg)
}

// garbageCollected reports whether the registry p points to has been collected, after a
// few garbage collections.
func garbageCollected(p weak.Pointer[resilience.Registry]) bool {
	for range 3 {
		runtime.GC()
		if p.Value() == nil {
			return true
		}
	}
	return false
}

// OB-8: after Close, Observe does nothing: a closed Metrics holds no registry it is
// given, which is collected as soon as nothing else holds it.
func TestOB8_ObserveAfterCloseHoldsNoRegistry(t *testing.T) {
	m := newClosable(t)
	require.NoError(t, m.Close())
	p := observedRegistry(t, m)
	assert.True(t, garbageCollected(p), "a registry given to a closed Metrics stays reachable")
	runtime.KeepAlive(m)
}

// OB-8: Close lets go of the registries observed before it, and of the instances'
// recorders: nothing reads them any more.
func TestOB8_CloseReleasesObservedRegistries(t *testing.T) {
	m := newClosable(t)
	p := observedRegistry(t, m)
	require.NotNil(t, p.Value())
	require.NoError(t, m.Close())
	assert.True(t, garbageCollected(p), "a registry observed before Close stays reachable after it")
	runtime.KeepAlive(m)
}
