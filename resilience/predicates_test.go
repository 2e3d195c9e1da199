package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// response is what an HTTP-like function returns: a status with a nil error.
type response struct{ status int }

func is503(r response, err error) bool { return err == nil && r.status == 503 }

// Retry-if on a result: a 503 returned with a nil error is retried, three times, and
// then returned as it is.
func TestPredicates_RetryIfResult(t *testing.T) {
	reg, clk := newRegistry(t)
	calls := 0
	call, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (response, error) { calls++; return response{503}, nil },
		resilience.Retry(retry.MaxAttempts(4), retry.Delay(100*time.Millisecond), retry.If(is503)))
	require.NoError(t, err)
	v, err := call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, response{503}, v)
	assert.Equal(t, 4, calls, "the first attempt and three retries")
	assert.Equal(t, 300*time.Millisecond, clk.Now())

	calls = 0
	ok, err := resilience.Wrap(reg, "Svc.Ok", func(context.Context) (response, error) {
		calls++
		if calls < 3 {
			return response{503}, nil
		}
		return response{200}, nil
	}, resilience.Retry(retry.MaxAttempts(4), retry.Delay(0), retry.If(is503)))
	require.NoError(t, err)
	v, err = ok(context.Background())
	require.NoError(t, err)
	assert.Equal(t, response{200}, v)
	assert.Equal(t, 3, calls)
}

// Record-if: results the predicate matches count as breaker failures, and open it.
func TestPredicates_RecordIfResult(t *testing.T) {
	reg, _ := newRegistry(t)
	call, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (response, error) { return response{503}, nil },
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
			circuitbreaker.RecordIf(is503)))
	require.NoError(t, err)
	for range 4 {
		_, err := call(context.Background())
		require.NoError(t, err)
	}
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.Open, cb.Snapshot().State)
	_, err = call(context.Background())
	require.ErrorIs(t, err, circuitbreaker.ErrOpen)
}

// Handle-if: results the predicate matches go to the fallback, which receives a nil
// error for them.
func TestPredicates_HandleIfResult(t *testing.T) {
	reg, _ := newRegistry(t)
	var got []error
	call, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (response, error) { return response{503}, nil },
		resilience.Fallback(func(_ context.Context, err error) (response, error) {
			got = append(got, err)
			return response{200}, nil
		}, fallback.HandleIf(is503)))
	require.NoError(t, err)
	v, err := call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, response{200}, v)
	assert.Equal(t, []error{nil}, got)
}

// A predicate for another result type than the function's fails the wrap with
// R4C-REG-010, and registers nothing.
func TestPredicates_WrongResultTypeIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (string, error) { return "", nil }
	for _, spec := range []resilience.Spec{
		resilience.Retry(retry.If(is503)),
		resilience.CircuitBreaker(circuitbreaker.RecordIf(is503)),
		resilience.Fallback(func(context.Context, error) (string, error) { return "", nil }, fallback.HandleIf(is503)),
	} {
		_, err := resilience.Wrap(reg, "Svc.Call", fn, spec)
		ce := requireCode(t, err, r4c.BadSpec)
		assert.Contains(t, ce.Reason, "resilience_test.response")
	}
	assert.Empty(t, reg.Snapshot().Policies)
}

// A Config literal enforces its limit: its zero Disabled field means enabled.
func TestConfigLiteralEnforcesItsLimit(t *testing.T) {
	l, err := ratelimit.New(ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	require.NoError(t, err)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 1, Period: time.Hour}))
	admitted := 0
	for range 100 {
		if l.TryAcquire() {
			admitted++
		}
	}
	assert.Equal(t, 1, admitted)
}

// A zero Limiter was never configured: it admits nothing.
func TestZeroLimiterAdmitsNothing(t *testing.T) {
	var l ratelimit.Limiter
	assert.False(t, l.TryAcquire())
	require.ErrorIs(t, l.Acquire(context.Background()), ratelimit.ErrExceeded)
	_, err := l.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, l.TryAcquireN(1), ratelimit.ErrExceeded)
	assert.Equal(t, 0, l.Snapshot().AvailablePermits)
}
