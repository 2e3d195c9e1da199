package resilienceotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// These tests run calls through a registry built with the Metrics as its observer, on a
// manual clock, and read every instrument with exact values.

// newRegistry returns a registry on a manual clock observed by h's Metrics.
func newRegistry(t *testing.T, h *harness) (*resilience.Registry, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithObserver(h.m))
	require.NoError(t, err)
	require.NoError(t, h.m.Observe(reg))
	require.NoError(t, h.m.Observe(reg), "observing twice changes nothing")
	return reg, clk
}

func ok(context.Context) (string, error) { return "ok", nil }

// OB-2: 10 permits per second and a burst of 25 calls: 10 admitted, 15 rejected, no
// permit left; the whole call counts the rejections by the rate limiter. Then a call that
// waits 1s for its permit: one waited call, and a wait histogram of count 1 and sum 1s.
func TestOB2_RateLimiterThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, _ := newRegistry(t, h)
	burst, err := resilience.Wrap(reg, "API.Burst", ok,
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	for range 25 {
		_, _ = burst(ctx)
	}

	c := h.collect()
	assert.Equal(t, int64(10), c.int(RateLimiterCalls, "name=API.Burst", "outcome=admitted"))
	assert.Equal(t, int64(15), c.int(RateLimiterCalls, "name=API.Burst", "outcome=rejected"))
	assert.Equal(t, int64(0), c.int(RateLimiterWaitedCalls, "name=API.Burst"))
	assert.Equal(t, int64(0), c.int(RateLimiterAvailablePermits, "name=API.Burst"))
	assert.Equal(t, map[string]int64{
		"{name=API.Burst,outcome=succeeded}":                  10,
		"{name=API.Burst,outcome=failed}":                     0,
		"{layer=rateLimiter,name=API.Burst,outcome=rejected}": 15,
	}, c.intPoints(resilienceotel.Calls))

	slow, err := resilience.Wrap(reg, "API.Slow", ok,
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second)))
	require.NoError(t, err)
	_, err = slow(ctx)
	require.NoError(t, err)
	_, err = slow(ctx) // waits 1s: the manual clock moves on
	require.NoError(t, err)

	c = h.collect()
	assert.Equal(t, int64(2), c.int(RateLimiterCalls, "name=API.Slow", "outcome=admitted"))
	assert.Equal(t, int64(1), c.int(RateLimiterWaitedCalls, "name=API.Slow"))
	n, sum := c.hist(RateLimiterWaitDuration, "name=API.Slow")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 1.0, sum)
	assert.Equal(t, int64(0), c.int(RateLimiterAvailablePermits, "name=API.Slow"))
	assert.Equal(t, int64(10), c.int(RateLimiterAvailablePermits, "name=API.Burst"),
		"1s later the burst's permits are back")
}

// step is a call of a breaker test: how long it takes on the manual clock and its error.
type step struct {
	d   time.Duration
	err error
}

var errIgnored = errors.New("ignored")

// OB-2: a breaker's states, rates, calls by outcome (not_permitted included), slow calls,
// durations and transitions, through closed, open, half-open and closed again.
func TestOB2_CircuitBreakerThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	call, err := resilience.Wrap1(reg, "DB.Query",
		func(ctx context.Context, s step) (string, error) {
			clk.Advance(s.d)
			return "", s.err
		},
		resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4),
			circuitbreaker.FailureRateThreshold(50), circuitbreaker.SlowCallThreshold(time.Second),
			circuitbreaker.SlowCallRateThreshold(100), circuitbreaker.WaitInOpen(10*time.Second),
			circuitbreaker.PermittedInHalfOpen(1), circuitbreaker.IgnoreOn(errIgnored)))
	require.NoError(t, err)
	ctx := context.Background()
	for _, s := range []step{
		{50 * time.Millisecond, errIgnored},
		{100 * time.Millisecond, nil},
		{2 * time.Second, nil}, // slow
		{200 * time.Millisecond, errBoom},
	} {
		_, _ = call(ctx, s)
	}

	c := h.collect()
	for _, st := range []string{"closed", "open", "half_open", "disabled", "forced_open"} {
		want := int64(0)
		if st == "closed" {
			want = 1
		}
		assert.Equal(t, want, c.int(CircuitBreakerState, "name=DB.Query", "state="+st), st)
	}
	_, has := c.floatOK(CircuitBreakerFailureRate, "name=DB.Query")
	assert.False(t, has, "no failure rate while fewer than the minimum calls")
	_, has = c.floatOK(CircuitBreakerSlowCallRate, "name=DB.Query")
	assert.False(t, has, "no slow-call rate while fewer than the minimum calls")

	_, _ = call(ctx, step{300 * time.Millisecond, errBoom}) // 2 of 4 failed: open
	_, err = call(ctx, step{})
	require.ErrorIs(t, err, circuitbreaker.ErrOpen)

	c = h.collect()
	assert.Equal(t, int64(1), c.int(CircuitBreakerState, "name=DB.Query", "state=open"))
	assert.Equal(t, int64(0), c.int(CircuitBreakerState, "name=DB.Query", "state=closed"))
	assert.Equal(t, 50.0, c.float(CircuitBreakerFailureRate, "name=DB.Query"))
	assert.Equal(t, 25.0, c.float(CircuitBreakerSlowCallRate, "name=DB.Query"))
	assert.Equal(t, map[string]int64{
		"{name=DB.Query,outcome=succeeded}":     2,
		"{name=DB.Query,outcome=failed}":        2,
		"{name=DB.Query,outcome=ignored}":       1,
		"{name=DB.Query,outcome=not_permitted}": 1,
	}, c.intPoints(CircuitBreakerCalls))
	assert.Equal(t, map[string]int64{
		"{name=DB.Query,outcome=succeeded}": 1,
		"{name=DB.Query,outcome=failed}":    0,
	}, c.intPoints(CircuitBreakerSlowCalls))
	n, sum := c.hist(CircuitBreakerCallDuration, "name=DB.Query", "outcome=succeeded")
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, 2.1, sum, 1e-12)
	n, sum = c.hist(CircuitBreakerCallDuration, "name=DB.Query", "outcome=failed")
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, 0.5, sum, 1e-12)
	n, sum = c.hist(CircuitBreakerCallDuration, "name=DB.Query", "outcome=ignored")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 0.05, sum)
	assert.Equal(t, map[string]int64{"{from=closed,name=DB.Query,to=open}": 1},
		c.intPoints(CircuitBreakerTransitions))
	assert.Equal(t, map[string]int64{
		"{name=DB.Query,outcome=succeeded}":                     2,
		"{name=DB.Query,outcome=failed}":                        3,
		"{layer=circuitBreaker,name=DB.Query,outcome=rejected}": 1,
	}, c.intPoints(resilienceotel.Calls), "an ignored error fails the whole call")

	clk.Advance(10 * time.Second)
	_, err = call(ctx, step{10 * time.Millisecond, nil}) // the trial call: closed again
	require.NoError(t, err)
	c = h.collect()
	assert.Equal(t, int64(1), c.int(CircuitBreakerState, "name=DB.Query", "state=closed"))
	assert.Equal(t, map[string]int64{
		"{from=closed,name=DB.Query,to=open}":      1,
		"{from=open,name=DB.Query,to=half_open}":   1,
		"{from=half_open,name=DB.Query,to=closed}": 1,
	}, c.intPoints(CircuitBreakerTransitions))
}

// OB-2: a bulkhead's free, configured and queued slots, its admissions and rejections,
// and the wait of a call that got a slot after waiting.
func TestOB2_BulkheadThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	var completes []func(string, error)
	call, err := resilience.WrapAsync(reg, "Pool.Get", func(ctx context.Context) *async.Future[string] {
		f, complete := async.NewPromise[string]()
		completes = append(completes, complete)
		return f
	}, resilience.Bulkhead(bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	futures := make([]*async.Future[string], 4)
	for i := range futures {
		futures[i] = call(ctx)
	}

	c := h.collect()
	assert.Equal(t, int64(0), c.int(BulkheadAvailableSlots, "name=Pool.Get"))
	assert.Equal(t, int64(2), c.int(BulkheadMaxSlots, "name=Pool.Get"))
	assert.Equal(t, int64(2), c.int(BulkheadQueuedCalls, "name=Pool.Get"))
	assert.Equal(t, int64(2), c.int(BulkheadCalls, "name=Pool.Get", "outcome=admitted"))
	assert.Equal(t, int64(0), c.int(BulkheadCalls, "name=Pool.Get", "outcome=rejected"))

	clk.Advance(300 * time.Millisecond)
	completes[0]("done", nil) // the third call gets the slot after 300ms
	clk.Advance(time.Second)  // the fourth waited its maxWait: rejected
	_, err = futures[3].Await(ctx)
	require.ErrorIs(t, err, bulkhead.ErrFull)

	c = h.collect()
	assert.Equal(t, int64(3), c.int(BulkheadCalls, "name=Pool.Get", "outcome=admitted"))
	assert.Equal(t, int64(1), c.int(BulkheadCalls, "name=Pool.Get", "outcome=rejected"))
	assert.Equal(t, int64(0), c.int(BulkheadQueuedCalls, "name=Pool.Get"))
	n, sum := c.hist(BulkheadWaitDuration, "name=Pool.Get")
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 0.3, sum, 1e-12)

	for _, complete := range completes[1:] {
		complete("done", nil)
	}
	c = h.collect()
	assert.Equal(t, int64(2), c.int(BulkheadAvailableSlots, "name=Pool.Get"))
}

var errFatal = errors.New("fatal")

// OB-2: a retry's calls by kind, and every attempt.
func TestOB2_RetryThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, _ := newRegistry(t, h)
	spec := resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond), retry.AbortOn(errFatal))
	call, err := resilience.Wrap1(reg, "API.Retry", func(ctx context.Context, errs *[]error) (string, error) {
		if len(*errs) == 0 {
			return "ok", nil
		}
		err := (*errs)[0]
		*errs = (*errs)[1:]
		return "", err
	}, spec)
	require.NoError(t, err)
	ctx := context.Background()
	for _, errs := range [][]error{
		{},                          // succeeded_without_retry: 1 attempt
		{errBoom},                   // succeeded_with_retry: 2 attempts
		{errBoom, errBoom, errBoom}, // failed_with_retry: 3 attempts
		{errFatal},                  // aborted: 1 attempt
	} {
		_, _ = call(ctx, &errs)
	}
	once, err := resilience.Wrap(reg, "API.Once", func(context.Context) (string, error) { return "", errBoom },
		resilience.Retry(retry.MaxAttempts(1)))
	require.NoError(t, err)
	_, _ = once(ctx) // failed_without_retry

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{kind=succeeded_without_retry,name=API.Retry}": 1,
		"{kind=succeeded_with_retry,name=API.Retry}":    1,
		"{kind=failed_with_retry,name=API.Retry}":       1,
		"{kind=failed_without_retry,name=API.Retry}":    0,
		"{kind=aborted,name=API.Retry}":                 1,
		"{kind=succeeded_without_retry,name=API.Once}":  0,
		"{kind=succeeded_with_retry,name=API.Once}":     0,
		"{kind=failed_with_retry,name=API.Once}":        0,
		"{kind=failed_without_retry,name=API.Once}":     1,
		"{kind=aborted,name=API.Once}":                  0,
	}, c.intPoints(RetryCalls))
	assert.Equal(t, int64(7), c.int(RetryAttempts, "name=API.Retry"))
	assert.Equal(t, int64(1), c.int(RetryAttempts, "name=API.Once"))
}

// OB-2: a timeout's calls by outcome.
func TestOB2_TimeoutThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	call, err := resilience.Wrap1(reg, "API.Slow", func(ctx context.Context, s step) (string, error) {
		_ = clk.Sleep(ctx, s.d)
		return "", s.err
	}, resilience.Timeout(time.Second))
	require.NoError(t, err)
	ctx := context.Background()
	for _, s := range []step{
		{100 * time.Millisecond, nil},
		{200 * time.Millisecond, errBoom},
		{2 * time.Second, nil},
		{3 * time.Second, nil},
	} {
		_, _ = call(ctx, s)
	}
	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=API.Slow,outcome=succeeded}": 1,
		"{name=API.Slow,outcome=failed}":    1,
		"{name=API.Slow,outcome=timed_out}": 2,
	}, c.intPoints(TimeoutCalls))
}

// OB-2: a hedge's calls, attempts and budget.
func TestOB2_HedgeThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	var completes []func(string, error)
	call, err := resilience.WrapAsync(reg, "Search.Query", func(ctx context.Context) *async.Future[string] {
		f, complete := async.NewPromise[string]()
		completes = append(completes, complete)
		return f
	}, resilience.Hedge(hedge.Delay(100*time.Millisecond))) // budget: 10 per 10s at least
	require.NoError(t, err)
	ctx := context.Background()

	f := call(ctx)
	clk.Advance(100 * time.Millisecond) // the hedge starts
	require.Len(t, completes, 2)
	completes[1]("fast", nil)
	v, err := f.Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "fast", v)
	completes[0]("", context.Canceled) // the first attempt, canceled, ends

	f = call(ctx) // fails at once, with no hedge: every attempt failed
	completes[2]("", errFatal)
	clk.Advance(100 * time.Millisecond)
	require.Len(t, completes, 4)
	completes[3]("", errBoom)
	_, err = f.Await(ctx)
	require.Error(t, err)

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=Search.Query,outcome=succeeded}": 1,
		"{name=Search.Query,outcome=failed}":    1,
	}, c.intPoints(HedgeCalls))
	assert.Equal(t, int64(4), c.int(HedgeAttempts, "name=Search.Query"))
	hd, err := resilience.Lookup[*hedge.Hedge](reg, hedge.Layer, "Search.Query")
	require.NoError(t, err)
	assert.Equal(t, int64(8), c.int(HedgeBudgetAvailable, "name=Search.Query"),
		"10 hedges per 10s, 2 spent")
	assert.Equal(t, 8, hd.Snapshot().BudgetAvailable)
}

// OB-2: an adaptive limit's limit, calls in flight and queued, admissions and
// rejections.
func TestOB2_AdaptiveLimitThroughRegistry(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	var completes []func(string, error)
	call, err := resilience.WrapAsync(reg, "DB.Write", func(ctx context.Context) *async.Future[string] {
		f, complete := async.NewPromise[string]()
		completes = append(completes, complete)
		return f
	}, resilience.AdaptiveLimit(adaptivelimit.InitialLimit(2), adaptivelimit.MinLimit(1), adaptivelimit.MaxLimit(10),
		adaptivelimit.MaxWait(time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	futures := make([]*async.Future[string], 3)
	for i := range futures {
		futures[i] = call(ctx)
	}
	c := h.collect()
	assert.Equal(t, int64(2), c.int(AdaptiveLimitLimit, "name=DB.Write"))
	assert.Equal(t, int64(2), c.int(AdaptiveLimitInFlight, "name=DB.Write"))
	assert.Equal(t, int64(1), c.int(AdaptiveLimitQueuedCalls, "name=DB.Write"))
	assert.Equal(t, int64(2), c.int(AdaptiveLimitCalls, "name=DB.Write", "outcome=admitted"))
	assert.Equal(t, int64(0), c.int(AdaptiveLimitCalls, "name=DB.Write", "outcome=rejected"))

	clk.Advance(time.Second) // the third call waited its maxWait
	_, err = futures[2].Await(ctx)
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	c = h.collect()
	assert.Equal(t, int64(0), c.int(AdaptiveLimitQueuedCalls, "name=DB.Write"))
	assert.Equal(t, int64(1), c.int(AdaptiveLimitCalls, "name=DB.Write", "outcome=rejected"))
	assert.Equal(t, int64(1), c.int(resilienceotel.Calls, "name=DB.Write", "layer=adaptiveLimit", "outcome=rejected"))
	for _, complete := range completes {
		complete("done", nil)
	}
	c = h.collect()
	assert.Equal(t, int64(0), c.int(AdaptiveLimitInFlight, "name=DB.Write"))
	assert.Equal(t, int64(2), c.int(resilienceotel.Calls, "name=DB.Write", "outcome=succeeded"))
}

// OB-2: with WithCallDuration, the whole call's duration by outcome.
func TestOB2_CallDurationThroughRegistry(t *testing.T) {
	h := newHarness(t, resilienceotel.WithCallDuration(true))
	reg, clk := newRegistry(t, h)
	call, err := resilience.Wrap1(reg, "API.Get", func(ctx context.Context, s step) (string, error) {
		clk.Advance(s.d)
		return "", s.err
	}, resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Hour)))
	require.NoError(t, err)
	ctx := context.Background()
	_, _ = call(ctx, step{250 * time.Millisecond, nil})
	_, _ = call(ctx, step{time.Second, errBoom})
	_, _ = call(ctx, step{time.Second, nil}) // rejected: the function does not run
	c := h.collect()
	n, sum := c.hist(resilienceotel.CallDuration, "name=API.Get", "outcome=succeeded")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 0.25, sum)
	n, sum = c.hist(resilienceotel.CallDuration, "name=API.Get", "outcome=failed")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 1.0, sum)
	n, sum = c.hist(resilienceotel.CallDuration, "name=API.Get", "outcome=rejected")
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 0.0, sum)
}

// OB-2: waiting_calls is the number of calls that wait for a reserved permit, read from
// the limiter's snapshot at collection: two scheduled, then none once both started.
func TestOB2_RateLimiterWaitingCalls(t *testing.T) {
	h := newHarness(t)
	reg, clk := newRegistry(t, h)
	call, err := resilience.WrapAsync(reg, "API.Queue", func(context.Context) *async.Future[string] { return async.Completed("ok") },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second)))
	require.NoError(t, err)
	ctx := t.Context()
	futures := []*async.Future[string]{call(ctx), call(ctx), call(ctx)}
	assert.Equal(t, int64(2), h.collect().int(RateLimiterWaitingCalls, "name=API.Queue"))
	clk.Advance(2 * time.Second)
	for _, f := range futures {
		_, err := f.Await(ctx)
		require.NoError(t, err)
	}
	c := h.collect()
	assert.Equal(t, int64(0), c.int(RateLimiterWaitingCalls, "name=API.Queue"))
	assert.Equal(t, int64(2), c.int(RateLimiterWaitedCalls, "name=API.Queue"))
}
