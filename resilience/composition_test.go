package resilience_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

var errBoom = errors.New("boom")

// SPEC CO-2: with the breaker open, calls never reach the limiter: AvailablePermits does
// not change and the function is not called.
func TestCO2_OpenBreakerSpendsNoPermit(t *testing.T) {
	reg, _ := newRegistry(t)
	ctx := context.Background()
	calls := 0
	call, err := resilience.Wrap(reg, "Svc.Call", func(ctx context.Context) (int, error) { calls++; return 0, nil },
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)),
		resilience.CircuitBreaker())
	require.NoError(t, err)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
	require.NoError(t, err)
	rl, err := reg.RateLimiter("Svc.Call")
	require.NoError(t, err)

	_, err = call(ctx)
	require.NoError(t, err)
	require.Equal(t, 9, rl.Snapshot().AvailablePermits)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen)
	for range 5 {
		_, err = call(ctx)
		require.ErrorIs(t, err, circuitbreaker.ErrOpen)
	}
	assert.Equal(t, 9, rl.Snapshot().AvailablePermits, "no permit spent")
	assert.Equal(t, 1, calls, "the function was not called")
}

// SPEC CO-3: by default rate-limiter rejections are failures to an outer breaker (window
// 4, minimum 4, threshold 50%: 1 success and 3 rejections open it), but not with
// IgnoreOn(ratelimit.ErrExceeded).
func TestCO3_RejectionsOpenTheBreakerUnlessIgnored(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		reg, _ := newRegistry(t)
		ctx := context.Background()
		cbOpts := []circuitbreaker.Option{circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
			circuitbreaker.FailureRateThreshold(50)}
		if ignore {
			cbOpts = append(cbOpts, circuitbreaker.IgnoreOn(ratelimit.ErrExceeded))
		}
		call, err := resilience.Wrap(reg, "Svc.Call", func(ctx context.Context) (int, error) { return 1, nil },
			resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)),
			resilience.CircuitBreaker(cbOpts...))
		require.NoError(t, err)
		_, err = call(ctx)
		require.NoError(t, err)
		for range 3 {
			_, err = call(ctx)
			require.ErrorIs(t, err, ratelimit.ErrExceeded)
		}
		cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
		require.NoError(t, err)
		if ignore {
			assert.Equal(t, circuitbreaker.Closed, cb.Snapshot().State, "ignored rejections are neither success nor failure")
		} else {
			assert.Equal(t, circuitbreaker.Open, cb.Snapshot().State, "1 success, 3 rejections: 75% ≥ 50%")
			_, err = call(ctx)
			assert.ErrorIs(t, err, circuitbreaker.ErrOpen)
		}
	}
}

// SPEC CO-3: an outer retry with delay 1s turns a rejection into a success after exactly
// 1s of clock time; with AbortOn(ratelimit.ErrExceeded) it fails at once.
func TestCO3_RetryRetriesRejectionsUnlessAborted(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	limiter := resilience.RateLimiter(ratelimit.Name("quota"), ratelimit.Permits(1), ratelimit.Period(time.Second))
	call, err := resilience.Wrap(reg, "Svc.Call", func(ctx context.Context) (string, error) { return "ok", nil },
		limiter, resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)))
	require.NoError(t, err)
	abort, err := resilience.Wrap(reg, "Svc.Abort", func(ctx context.Context) (string, error) { return "ok", nil },
		limiter, resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second), retry.AbortOn(ratelimit.ErrExceeded)))
	require.NoError(t, err)

	_, err = call(ctx) // takes the one permit
	require.NoError(t, err)
	v, err := call(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.Equal(t, time.Second, clk.Now(), "rejected at 0, retried after exactly 1s")

	_, err = abort(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, time.Second, clk.Now(), "failed at once: no delay passed")
}

// SPEC CO-4: each attempt takes its own permit: a function that always fails, with retry
// maxAttempts=3 and a limiter of 2 permits, is called twice, and the result is the
// limiter's rejection.
func TestCO4_EachAttemptTakesItsOwnPermit(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	calls := 0
	call, err := resilience.Wrap(reg, "Svc.Call", func(ctx context.Context) (int, error) { calls++; return 0, errBoom },
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(10*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	_, err = call(ctx)
	assert.Equal(t, 2, calls)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.NotErrorIs(t, err, errBoom)
	assert.Equal(t, 20*time.Millisecond, clk.Now(), "two retry delays")
}

// SPEC CO-4: a call rejected by an open breaker is never retried, whatever the retry's
// lists say, and no retry delay passes.
func TestCO4_OpenBreakerIsNeverRetried(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	calls := 0
	call, err := resilience.Wrap(reg, "Svc.Call", func(ctx context.Context) (int, error) { calls++; return 0, nil },
		resilience.Retry(retry.MaxAttempts(5), retry.Delay(time.Second), retry.On(circuitbreaker.ErrOpen)),
		resilience.CircuitBreaker())
	require.NoError(t, err)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
	require.NoError(t, err)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen)
	_, err = call(ctx)
	require.ErrorIs(t, err, circuitbreaker.ErrOpen)
	assert.Zero(t, calls)
	assert.Zero(t, clk.Now(), "no retry delay passed")
}

// SPEC CO-5: the wait for a permit is not timed by the timeout, which is inside: with
// permits=1, maxWait=2s, timeout 500ms and 100ms of work, two calls in a row both succeed
// (the second waits 1s for its permit). 600ms of work under 500ms fails with ErrTimeout.
func TestCO5_PermitWaitIsNotTimed(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	work := func(d time.Duration) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			if err := clk.Sleep(ctx, d); err != nil {
				return "", err
			}
			return "done", nil
		}
	}
	specs := []resilience.Spec{
		resilience.Timeout(500 * time.Millisecond),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second)),
	}
	fast, err := resilience.Wrap(reg, "Svc.Fast", work(100*time.Millisecond), specs...)
	require.NoError(t, err)
	for i := range 2 {
		v, err := fast(ctx)
		require.NoError(t, err, "call %d", i+1)
		assert.Equal(t, "done", v)
	}
	assert.Equal(t, 1100*time.Millisecond, clk.Now(), "the second call waited 900ms, then worked 100ms")

	slow, err := resilience.Wrap(reg, "Svc.Slow", work(600*time.Millisecond), specs...)
	require.NoError(t, err)
	_, err = slow(ctx)
	require.ErrorIs(t, err, timeout.ErrTimeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// SPEC CO-1: the same specs in reversed order behave the same; for a call that fails
// twice and then succeeds, the events follow the fixed order: each retry attempt, then the
// limiter's wait for the next attempt's own permit.
func TestCO1_FixedOrderWhateverTheSpecOrder(t *testing.T) {
	run := func(reverse bool) ([]string, string, time.Duration) {
		var events []string
		clk := clock.NewManual()
		reg, err := resilience.NewRegistry(resilience.WithClock(clk),
			resilience.WithEventListener(func(e policy.Event) {
				events = append(events, e.Kind.String()+" "+e.Wait.String())
			}))
		require.NoError(t, err)
		failures := 2
		fn := func(ctx context.Context) (string, error) {
			if failures > 0 {
				failures--
				return "", errBoom
			}
			return "ok", nil
		}
		specs := []resilience.Spec{
			resilience.Fallback(func(ctx context.Context, err error) (string, error) { return "fallback", nil }),
			resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)),
			resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(10)),
			resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second)),
			resilience.Timeout(time.Second),
			resilience.Bulkhead(bulkhead.MaxConcurrent(1)),
		}
		if reverse {
			for i, j := 0, len(specs)-1; i < j; i, j = i+1, j-1 {
				specs[i], specs[j] = specs[j], specs[i]
			}
		}
		call, err := resilience.Wrap(reg, "Svc.Call", fn, specs...)
		require.NoError(t, err)
		v, err := call(context.Background())
		require.NoError(t, err)
		return events, v, clk.Now()
	}
	events, v, at := run(false)
	want := []string{
		"RetryAttempt 100ms",      // attempt 1 failed; retry waits 100ms
		"RateLimiterWaited 900ms", // attempt 2 takes its own permit, free at 1s
		"RetryAttempt 100ms",      // attempt 2 failed
		"RateLimiterWaited 900ms", // attempt 3's permit, free at 2s
	}
	assert.Equal(t, want, events)
	assert.Equal(t, "ok", v, "the third attempt succeeds; the fallback is not needed")
	assert.Equal(t, 2*time.Second, at)

	revEvents, revV, revAt := run(true)
	assert.Equal(t, events, revEvents)
	assert.Equal(t, v, revV)
	assert.Equal(t, at, revAt)
}

// The full pipeline of retry, circuit breaker, rate limiter and bulkhead allocates nothing
// for a successful call and for each kind of rejection.
func TestFullPipelineZeroAllocations(t *testing.T) {
	ctx := context.Background()
	full := func(t *testing.T, reg *resilience.Registry, id string, permits int, fn func(context.Context, int) (int, error)) func(context.Context, int) (int, error) {
		call, err := resilience.Wrap1(reg, id, fn,
			resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Millisecond)),
			resilience.CircuitBreaker(),
			resilience.RateLimiter(ratelimit.Permits(permits), ratelimit.Period(time.Second)),
			resilience.Bulkhead(bulkhead.MaxConcurrent(10)))
		require.NoError(t, err)
		return call
	}
	ok := func(ctx context.Context, a int) (int, error) { return a, nil }

	sys, err := resilience.NewRegistry()
	require.NoError(t, err)
	admitted := full(t, sys, "Admitted", 1_000_000_000, ok)

	manual, _ := newRegistry(t) // retry delays advance the manual clock: no timers to allocate
	limited := full(t, manual, "Limited", 1, ok)
	_, _ = limited(ctx, 1)
	opened := full(t, manual, "Opened", 1_000_000_000, ok)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](manual, circuitbreaker.Layer, "Opened")
	require.NoError(t, err)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen)
	filled := full(t, manual, "Filled", 1_000_000_000, ok)
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](manual, bulkhead.Layer, "Filled")
	require.NoError(t, err)
	gate := make(chan struct{})
	hold := bulkhead.NewPolicy[struct{}](bh).Decorate(func(context.Context) (struct{}, error) { <-gate; return struct{}{}, nil })
	var holders sync.WaitGroup
	for range 10 {
		holders.Go(func() { _, _ = hold(ctx) })
	}
	contracttest.Eventually(t, func() bool { return bh.Snapshot().AvailableSlots == 0 }, "the 10 slots are held")
	defer func() { close(gate); holders.Wait() }()

	for name, c := range map[string]struct {
		call func(context.Context, int) (int, error)
		want error
	}{
		"admitted":         {admitted, nil},
		"rate limited":     {limited, ratelimit.ErrExceeded},
		"breaker open":     {opened, circuitbreaker.ErrOpen},
		"bulkhead is full": {filled, bulkhead.ErrFull},
	} {
		_, err := c.call(ctx, 1)
		if c.want == nil {
			require.NoError(t, err, name)
		} else {
			require.ErrorIs(t, err, c.want, name)
		}
		assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = c.call(ctx, 1) }), name)
	}
}
