package resilienceotel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// keyedBurst runs 3 calls for key a and 1 for key b through a keyed limiter of 2 permits
// per second observed by h's Metrics.
func keyedBurst(t *testing.T, h *harness) {
	t.Helper()
	k, err := ratelimit.NewKeyed[string](ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.WithClock(clock.NewManual()), ratelimit.WithInstanceID("tenants"), ratelimit.Observe(h.m))
	require.NoError(t, err)
	assert.True(t, k.TryAcquire("a"))
	assert.True(t, k.TryAcquire("a"))
	assert.False(t, k.TryAcquire("a"))
	assert.True(t, k.TryAcquire("b"))
}

// OB-2: by default a keyed limiter's key is no attribute: one series per outcome for the
// instance, whatever the keys.
func TestOB2_KeyedLimiterKeyAttributeOff(t *testing.T) {
	h := newHarness(t)
	keyedBurst(t, h)
	assert.Equal(t, map[string]int64{
		"{instance=tenants,outcome=admitted}": 3,
		"{instance=tenants,outcome=rejected}": 1,
	}, h.collect().intPoints(resilienceotel.RateLimiterCalls))
}

// OB-2: with WithKeyAttribute(true), one series per key and outcome.
func TestOB2_KeyedLimiterKeyAttributeOn(t *testing.T) {
	h := newHarness(t, resilienceotel.WithKeyAttribute(true))
	keyedBurst(t, h)
	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{instance=tenants,outcome=admitted}":       0,
		"{instance=tenants,outcome=rejected}":       0,
		"{instance=tenants,key=a,outcome=admitted}": 2,
		"{instance=tenants,key=a,outcome=rejected}": 1,
		"{instance=tenants,key=b,outcome=admitted}": 1,
		"{instance=tenants,key=b,outcome=rejected}": 0,
	}, c.intPoints(resilienceotel.RateLimiterCalls))
	assert.Equal(t, int64(0), c.int(resilienceotel.RateLimiterWaitedCalls, "instance=tenants", "key=a"))
}
