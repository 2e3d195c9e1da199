package resilience_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
)

// SPEC CO-1, AL-1: the adaptive limit is the innermost layer, inside the bulkhead: a call
// the bulkhead lets in is counted by the limit only while the function runs.
func TestCO1_AdaptiveLimitIsInnermost(t *testing.T) {
	reg, _ := newRegistry(t)
	var inFlight []int
	var al *adaptivelimit.Limiter
	call, err := resilience.Wrap(reg, "Svc.A", func(context.Context) (int, error) {
		inFlight = append(inFlight, al.Snapshot().InFlight)
		return 1, nil
	}, resilience.AdaptiveLimit(adaptivelimit.InitialLimit(3)), resilience.Bulkhead(bulkhead.MaxConcurrent(5)))
	require.NoError(t, err)
	al, err = resilience.Lookup[*adaptivelimit.Limiter](reg, adaptivelimit.Layer, "Svc.A")
	require.NoError(t, err)
	_, err = call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1}, inFlight)
	assert.Zero(t, al.Snapshot().InFlight)

	// Named outside the bulkhead, it holds its place while the bulkhead refuses.
	order, err := resilience.Wrap(reg, "Svc.B", func(context.Context) (int, error) { return 1, nil },
		resilience.AdaptiveLimit(), resilience.Bulkhead(bulkhead.MaxConcurrent(1)),
		resilience.Order(adaptivelimit.Layer, bulkhead.Layer))
	require.NoError(t, err)
	_, err = order(context.Background())
	require.NoError(t, err)
}

// SPEC CO-9: the adaptive limit's rejections are errors to the outer layers, as the rate
// limiter's and the bulkhead's: an outer breaker records them as failures (unless its
// IgnoreOn lists adaptivelimit.ErrLimitExceeded), and an outer retry retries them after
// its delay (unless its AbortOn lists it).
func TestCO9_AdaptiveLimitRejectionsAreFailures(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		reg, _ := newRegistry(t)
		cbOpts := []circuitbreaker.Option{circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2)}
		if ignore {
			cbOpts = append(cbOpts, circuitbreaker.IgnoreOn(adaptivelimit.ErrLimitExceeded))
		}
		release := make(chan struct{})
		held, err := resilience.WrapAsync(reg, "Svc.Held", func(ctx context.Context) *async.Future[int] {
			f, complete := async.NewPromise[int]()
			go func() { <-release; complete(1, nil) }()
			return f
		}, resilience.AdaptiveLimit(adaptivelimit.Name("shared"), adaptivelimit.InitialLimit(1)))
		require.NoError(t, err)
		f := held(context.Background()) // holds the one slot
		attempts := 0
		call, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (int, error) { attempts++; return 1, nil },
			resilience.AdaptiveLimit(adaptivelimit.Name("shared"), adaptivelimit.InitialLimit(1)),
			resilience.CircuitBreaker(cbOpts...),
			resilience.Retry(retry.MaxAttempts(2), retry.Delay(0)))
		require.NoError(t, err)
		_, err = call(context.Background())
		require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
		assert.Zero(t, attempts)
		cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
		require.NoError(t, err)
		if ignore {
			assert.Equal(t, 0, cb.Snapshot().BufferedCalls, "ignored rejections are not recorded")
		} else {
			assert.Equal(t, circuitbreaker.Open, cb.Snapshot().State, "two attempts, two rejections: the breaker opened")
		}
		close(release)
		_, err = f.Await(context.Background())
		require.NoError(t, err)
	}
}

// SPEC RG-3, RG-4, AL-2: the adaptive limit reads its keys, is shared by name and is in
// the registry's snapshot.
func TestAL2_ConfigurationAndSnapshot(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"defaults.adaptiveLimit.algorithm":         "AIMD",
		"instances.Pool.adaptiveLimit.maxLimit":    "40",
		"configs.small.adaptiveLimit.initialLimit": "4",
	}))
	fn := func(context.Context) (int, error) { return 1, nil }
	_, err := resilience.Wrap(reg, "Svc.A", fn, resilience.AdaptiveLimit(adaptivelimit.Name("Pool"), adaptivelimit.UseConfig("small")))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "Svc.B", fn, resilience.AdaptiveLimit(adaptivelimit.Name("Pool"), adaptivelimit.UseConfig("small")))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "Svc.C", fn, resilience.AdaptiveLimit(adaptivelimit.Name("Pool")))
	requireCode(t, err, r4c.Conflict)

	var snaps []adaptivelimit.Snapshot
	for _, p := range reg.Snapshot().Policies {
		if s, ok := p.State.(adaptivelimit.Snapshot); ok {
			snaps = append(snaps, s)
		}
	}
	require.Len(t, snaps, 1)
	s := snaps[0]
	assert.Equal(t, "Pool", s.Instance)
	assert.Equal(t, adaptivelimit.AIMD, s.Algorithm)
	assert.Equal(t, 4, s.Limit)
	assert.Equal(t, 40, s.MaxLimit)

	_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{"defaults.adaptiveLimit.algorithm": "fastest"}))
	requireCode(t, err, r4c.OutOfRange)
	_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{"defaults.hedge.maxAttempts": "11"}))
	requireCode(t, err, r4c.BadAttempts)
	_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{"defaults.hedge.budgetPercent": "101"}))
	requireCode(t, err, r4c.OutOfRange)
	_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{"defaults.hedge.delay": "-1s"}))
	requireCode(t, err, r4c.NegativeDuration)
}
