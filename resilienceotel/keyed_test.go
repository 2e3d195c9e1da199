package resilienceotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// keyedBurst runs 3 calls for key a and 1 for key b through a keyed limiter of 2 permits
// per second observed by h's Metrics.
func keyedBurst(t *testing.T, h *harness) {
	t.Helper()
	k, err := keyed.New[string](ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.WithClock(clock.NewManual()), ratelimit.Name("tenants"), keyed.Observe(h.m))
	require.NoError(t, err)
	assert.True(t, k.TryAcquire("a", 1) == nil)
	assert.True(t, k.TryAcquire("a", 1) == nil)
	assert.False(t, k.TryAcquire("a", 1) == nil)
	assert.True(t, k.TryAcquire("b", 1) == nil)
}

// OB-2: by default a keyed limiter's key is no attribute: one series per outcome for the
// instance, whatever the keys.
func TestOB2_KeyedLimiterKeyAttributeOff(t *testing.T) {
	h := newHarness(t)
	keyedBurst(t, h)
	assert.Equal(t, map[string]int64{
		"{name=tenants,outcome=admitted}": 3,
		"{name=tenants,outcome=rejected}": 1,
	}, h.collect().intPoints(RateLimiterCalls))
}

// OB-2: with WithKeyAttribute(true), one series per key and outcome.
func TestOB2_KeyedLimiterKeyAttributeOn(t *testing.T) {
	h := newHarness(t, resilienceotel.WithKeyAttribute(true))
	keyedBurst(t, h)
	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=tenants,outcome=admitted}":       0,
		"{name=tenants,outcome=rejected}":       0,
		"{key=a,name=tenants,outcome=admitted}": 2,
		"{key=a,name=tenants,outcome=rejected}": 1,
		"{key=b,name=tenants,outcome=admitted}": 1,
		"{key=b,name=tenants,outcome=rejected}": 0,
	}, c.intPoints(RateLimiterCalls))
	assert.Equal(t, int64(0), c.int(RateLimiterWaitedCalls, "name=tenants", "key=a"))
}

// OB-1: without WithKeyAttribute the recorder wants no keys, so a keyed limiter whose keys
// are not strings formats none: admitted and rejected decisions allocate nothing.
func TestOB1_KeyedNonStringKeysAllocateNothingWithoutKeyAttribute(t *testing.T) {
	h := newHarness(t)
	k, err := keyed.New[int](ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.WithClock(clock.NewManual()), ratelimit.Name("users"), keyed.Observe(h.m))
	require.NoError(t, err)
	const user = 123457 // above the small numbers that formatting keeps ready
	require.True(t, k.TryAcquire(user, 1) == nil)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = k.TryAcquire(user, 1) == nil }), "rejected")
	assert.Equal(t, map[string]int64{
		"{name=users,outcome=admitted}": 1,
		"{name=users,outcome=rejected}": 101,
	}, h.collect().intPoints(RateLimiterCalls))
}

// A nil *Metrics observes nothing and does not panic: Instrument returns nil, Close
// returns nil, and Observe fails with R4C-REG-010.
func TestNilMetrics(t *testing.T) {
	var m *resilienceotel.Metrics
	assert.Nil(t, m.Instrument(ratelimit.Layer, "x"))
	assert.NoError(t, m.Close())
	reg, err := resilience.NewRegistry(resilience.WithObserver(m))
	require.NoError(t, err)
	assert.ErrorIs(t, m.Observe(reg), &policy.ConfigError{Code: r4c.BadSpec})
	call, err := resilience.Wrap(reg, "x", func(context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, err = call(t.Context())
	assert.NoError(t, err)
}
