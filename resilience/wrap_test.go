package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func newRegistry(t testing.TB, opts ...resilience.RegistryOption) (*resilience.Registry, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(append([]resilience.RegistryOption{resilience.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	return reg, clk
}

func requireCode(t *testing.T, err error, code string) *policy.ConfigError {
	t.Helper()
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce, "want %s, got %v", code, err)
	require.Equal(t, code, ce.Code, "error: %v", err)
	require.Regexp(t, "^"+code+": ", err.Error())
	return ce
}

// The seed's SearchApi test, with Wrap1 (SPEC RL-3, RL-4, RL-6, CL-1).
func TestSeed_SearchAPIWithWrap1(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	search, err := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	require.NoError(t, err)

	for i := range 10 {
		_, err := search(ctx, fmt.Sprint("q", i))
		require.NoError(t, err, "a full burst of 10 is available at once")
	}
	_, err = search(ctx, "one too many")
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	clk.Advance(100 * time.Millisecond) // permits come back one every 1s / 10
	got, err := search(ctx, "next")
	require.NoError(t, err)
	assert.Equal(t, "results for next", got)
	_, err = search(ctx, "again")
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	var ee *ratelimit.ExceededError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "SearchAPI.Search", ee.InstanceID(), "without a name the id is the wrapped id (SPEC RG-1)")
}

// The seed's geocoding example: geocode (Wrap1) and reverse (Wrap2) share the limiter
// "geocoding", 5 per second with maxWait 500ms; the 6th call waits 200ms (SPEC RG-2, RL-7).
func TestSeed_GeocodingSharesOneLimiter(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	quota := resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(5),
		ratelimit.Period(time.Second), ratelimit.MaxWait(500*time.Millisecond))
	geocode, err := resilience.Wrap1(reg, "Geo.Geocode",
		func(ctx context.Context, address string) (string, error) { return "coords of " + address, nil }, quota)
	require.NoError(t, err)
	reverse, err := resilience.Wrap2(reg, "Geo.Reverse",
		func(ctx context.Context, lat, lon float64) (string, error) {
			return fmt.Sprintf("address at %.1f,%.1f", lat, lon), nil
		}, quota)
	require.NoError(t, err)

	for i := range 5 {
		if i%2 == 0 {
			_, err = geocode(ctx, "Main St")
		} else {
			_, err = reverse(ctx, 1, 2)
		}
		require.NoError(t, err)
	}
	assert.Zero(t, clk.Now())
	got, err := reverse(ctx, 40.4, -3.7)
	require.NoError(t, err)
	assert.Equal(t, "address at 40.4,-3.7", got)
	assert.Equal(t, 200*time.Millisecond, clk.Now(), "the 6th call waits 200ms (1s / 5)")

	h, err := reg.RateLimiter("geocoding")
	require.NoError(t, err)
	assert.Equal(t, "geocoding", h.Snapshot().Instance)
	assert.Len(t, reg.Snapshot().RateLimiters, 1, "one shared limiter")

	// Two functions under one name with different configurations: R4C-REG-008.
	_, err = resilience.Wrap1(reg, "Geo.Other", func(ctx context.Context, s string) (string, error) { return s, nil },
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(6), ratelimit.Period(time.Second)))
	requireCode(t, err, r4c.Conflict)
}

// The seed's Pipeline "search", its handle and the registry's snapshot (SPEC RG-3).
func TestSeed_PipelineHandleAndSnapshot(t *testing.T) {
	reg, _ := newRegistry(t)
	ctx := context.Background()
	search, err := resilience.NewPipeline[string](reg, "search",
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	results, err := search.Execute(ctx, func(ctx context.Context) (string, error) { return "results for resilience", nil })
	require.NoError(t, err)
	assert.Equal(t, "results for resilience", results)

	h, err := reg.RateLimiter("search")
	require.NoError(t, err)
	assert.Equal(t, 9, h.Snapshot().AvailablePermits)
	assert.Equal(t, ratelimit.Snapshot{Instance: "search", AvailablePermits: 9, Permits: 10}, h.Snapshot())
	assert.Equal(t, []ratelimit.Snapshot{{Instance: "search", AvailablePermits: 9, Permits: 10}}, reg.Snapshot().RateLimiters)

	f := search.ExecuteAsync(ctx, func(ctx context.Context) *async.Future[string] { return async.Completed("async") })
	v, err := f.Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "async", v)
	assert.Equal(t, 8, h.Snapshot().AvailablePermits, "sync and async share the pipeline's limiter")
}

// SPEC RG-3: an unknown id is R4C-REG-009; snapshots are sorted by id.
func TestRG3_UnknownIDAndSortedSnapshot(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := reg.RateLimiter("nope")
	ce := requireCode(t, err, r4c.UnknownInstance)
	assert.Equal(t, "nope", ce.Value)
	_, err = resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "nope")
	requireCode(t, err, r4c.UnknownInstance)
	_, err = resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "nope")
	requireCode(t, err, r4c.UnknownInstance)

	for _, id := range []string{"b", "c", "a"} {
		_, err := resilience.NewPipeline[int](reg, id, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
		require.NoError(t, err)
	}
	var ids []string
	for _, s := range reg.Snapshot().RateLimiters {
		ids = append(ids, s.Instance)
	}
	assert.Equal(t, []string{"a", "b", "c"}, ids)
}

// SPEC RL-15: two registries have their own limiters under the same id.
func TestRL15_RegistriesDoNotShare(t *testing.T) {
	ctx := context.Background()
	fn := func(ctx context.Context) (int, error) { return 1, nil }
	spec := resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour))
	r1, _ := newRegistry(t)
	r2, _ := newRegistry(t)
	c1, err := resilience.Wrap(r1, "x", fn, spec)
	require.NoError(t, err)
	c2, err := resilience.Wrap(r2, "x", fn, spec)
	require.NoError(t, err)
	_, err = c1(ctx)
	require.NoError(t, err)
	_, err = c2(ctx)
	require.NoError(t, err, "r2's limiter is its own")
}

// An empty id is R4C-REG-010 from every way of wrapping, and registers nothing: no
// configuration key can name it, and its policies would go by their kinds' default ids.
// (Fault: Wrap accepted it, registered the limiter under "" while its rejections named
// "ratelimiter".)
func TestWrap_EmptyIDIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	spec := resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour))
	fn := func(context.Context) (int, error) { return 1, nil }
	_, err := resilience.Wrap(reg, "", fn, spec)
	requireCode(t, err, r4c.BadSpec)
	assert.Contains(t, err.Error(), "the instance id is empty")
	_, err = resilience.Wrap1(reg, "", func(context.Context, int) (int, error) { return 1, nil }, spec)
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.WrapAsync(reg, "", func(context.Context) *async.Future[int] { return async.Completed(1) }, spec)
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.NewPipeline[int](reg, "", spec)
	requireCode(t, err, r4c.BadSpec)
	assert.Empty(t, reg.Snapshot().RateLimiters)
	_, err = reg.RateLimiter("")
	requireCode(t, err, r4c.UnknownInstance)
}

// Two functions wrapped with one id share the instances of its policies that have no
// Name: one limiter's permits, one breaker's window.
func TestWrap_OneIDTwoFunctionsShareItsInstances(t *testing.T) {
	reg, _ := newRegistry(t)
	ctx := context.Background()
	spec := resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour))
	a, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (string, error) { return "a", nil }, spec)
	require.NoError(t, err)
	b, err := resilience.Wrap(reg, "Svc.Call", func(context.Context) (string, error) { return "b", nil }, spec)
	require.NoError(t, err)
	v, err := a(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a", v)
	_, err = b(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded, "a took the one permit of the shared limiter")
	assert.Len(t, reg.Snapshot().RateLimiters, 1)
}

// SPEC AS-2: permits=1, period=1s, maxWait=5s. A second call returns a pending future at
// once, PendingTasks is 1, and Advance(1s) completes it.
func TestAS2_WrapAsyncSchedulesTheWaitingCall(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	var calls atomic.Int64
	geocode, err := resilience.WrapAsync1(reg, "Geo.GeocodeAsync",
		func(ctx context.Context, address string) *async.Future[string] {
			calls.Add(1)
			return async.Completed("coords of " + address)
		},
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second)))
	require.NoError(t, err)

	_, err = geocode(ctx, "first").Await(ctx)
	require.NoError(t, err)
	f := geocode(ctx, "second")
	_, done, _ := f.Result()
	assert.False(t, done)
	assert.Equal(t, 1, clk.PendingTasks())
	clk.Advance(time.Second)
	v, ok, err := f.Result()
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, "coords of second", v)
	assert.Equal(t, int64(2), calls.Load())
}

// SPEC AS-2: 1,000 waiting async calls hold no goroutines.
func TestAS2_ThousandWaitingCallsNoGoroutines(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	call, err := resilience.WrapAsync(reg, "Async.Call",
		func(ctx context.Context) *async.Future[int] { return async.Completed(7) },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Hour)))
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	futures := make([]*async.Future[int], 1000)
	for i := range futures {
		futures[i] = call(ctx)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine per waiting call")
	assert.Equal(t, 999, clk.PendingTasks())
	clk.Advance(time.Hour)
	for _, f := range futures {
		v, ok, err := f.Result()
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, 7, v)
	}
}

// SPEC AS-3: Cancel before the start returns true, the function never runs and the permit
// comes back: the next call gets the canceled slot.
func TestAS3_WrapAsyncCancelGivesThePermitBack(t *testing.T) {
	reg, clk := newRegistry(t)
	ctx := context.Background()
	var started []string
	call, err := resilience.WrapAsync1(reg, "Async.Call",
		func(ctx context.Context, name string) *async.Future[string] {
			started = append(started, name)
			return async.Completed(name)
		},
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second)))
	require.NoError(t, err)
	_, err = call(ctx, "a").Await(ctx)
	require.NoError(t, err)
	b := call(ctx, "b") // scheduled at 1s
	require.True(t, b.Cancel())
	c := call(ctx, "c") // takes b's slot: 1s, not 2s
	clk.Advance(time.Second)
	v, ok, err := c.Result()
	require.True(t, ok, "c got the canceled slot")
	require.NoError(t, err)
	assert.Equal(t, "c", v)
	clk.Advance(10 * time.Second)
	assert.Equal(t, []string{"a", "c"}, started, "b never ran")
	_, err = b.Await(ctx)
	assert.ErrorIs(t, err, async.ErrCanceled)
}

// SPEC AS-1: a rejection is a failed future.
func TestAS1_WrapAsyncRejectionIsAFailedFuture(t *testing.T) {
	reg, _ := newRegistry(t)
	ctx := context.Background()
	call, err := resilience.WrapAsync(reg, "Async.Call",
		func(ctx context.Context) *async.Future[int] { return async.Completed(1) },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, err = call(ctx).Await(ctx)
	require.NoError(t, err)
	_, ok, err := call(ctx).Result()
	require.True(t, ok, "completed at once")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
}

// SPEC RG-5: rejections and waits reach the registry's listeners; admitted calls publish
// nothing.
func TestRG5_EventsReachListeners(t *testing.T) {
	var events []policy.Event
	reg, _ := newRegistry(t, resilience.WithEventListener(func(e policy.Event) { events = append(events, e) }))
	ctx := context.Background()
	call, err := resilience.Wrap(reg, "Events.Call", func(ctx context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second)))
	require.NoError(t, err)
	_, err = call(ctx)
	require.NoError(t, err)
	assert.Empty(t, events, "admitted calls publish nothing")
	_, err = call(ctx) // waits 1s
	require.NoError(t, err)
	_, err = call(ctx) // would wait 1s: fine, waits again
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, ratelimit.EventWaited, events[0].Kind)
	assert.Equal(t, "Events.Call", events[0].Instance)
	assert.Equal(t, time.Second, events[0].Wait)

	reject, err := resilience.Wrap(reg, "Events.Reject", func(ctx context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	_, _ = reject(ctx)
	_, err = reject(ctx)
	require.Error(t, err)
	require.Len(t, events, 3)
	assert.Equal(t, ratelimit.EventRejected, events[2].Kind)
	assert.Equal(t, "Events.Reject", events[2].Instance)
	assert.ErrorIs(t, events[2].Err, ratelimit.ErrExceeded)
}

// A Fallback whose result type does not match the function is refused with R4C-REG-010,
// not a panic, and a failed wrap registers nothing.
func TestFallbackTypeMismatchIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := resilience.Wrap1(reg, "Typed.Call",
		func(ctx context.Context, q string) (string, error) { return q, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)),
		resilience.Fallback(func(ctx context.Context, err error) (int, error) { return 0, nil }))
	ce := requireCode(t, err, r4c.BadSpec)
	assert.Contains(t, ce.Reason, "int")
	assert.Contains(t, ce.Reason, "string")
	_, err = reg.RateLimiter("Typed.Call")
	requireCode(t, err, r4c.UnknownInstance)

	ok, err := resilience.Wrap1(reg, "Typed.Call",
		func(ctx context.Context, q string) (string, error) { return "", ratelimit.ErrExceeded },
		resilience.Fallback(func(ctx context.Context, err error) (string, error) { return "cached", nil }))
	require.NoError(t, err)
	v, err := ok(context.Background(), "q")
	require.NoError(t, err)
	assert.Equal(t, "cached", v)
}

// A layer given twice is refused with R4C-REG-010.
func TestLayerGivenTwiceIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := resilience.Wrap(reg, "Twice", func(ctx context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)),
		resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Second)))
	requireCode(t, err, r4c.BadSpec)
}

// An invalid configuration in code fails the wrap with the attribute's code.
func TestInvalidSpecFailsTheWrap(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := resilience.Wrap(reg, "Bad", func(ctx context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(0), ratelimit.Period(time.Second)))
	requireCode(t, err, r4c.BadPermits)
	_, err = resilience.Wrap(reg, "Bad", func(ctx context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Millisecond)))
	requireCode(t, err, r4c.PeriodTooShort)
}

// Admitted and rejected calls through Wrap, Wrap1 and Wrap2 with a rate limiter allocate
// nothing: the composition is built once.
func TestWrapZeroAllocations(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	ctx := context.Background()
	admit := resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	reject := resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(1000*time.Hour))

	w0a, err := resilience.Wrap(reg, "w0a", func(ctx context.Context) (int, error) { return 1, nil }, admit)
	require.NoError(t, err)
	w0r, err := resilience.Wrap(reg, "w0r", func(ctx context.Context) (int, error) { return 1, nil }, reject)
	require.NoError(t, err)
	w1a, err := resilience.Wrap1(reg, "w1a", func(ctx context.Context, s string) (string, error) { return s, nil }, admit)
	require.NoError(t, err)
	w1r, err := resilience.Wrap1(reg, "w1r", func(ctx context.Context, s string) (string, error) { return s, nil }, reject)
	require.NoError(t, err)
	w2a, err := resilience.Wrap2(reg, "w2a", func(ctx context.Context, a, b float64) (float64, error) { return a + b, nil }, admit)
	require.NoError(t, err)
	w2r, err := resilience.Wrap2(reg, "w2r", func(ctx context.Context, a, b float64) (float64, error) { return a + b, nil }, reject)
	require.NoError(t, err)
	_, _ = w0r(ctx)
	_, _ = w1r(ctx, "x")
	_, _ = w2r(ctx, 1, 2)

	for name, f := range map[string]func(){
		"Wrap admitted":  func() { _, _ = w0a(ctx) },
		"Wrap rejected":  func() { _, _ = w0r(ctx) },
		"Wrap1 admitted": func() { _, _ = w1a(ctx, "q") },
		"Wrap1 rejected": func() { _, _ = w1r(ctx, "q") },
		"Wrap2 admitted": func() { _, _ = w2a(ctx, 1, 2) },
		"Wrap2 rejected": func() { _, _ = w2r(ctx, 1, 2) },
	} {
		assert.Zero(t, testing.AllocsPerRun(1000, f), name)
	}
	_, err = w1r(ctx, "q")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "the rejecting limiter still rejects")
}

// A nil registry or a nil function is a configuration error at wrap time, never a panic
// at the first call.
func TestWrap_NilRegistryOrFunctionIsRefused(t *testing.T) {
	fn := func(context.Context) (int, error) { return 1, nil }
	_, err := resilience.Wrap(nil, "F.Call", fn, resilience.Retry())
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.NewPipeline[int](nil, "F.Pipe")
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.Lookup[*retry.Retry](nil, retry.Layer, "F.Call")
	requireCode(t, err, r4c.UnknownInstance)
	var none *resilience.Registry
	_, err = none.RateLimiter("F.Call")
	requireCode(t, err, r4c.UnknownInstance)
	_, err = resilience.Lookup[*circuitbreaker.Breaker](none, circuitbreaker.Layer, "F.Call")
	requireCode(t, err, r4c.UnknownInstance)
	_, err = resilience.Lookup[*bulkhead.Bulkhead](none, bulkhead.Layer, "F.Call")
	requireCode(t, err, r4c.UnknownInstance)
	assert.Empty(t, none.UnusedKeys())
	assert.Empty(t, none.Snapshot().Policies)

	reg, _ := newRegistry(t)
	_, err = resilience.Wrap[int](reg, "F.Call", nil)
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.Wrap1[string, int](reg, "F.Call", nil)
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.Wrap2[string, string, int](reg, "F.Call", nil)
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.WrapAsync[int](reg, "F.Call", nil)
	requireCode(t, err, r4c.BadSpec)
	_, err = resilience.WrapAsync1[string, int](reg, "F.Call", nil)
	requireCode(t, err, r4c.BadSpec)
	assert.Empty(t, reg.Snapshot().Policies)
}

// Functions that share a name share error lists only when they hold the same error
// values: errors.Is matches by identity, so two errors with the same text differ. The
// same values are shared.
func TestRG2_SharedNameComparesReferencesByIdentity(t *testing.T) {
	reg, _ := newRegistry(t)
	fn := func(context.Context) (int, error) { return 0, nil }
	errA, errB := errors.New("unavailable"), errors.New("unavailable")
	_, err := resilience.Wrap(reg, "A.Call", fn, resilience.Retry(retry.Name("u"), retry.On(errA)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "B.Call", fn, resilience.Retry(retry.Name("u"), retry.On(errB)))
	requireCode(t, err, r4c.Conflict)
	_, err = resilience.Wrap(reg, "C.Call", fn, resilience.Retry(retry.Name("u"), retry.On(errA)))
	require.NoError(t, err, "the same error value")

	_, err = resilience.Wrap(reg, "A.Call", fn, resilience.CircuitBreaker(circuitbreaker.Name("b"), circuitbreaker.IgnoreOn(errA)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "B.Call", fn, resilience.CircuitBreaker(circuitbreaker.Name("b"), circuitbreaker.IgnoreOn(errB)))
	requireCode(t, err, r4c.Conflict)
}

// One Wrap costs the same however many wraps came before it: the bytes it allocates do
// not grow with them (fault: each wrap copied the record of every key and resolution used
// so far, so that n wraps took time and memory in n²). A failed wrap still uses no key.
func TestWrapCostDoesNotGrowWithEarlierWraps(t *testing.T) {
	reg, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{"configs.q.retry.maxAttempts": "2"}))
	require.NoError(t, err)
	ok := func(context.Context) (string, error) { return "ok", nil }
	wrapBytes := func(i int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := resilience.Wrap(reg, fmt.Sprint("Svc.M", i), ok, resilience.Retry())
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		return after.TotalAlloc - before.TotalAlloc
	}
	// The counter is the process's: another goroutine's allocations can only add to a
	// sample, so each figure is the least of five wraps.
	least := func(from int) uint64 {
		m := wrapBytes(from)
		for i := from + 1; i < from+5; i++ {
			m = min(m, wrapBytes(i))
		}
		return m
	}
	for i := range 100 {
		wrapBytes(i)
	}
	early := least(100)
	for i := 105; i < 5000; i++ {
		wrapBytes(i)
	}
	late := least(5000)
	assert.Less(t, late, 3*early, "wraps 5001-5005 allocated at least %d bytes, wraps 101-105 %d", late, early)

	_, err = resilience.Wrap(reg, "Svc.Bad", ok, resilience.Retry(retry.UseConfig("q")),
		resilience.RateLimiter(ratelimit.Permits(0), ratelimit.Period(time.Second)))
	require.Error(t, err, "a bad limiter, resolved after the retry: the wrap fails")
	assert.Equal(t, []string{"configs.q.retry.maxAttempts"}, reg.UnusedKeys(), "and uses no key")
}

// A layer given twice in one composition is R4C-REG-010, and builds nothing.
func TestWrap_LayerGivenTwiceIsRefused(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := resilience.Wrap(reg, "F.Twice", func(context.Context) (int, error) { return 0, nil },
		resilience.Retry(), resilience.Retry(retry.MaxAttempts(2)))
	ce := requireCode(t, err, r4c.BadSpec)
	assert.Contains(t, ce.Reason, "the retry layer is given twice")
	assert.Empty(t, reg.Snapshot().Policies)
}
