package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC GN-3, GN-4, RG-2, RL-3: the example's output, the same on every run on its manual
// clock. Price and Stock spend the shared burst of 5; Stock, with the interface's limiter
// only, fails at once; Price's attempts are retried 100ms apart until the permit due at
// 200ms; while the service is down the fallback answers after the 3rd attempt; ErrNotFound
// aborts the retry and passes the fallback by.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, want, out.String())
}

const want = `Price and Stock share the limiter "pricing": 5 permits available
-- a burst of 5 calls passes
    0s  Price("apple") = 1.20 EUR
    0s  Stock("apple") = 40
    0s  Price("pear") = 0.95 EUR
    0s  Stock("pear") = 12
    0s  Price("plum") = 0.60 EUR
-- the quota is spent: Stock fails at once, Price retries until a permit comes back
          event RateLimiterRejected pricing at=0s retry-after=200ms err=ratelimit: rate limit exceeded for "pricing"
    0s  Stock("plum") failed: ratelimit: rate limit exceeded for "pricing"
          event RateLimiterRejected pricing at=0s retry-after=200ms err=ratelimit: rate limit exceeded for "pricing"
          event RetryAttempt PriceClient.Price at=0s attempt=1 wait=100ms err=ratelimit: rate limit exceeded for "pricing"
          event RateLimiterRejected pricing at=100ms retry-after=100ms err=ratelimit: rate limit exceeded for "pricing"
          event RetryAttempt PriceClient.Price at=100ms attempt=2 wait=100ms err=ratelimit: rate limit exceeded for "pricing"
 200ms  Price("plum") = 0.60 EUR, after 200ms
-- 1s later, the service is down: every attempt fails, and the fallback answers
          event RetryAttempt PriceClient.Price at=1.2s attempt=1 wait=100ms err=503 Service Unavailable
          event RetryAttempt PriceClient.Price at=1.3s attempt=2 wait=100ms err=503 Service Unavailable
          event RetryExhausted PriceClient.Price at=1.4s attempt=3 err=503 Service Unavailable
          event FallbackApplied PriceClient.Price at=1.4s err=503 Service Unavailable
  1.4s  Price("apple") = unknown, after 200ms
-- a product that does not exist: not retried, not replaced
          event RetryAborted PriceClient.Price at=1.4s attempt=1 err=no such product: "durian"
  1.4s  Price("durian") failed: no such product: "durian"
`

// SPEC GN-3, RG-2: the interface's directive with name=pricing makes one limiter for
// both methods: the registry holds one rate limiter, "pricing", and Stock's rejection is
// its; the rejected call never reaches the service.
func TestInterfaceDirectiveSharesOneLimiter(t *testing.T) {
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	svc := newPricingService()
	client, err := NewPriceClientResilient(svc, reg)
	require.NoError(t, err)

	for range 5 {
		_, err := client.Stock(context.Background(), "apple")
		require.NoError(t, err)
	}
	snap := reg.Snapshot().RateLimiters
	require.Len(t, snap, 1)
	assert.Equal(t, ratelimit.Snapshot{Instance: "pricing", AvailablePermits: 0, Permits: 5}, snap[0])
	_, err = client.Stock(context.Background(), "apple")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 5, svc.calls, "the rejected call never reached the service")
}

// SPEC GN-4: configuration keys override the directives, as they override options in
// code: the shared limiter's keys are those of its name, the retry's those of the id
// PriceClient.Price; both keys are used.
func TestConfigurationKeysOverrideDirectives(t *testing.T) {
	var events []policy.Event
	reg, err := resilience.NewRegistry(
		resilience.WithClock(clock.NewManual()),
		resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }),
		resilience.WithProperties(map[string]string{
			"instances.pricing.rateLimiter.permits":         "2",
			"instances.PriceClient.Price.retry.maxAttempts": "1",
		}))
	require.NoError(t, err)
	svc := newPricingService()
	client, err := NewPriceClientResilient(svc, reg)
	require.NoError(t, err)
	limiter, err := reg.RateLimiter("pricing")
	require.NoError(t, err)
	assert.Equal(t, 2, limiter.Snapshot().AvailablePermits, "permits=5 in the directive, 2 in the key")

	svc.down = true
	p, err := client.Price(context.Background(), "apple")
	require.NoError(t, err)
	assert.Equal(t, Price{}, p, "the fallback's answer")
	assert.Equal(t, 1, svc.calls, "maxAttempts=3 in the directive, 1 in the key")
	kinds := make([]policy.EventKind, len(events))
	for i, e := range events {
		kinds[i] = e.Kind
	}
	assert.Equal(t, []policy.EventKind{retry.EventExhausted, fallback.EventApplied}, kinds)
	assert.Empty(t, reg.UnusedKeys())
}

// SPEC GN-4: a nil implementation is refused with R4C-REG-010, not a panic at the first call.
func TestNilImplementation(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	client, err := NewPriceClientResilient(nil, reg)
	assert.Nil(t, client)
	var ce *policy.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "R4C-REG-010", ce.Code)
}
