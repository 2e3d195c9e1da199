package resilienceotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// OB-2: with the Metrics attached (default options), an admitted and a rejected call
// through a rate limiter allocate nothing, and neither does a call through a breaker,
// whose duration goes to a histogram.
func TestOB2_ObservedCallsAllocateNothing(t *testing.T) {
	h := newHarness(t)
	reg, _ := newRegistry(t, h)
	admit, err := resilience.Wrap(reg, "API.Admit", ok,
		resilience.RateLimiter(ratelimit.Permits(1<<30), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	reject, err := resilience.Wrap(reg, "API.Reject", ok,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	breaker, err := resilience.Wrap(reg, "API.Breaker", ok, resilience.CircuitBreaker())
	require.NoError(t, err)
	ctx := context.Background()
	_, _ = reject(ctx) // the only permit

	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = admit(ctx) }), "admitted")
	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = reject(ctx) }), "rejected")
	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = breaker(ctx) }), "breaker")

	c := h.collect()
	assert.Equal(t, int64(201), c.int(RateLimiterCalls, "name=API.Admit", "outcome=admitted"))
	assert.Equal(t, int64(201), c.int(RateLimiterCalls, "name=API.Reject", "outcome=rejected"))
	assert.Equal(t, int64(201), c.int(CircuitBreakerCalls, "name=API.Breaker", "outcome=succeeded"))
	_ = circuitbreaker.ErrOpen
}
