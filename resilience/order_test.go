package resilience_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/chaos"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
	"github.com/resilience4go/resilience4go/policy/throttle"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// The default order is the one of the layer table, outermost first.
func TestCO1_DefaultOrder(t *testing.T) {
	assert.Equal(t, []policy.Layer{fallback.Layer, retrybudget.Layer, retry.Layer, hedge.Layer, throttle.Layer,
		circuitbreaker.Layer, ratelimit.Layer, timeout.Layer, bulkhead.Layer, adaptivelimit.Layer, chaos.Layer}, resilience.DefaultOrder())
}

// slowFailure returns a function that takes 400ms of clk's time, in steps of 100ms that
// stop when ctx ends, and then fails with errBoom; it counts its calls.
func slowFailure(clk *clock.Manual, calls *int) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		*calls++
		for range 4 {
			if err := clk.Sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
		}
		return "", errBoom
	}
}

// A timeout named outside the retry bounds all the attempts together: 1s around three
// attempts of 400ms ends the third at 1s with the timeout's error. In the default order
// each attempt has its own 1s, and the call fails after the third with the function's
// error, at 1.2s.
func TestOrder_TimeoutOutsideRetry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []resilience.Spec
		want  error
		at    time.Duration
	}{
		{"named order", []resilience.Spec{resilience.Order(timeout.Layer, retry.Layer)}, timeout.ErrTimeout, time.Second},
		{"default order", nil, errBoom, 1200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clk := newRegistry(t)
			calls := 0
			specs := append([]resilience.Spec{
				resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)),
				resilience.Timeout(time.Second),
			}, tc.order...)
			call, err := resilience.Wrap(reg, "Svc.Call", slowFailure(clk, &calls), specs...)
			require.NoError(t, err)
			_, err = call(context.Background())
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, 3, calls)
			assert.Equal(t, tc.at, clk.Now())
			if tc.want == errBoom {
				assert.NotErrorIs(t, err, timeout.ErrTimeout)
			}
		})
	}
}

// A breaker named outside the retry records a call's three failed attempts as one
// failure; in the default order it records each attempt.
func TestOrder_BreakerOutsideRetry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		order  []resilience.Spec
		failed int
	}{
		{"named order", []resilience.Spec{resilience.Order(circuitbreaker.Layer, retry.Layer)}, 1},
		{"default order", nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newRegistry(t)
			specs := append([]resilience.Spec{
				resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Millisecond)),
				resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(10)),
			}, tc.order...)
			call, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (int, error) { return 0, errBoom }, specs...)
			require.NoError(t, err)
			_, err = call(context.Background())
			require.ErrorIs(t, err, errBoom)
			cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
			require.NoError(t, err)
			s := cb.Snapshot()
			assert.Equal(t, tc.failed, s.BufferedCalls)
			assert.Equal(t, tc.failed, s.FailedCalls)
		})
	}
}

// A bulkhead of one slot named outside the retry holds its slot while the first call
// waits between attempts, so a second call is rejected until the first is done; in the
// default order the slot is free between attempts.
func TestOrder_BulkheadOutsideRetry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		order    []resilience.Spec
		rejected bool
	}{
		{"named order", []resilience.Spec{resilience.Order(bulkhead.Layer, retry.Layer)}, true},
		{"default order", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clk := newRegistry(t)
			specs := append([]resilience.Spec{
				resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)),
				resilience.Bulkhead(bulkhead.MaxConcurrent(1)),
			}, tc.order...)
			call, err := resilience.WrapAsync1(reg, "Svc.Call", func(_ context.Context, fail bool) *async.Future[string] {
				if fail {
					return async.Failed[string](errBoom)
				}
				return async.Completed("second")
			}, specs...)
			require.NoError(t, err)
			ctx := context.Background()
			first := call(ctx, true)
			for attempt := 1; attempt <= 2; attempt++ { // during the waits after attempts 1 and 2
				_, done, _ := first.Result()
				require.False(t, done, "the first call is retrying")
				v, err := call(ctx, false).Await(ctx)
				if tc.rejected {
					require.ErrorIs(t, err, bulkhead.ErrFull, "wait %d", attempt)
				} else {
					require.NoError(t, err, "wait %d", attempt)
					assert.Equal(t, "second", v)
				}
				clk.Advance(100 * time.Millisecond)
			}
			_, err = first.Await(ctx)
			require.ErrorIs(t, err, errBoom)
			v, err := call(ctx, false).Await(ctx)
			require.NoError(t, err, "the slot is free once the first call is done")
			assert.Equal(t, "second", v)
		})
	}
}

// The fallback stays outermost wherever the order names it: it replaces the error left
// after every attempt of the retry.
func TestOrder_FallbackStaysOutermost(t *testing.T) {
	for _, order := range [][]policy.Layer{
		{retry.Layer, fallback.Layer},
		{timeout.Layer, fallback.Layer, retry.Layer},
		{fallback.Layer},
	} {
		reg, _ := newRegistry(t)
		calls := 0
		call, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (string, error) { calls++; return "", errBoom },
			resilience.Order(order...),
			resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)),
			resilience.Timeout(time.Second),
			resilience.Fallback(func(_ context.Context, err error) (string, error) { return "fallback: " + err.Error(), nil }))
		require.NoError(t, err)
		v, err := call(context.Background())
		require.NoError(t, err, "order %v", order)
		assert.Equal(t, "fallback: boom", v, "order %v", order)
		assert.Equal(t, 3, calls, "order %v: every attempt ran inside the fallback", order)
	}
}

// The order names layers: the same layer twice, an empty name, a name that is neither
// built in nor in the composition, or Order given twice is R4C-REG-011. A built-in layer
// that the composition does not use may be named.
func TestOrder_BadOrdersAreRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (int, error) { return 1, nil }
	retrySpec := resilience.Retry()
	for _, specs := range [][]resilience.Spec{
		{retrySpec, resilience.Order(retry.Layer, timeout.Layer, retry.Layer)},
		{retrySpec, resilience.Order(retry.Layer, "")},
		{retrySpec, resilience.Order(retry.Layer, "cache")},
		{retrySpec, resilience.Order(retry.Layer), resilience.Order(retry.Layer)},
	} {
		_, err := resilience.Wrap(reg, "Svc.Bad", fn, specs...)
		requireCode(t, err, r4c.BadOrder)
		assert.Equal(t, "R4C-REG-011", r4c.CodeOf(err))
	}
	assert.Empty(t, reg.Snapshot().Policies, "a failed wrap registers nothing")

	_, err := resilience.Wrap(reg, "Svc.Good", fn, retrySpec,
		resilience.Order(bulkhead.Layer, timeout.Layer, retry.Layer))
	require.NoError(t, err)
}

// The key instances.<id>.composition.order wins over the order in code, which wins over
// defaults.composition.order; a bad value fails NewRegistry with R4C-REG-011, and the key
// has no configs.<name> scope.
func TestOrder_ConfigurationKeys(t *testing.T) {
	timedOut := func(t *testing.T, props map[string]string, specs ...resilience.Spec) bool {
		t.Helper()
		reg, clk := newRegistry(t, resilience.WithProperties(props))
		calls := 0
		call, err := resilience.Wrap(reg, "Svc.Call", slowFailure(clk, &calls), append(specs,
			resilience.Retry(retry.MaxAttempts(3), retry.Delay(0)), resilience.Timeout(time.Second))...)
		require.NoError(t, err)
		_, err = call(context.Background())
		require.Error(t, err)
		return errors.Is(err, timeout.ErrTimeout)
	}
	outside := resilience.Order(timeout.Layer, retry.Layer)
	assert.True(t, timedOut(t, map[string]string{"defaults.composition.order": "timeout, retry"}))
	assert.True(t, timedOut(t, map[string]string{"defaults.composition.order": "retry,timeout"}, outside),
		"code wins over defaults")
	assert.False(t, timedOut(t, map[string]string{"defaults.composition.order": "retry,timeout"}))
	assert.False(t, timedOut(t, map[string]string{"instances.Svc.Call.composition.order": "retry"}, outside),
		"instances wins over code")
	assert.True(t, timedOut(t, map[string]string{"instances.Svc.Call.composition.order": " timeout ,retry "}))

	for _, props := range []map[string]string{
		{"defaults.composition.order": "retry, timeout, retry"},
		{"instances.Svc.Call.composition.order": "retry,,timeout"},
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(props))
		requireCode(t, err, r4c.BadOrder)
	}
	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{"configs.x.composition.order": "retry"}))
	requireCode(t, err, r4c.UnknownKey)
	// An order for every composition cannot name a user's layer: no user layer is in
	// every composition.
	_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{"defaults.composition.order": "calls, retry"}))
	ce := requireCode(t, err, r4c.BadOrder)
	assert.Equal(t, "defaults.composition.order", ce.Key)
	assert.Equal(t, "calls, retry", ce.Value)

	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"instances.Svc.Call.composition.order": "retry, cache"}))
	_, err = resilience.Wrap(reg, "Svc.Call", func(context.Context) (int, error) { return 0, nil }, resilience.Retry())
	ce = requireCode(t, err, r4c.BadOrder)
	assert.Equal(t, "instances.Svc.Call.composition.order", ce.Key)
	assert.Equal(t, "retry, cache", ce.Value)
	assert.Equal(t, []string{"instances.Svc.Call.composition.order"}, reg.UnusedKeys(), "the failed wrap used no key")

	// A bad order in code fails even where a key overrides it.
	reg, _ = newRegistry(t, resilience.WithProperties(map[string]string{"instances.Svc.Call.composition.order": "retry"}))
	_, err = resilience.Wrap(reg, "Svc.Call", func(context.Context) (int, error) { return 0, nil }, resilience.Retry(),
		resilience.Order(retry.Layer, retry.Layer))
	requireCode(t, err, r4c.BadOrder)
}
