package ratelimit_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
	"github.com/resilience4go/resilience4go/resilience"
)

func newLimiter(t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.Name("test")}, opts...)...)
	require.NoError(t, err)
	return l
}

// admitted counts how many TryAcquire calls pass in a row at the current instant.
func admitted(l *ratelimit.Limiter, atMost int) int {
	n := 0
	for n < atMost && l.TryAcquire() {
		n++
	}
	return n
}

// SPEC RL-3, RL-4, RL-6: the seed's scenario. Ten calls pass, the eleventh is rejected,
// and 100ms later exactly one more passes.
func TestRL3_SeedScenario_BurstThenOnePer100ms(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))

	for i := range 10 {
		require.True(t, l.TryAcquire(), "call %d of the burst", i+1)
	}
	assert.False(t, l.TryAcquire(), "the 11th call")

	clk.Advance(100 * time.Millisecond)
	assert.True(t, l.TryAcquire(), "one permit every 1s/10")
	assert.False(t, l.TryAcquire(), "and only one")
}

// SPEC RL-3: unused permits accumulate up to Permits, never more.
func TestRL3_BurstNeverExceedsPermits(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(7), ratelimit.Period(700*time.Millisecond))
	clk.Advance(time.Hour)
	assert.Equal(t, 7, admitted(l, 100))
	clk.Advance(350 * time.Millisecond) // half a period: 3.5 permits' worth
	assert.Equal(t, 3, admitted(l, 100))
	clk.Advance(10 * time.Second)
	assert.Equal(t, 7, admitted(l, 100))
}

// SPEC RL-4: after the burst, one call every T.
func TestRL4_SteadyRate(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(4), ratelimit.Period(time.Second)) // T = 250ms
	require.Equal(t, 4, admitted(l, 10))
	for i := range 20 {
		clk.Advance(249 * time.Millisecond)
		require.False(t, l.TryAcquire(), "step %d: 1ns early", i)
		clk.Advance(time.Millisecond)
		require.True(t, l.TryAcquire(), "step %d: on time", i)
		require.False(t, l.TryAcquire(), "step %d: only one", i)
	}
}

// SPEC RL-2: T is rounded up: with 3 permits per second the 4th permit comes after
// 333,333,334ns, not 333,333,333ns.
func TestRL2_EmissionIntervalRoundedUp(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(3), ratelimit.Period(time.Second))
	assert.Equal(t, 333_333_334*time.Nanosecond, gcra.Interval(l.Config().Permits, l.Config().Period))
	require.Equal(t, 3, admitted(l, 10))
	clk.Advance(333_333_333)
	assert.False(t, l.TryAcquire())
	clk.Advance(1)
	assert.True(t, l.TryAcquire())
}

// SPEC RL-2: with 600,000 permits per millisecond T ≈ 1.67ns rounds up to 2ns, so 1,000
// permits after the burst take at least 1,667ns: rounding never over-admits.
func TestRL2_TinyIntervalNeverOverAdmits(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(600_000), ratelimit.Period(time.Millisecond))
	require.Equal(t, 600_000, admitted(l, 700_000))
	start := clk.Now()
	got := 0
	for got < 1000 {
		clk.Advance(1)
		got += admitted(l, 10)
	}
	elapsed := clk.Now() - start
	assert.GreaterOrEqual(t, elapsed, 1667*time.Nanosecond)
	assert.Equal(t, 1000, got)
}

// SPEC RL-5: a property test. Random arrivals on the manual clock, several configurations:
// every window [t_i, t_j] of admitted calls holds at most permits + floor(d/T) of them,
// and AvailablePermits stays within 0..permits.
func TestRL5_WindowBoundProperty(t *testing.T) {
	configs := []struct {
		permits int
		period  time.Duration
		maxWait time.Duration
	}{
		{1, time.Second, 0},
		{3, time.Second, 0},
		{10, time.Second, 500 * time.Millisecond},
		{7, 13 * time.Millisecond, 0},
		{50, 5 * time.Millisecond, 2 * time.Millisecond},
		{1000, time.Second, 0},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range configs {
		clk := clock.NewManual()
		l := newLimiter(t, clk, ratelimit.Permits(c.permits), ratelimit.Period(c.period), ratelimit.MaxWait(c.maxWait))
		T := gcra.Interval(l.Config().Permits, l.Config().Period)
		var times []time.Duration // the instants at which admitted calls hold their permit
		for range 3000 {
			clk.Advance(time.Duration(rng.Int64N(int64(3 * T))))
			switch rng.IntN(3) {
			case 0:
				if l.TryAcquire() {
					times = append(times, clk.Now())
				}
			default:
				if r, err := l.Reserve(); err == nil {
					if rng.IntN(4) == 0 {
						r.Cancel()
					} else {
						times = append(times, clk.Now()+r.Delay())
					}
				}
			}
			avail := l.Snapshot().AvailablePermits
			require.GreaterOrEqual(t, avail, 0)
			require.LessOrEqual(t, avail, c.permits)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		require.NotEmpty(t, times)
		for i := range times {
			for j := i; j < len(times); j++ {
				d := times[j] - times[i]
				if bound := c.permits + int(d/T); j-i+1 > bound {
					t.Fatalf("config %+v: %d calls in window %v..%v, bound %d", c, j-i+1, times[i], times[j], bound)
				}
			}
		}
	}
}

// SPEC RL-6: rejection is one preallocated error per limiter, matching ErrExceeded and
// carrying the instance id.
func TestRL6_RejectionIsOneErrorPerLimiter(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	require.NoError(t, l.Acquire(context.Background()))
	err1 := l.Acquire(context.Background())
	err2 := l.Acquire(context.Background())
	require.ErrorIs(t, err1, ratelimit.ErrExceeded)
	assert.Same(t, err1, err2)
	assert.Same(t, err1, l.Rejection())
	var ee *ratelimit.ExceededError
	require.ErrorAs(t, err1, &ee)
	assert.Equal(t, "test", ee.InstanceID())
	assert.Contains(t, err1.Error(), `"test"`)

	other := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	assert.NotSame(t, l.Rejection(), other.Rejection())
}

// SPEC RL-7, RL-9, RL-9b: permits=5, period=1s, maxWait=500ms. After the burst,
// reservations wait 200ms, then 400ms; the next is refused at once and reports 600ms.
// Cancelling one with a later one behind it frees its slot for the next call; cancelling
// the tail frees 400ms again.
func TestRL7_ReservationsWithinMaxWait(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(500*time.Millisecond))
	for range 5 {
		r, err := l.Reserve()
		require.NoError(t, err)
		require.Zero(t, r.Delay())
	}
	r200, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 200*time.Millisecond, r200.Delay())
	r400, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 400*time.Millisecond, r400.Delay())

	refused, err := l.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 600*time.Millisecond, refused.Delay(), "retry-after (RL-9b)")
	again, err := l.Reserve()
	require.Error(t, err, "a refusal reserved nothing")
	assert.Equal(t, 600*time.Millisecond, again.Delay())

	r200.Cancel() // r400 stands behind it: its 200ms slot stays free for the next call (RL-9)
	again200, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 200*time.Millisecond, again200.Delay())
	_, err = l.Reserve()
	require.Error(t, err, "the freed slot is taken once")

	r400.Cancel() // the tail: its 400ms slot is free again
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 400*time.Millisecond, r.Delay())
}

// SPEC RL-9: a reservation whose permit time has passed restores nothing.
func TestRL9_CancelAfterPermitTimeRestoresNothing(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	require.True(t, l.TryAcquire())
	r, err := l.Reserve()
	require.NoError(t, err)
	require.Equal(t, time.Second, r.Delay())
	clk.Advance(time.Second + 1)
	r.Cancel()
	assert.Equal(t, 0, l.Snapshot().AvailablePermits, "the permit was due and is spent")
	clk.Advance(time.Second - 1)
	assert.Equal(t, 1, l.Snapshot().AvailablePermits)
}

// SPEC RL-9: cancelling an immediate reservation at the same instant gives it back;
// cancelling a refused reservation does nothing.
func TestRL9_CancelImmediateAndRefused(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second))
	r, err := l.Reserve()
	require.NoError(t, err)
	require.Equal(t, 1, l.Snapshot().AvailablePermits)
	r.Cancel()
	assert.Equal(t, 2, l.Snapshot().AvailablePermits)

	require.Equal(t, 2, admitted(l, 5))
	refused, err := l.Reserve()
	require.Error(t, err)
	refused.Cancel()
	assert.Equal(t, 0, l.Snapshot().AvailablePermits)
	assert.False(t, l.TryAcquire())
}

// SPEC RL-9b: the retry-after is exact: a call made after it succeeds.
func TestRL9b_RetryAfterIsExact(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))
	require.Equal(t, 10, admitted(l, 20))
	clk.Advance(37 * time.Millisecond)
	r, err := l.Reserve()
	require.Error(t, err)
	assert.Equal(t, 63*time.Millisecond, r.Delay())
	clk.Advance(r.Delay() - 1)
	assert.False(t, l.TryAcquire())
	clk.Advance(1)
	assert.True(t, l.TryAcquire())
}

// SPEC RL-7, CL-2: Acquire waits for a permit within maxWait; on the manual clock the wait
// advances the clock.
func TestRL7_AcquireWaitsOnTheClock(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(500*time.Millisecond))
	ctx := context.Background()
	for range 5 {
		require.NoError(t, l.Acquire(ctx))
	}
	assert.Zero(t, clk.Now())
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, 200*time.Millisecond, clk.Now(), "waited for its permit")
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, 400*time.Millisecond, clk.Now())
}

// SPEC RL-7: a call that would wait longer than maxWait is rejected at once, unreserved.
func TestRL7_TooLongAWaitIsRejectedAtOnce(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(999*time.Millisecond))
	require.NoError(t, l.Acquire(context.Background()))
	err := l.Acquire(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Zero(t, clk.Now(), "no waiting")
	clk.Advance(time.Millisecond)
	require.NoError(t, l.Acquire(context.Background()), "nothing was reserved by the refusal")
	assert.Equal(t, time.Second, clk.Now())
}

// SPEC RL-8: a context that is already done reserves nothing.
func TestRL8_DoneContextReservesNothing(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Acquire(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, l.Snapshot().AvailablePermits)
}

// SPEC RL-8: a deadline that comes before the permit is rejected at once, without
// reserving and without a timer.
func TestRL8_DeadlineBeforePermitIsRejectedAtOnce(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second))
	require.True(t, l.TryAcquire())
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := l.Acquire(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, clk.Now(), "did not wait")
	assert.Zero(t, clk.PendingTasks(), "no timer")
	r, rerr := l.Reserve()
	require.NoError(t, rerr)
	assert.Equal(t, time.Second, r.Delay(), "nothing was reserved")
}

// blockingClock is a manual clock whose Sleep blocks until its context ends, standing for
// a wait interrupted by the caller.
type blockingClock struct {
	*clock.Manual
	sleeping chan struct{}
}

func (b blockingClock) Sleep(ctx context.Context, _ time.Duration) error {
	close(b.sleeping)
	<-ctx.Done()
	return ctx.Err()
}

// SPEC RL-8, RL-9: cancelling a waiting Acquire gives the permit back, and the error
// matches both ErrExceeded and context.Canceled.
func TestRL8_CanceledWaitGivesPermitBack(t *testing.T) {
	clk := blockingClock{clock.NewManual(), make(chan struct{})}
	l := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	require.Equal(t, 5, admitted(l, 10))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Acquire(ctx) }()
	<-clk.sleeping
	cancel()
	err := <-done
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.Canceled)

	r, rerr := l.Reserve()
	require.NoError(t, rerr)
	assert.Equal(t, 200*time.Millisecond, r.Delay(), "the canceled wait's slot is free again")
}

// SPEC RL-10: a disabled limiter lets every call pass and changes no state.
func TestRL10_Disabled(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.Enabled(false))
	for range 1000 {
		require.True(t, l.TryAcquire())
		require.NoError(t, l.Acquire(context.Background()))
		r, err := l.Reserve()
		require.NoError(t, err)
		require.Zero(t, r.Delay())
		r.Cancel()
	}
	assert.Equal(t, 1, l.Snapshot().AvailablePermits)
	assert.True(t, l.Config().Disabled)
}

// SPEC RL-11: AvailablePermits and Snapshot.
func TestRL11_HandleAndSnapshot(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	assert.Equal(t, 10, l.Snapshot().AvailablePermits)
	require.Equal(t, 4, admitted(l, 4))
	assert.Equal(t, 6, l.Snapshot().AvailablePermits)
	clk.Advance(250 * time.Millisecond) // 2.5 permits back
	assert.Equal(t, 8, l.Snapshot().AvailablePermits)
	require.Equal(t, 8, admitted(l, 20))
	_, err := l.Reserve() // a reservation in the future: none available now
	require.NoError(t, err)
	assert.Equal(t, 0, l.Snapshot().AvailablePermits)
	assert.Equal(t, ratelimit.Snapshot{Instance: "test", AvailablePermits: 0, Permits: 10}, l.Snapshot())
	assert.Equal(t, "test", l.InstanceID())
	assert.Equal(t, ratelimit.Config{Permits: 10, Period: time.Second, MaxWait: time.Second}, l.Config())
}

// countingClock counts clock reads.
type countingClock struct {
	*clock.Manual
	reads atomic.Int64
}

func (c *countingClock) Now() time.Duration { c.reads.Add(1); return c.Manual.Now() }

// SPEC RL-12: each call reads the clock once.
func TestRL12_OneClockReadPerCall(t *testing.T) {
	clk := &countingClock{Manual: clock.NewManual()}
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	for name, call := range map[string]func(){
		"TryAcquire admitted": func() { l.TryAcquire() },
		"Acquire admitted":    func() { _ = l.Acquire(context.Background()) },
		"Reserve delayed":     func() { _, _ = l.Reserve() },
		"Reserve refused":     func() { _, _ = l.Reserve() },
		"TryAcquire refused":  func() { l.TryAcquire() },
	} {
		before := clk.reads.Load()
		call()
		assert.Equal(t, int64(1), clk.reads.Load()-before, name)
	}
}

// SPEC RL-13, RL-5: 8 goroutines hammer one limiter on the system clock for about 300ms
// (and at least 10 attempts per permit). They never exceed the window bound for the
// measured elapsed time, and the burst is always admitted. How much of the rest they get
// depends on how much of the 300ms the machine gave them; the exact count under
// contention is TestRL13_ContentionLosesNoPermit's, on a manual clock.
func TestRL13_ContentionKeepsTheBound(t *testing.T) {
	const permits = 1000
	period := 100 * time.Millisecond // T = 100µs
	l, err := ratelimit.New(ratelimit.Permits(permits), ratelimit.Period(period))
	require.NoError(t, err)
	T := gcra.Interval(l.Config().Permits, l.Config().Period)

	var count, attempts atomic.Int64
	var wg sync.WaitGroup
	start := sysclock.Now()
	stop := start + 300*time.Millisecond
	for range 8 {
		wg.Go(func() {
			for sysclock.Now() < stop || attempts.Load() < 10*permits {
				attempts.Add(1)
				if l.TryAcquire() {
					count.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := sysclock.Now() - start
	bound := int64(permits) + int64(elapsed/T)
	got := count.Load()
	assert.LessOrEqual(t, got, bound, "RL-5 over %v", elapsed)
	assert.GreaterOrEqual(t, got, int64(permits), "the burst is admitted: %d of %d attempts", got, attempts.Load())
}

// SPEC RL-13: contention loses no permit. 8 goroutines race for the permits of a manual
// clock that stands still: exactly the burst is admitted, however the goroutines
// interleave; after each Advance of k emission intervals, exactly k more.
func TestRL13_ContentionLosesNoPermit(t *testing.T) {
	const permits = 100
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Permits(permits), ratelimit.Period(100*time.Millisecond), ratelimit.WithClock(clk))
	require.NoError(t, err)
	T := gcra.Interval(l.Config().Permits, l.Config().Period)
	race := func() int64 {
		var count atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 4 * permits {
					if l.TryAcquire() {
						count.Add(1)
					}
				}
			})
		}
		wg.Wait()
		return count.Load()
	}
	require.Equal(t, int64(permits), race(), "the burst, exactly")
	for _, k := range []int64{1, 7, 50, permits} {
		clk.Advance(time.Duration(k) * T)
		require.Equal(t, k, race(), "after %d emission intervals", k)
	}
}

// SPEC RL-14: validation with codes, never a panic.
func TestRL14_Validation(t *testing.T) {
	cases := []struct {
		name string
		opts []ratelimit.Option
		code string
	}{
		{"no permits", []ratelimit.Option{ratelimit.Period(time.Second)}, r4c.BadPermits},
		{"permits 0", []ratelimit.Option{ratelimit.Permits(0), ratelimit.Period(time.Second)}, r4c.BadPermits},
		{"permits negative", []ratelimit.Option{ratelimit.Permits(-3), ratelimit.Period(time.Second)}, r4c.BadPermits},
		{"no period", []ratelimit.Option{ratelimit.Permits(1)}, r4c.ZeroPeriod},
		{"negative period", []ratelimit.Option{ratelimit.Permits(1), ratelimit.Period(-time.Second)}, r4c.ZeroPeriod},
		{"period below 1ns per permit", []ratelimit.Option{ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second - 1)}, r4c.PeriodTooShort},
		{"negative maxWait", []ratelimit.Option{ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(-1)}, r4c.NegativeDuration},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := ratelimit.New(c.opts...)
			require.Nil(t, l)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.code, ce.Code)
			assert.Regexp(t, "^"+c.code+": ", err.Error())
		})
	}
	_, err := ratelimit.New(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	assert.NoError(t, err, "1ns per permit is the limit, and allowed")
}

// SPEC RL-14: through a registry's configuration, an explicit 0 is reported as a wrong
// value, with the text the configuration gave, under the full key; a period never set is
// "not set" (fault: period=0, -0 and 0.5ns said "is not set").
func TestRL14_ZeroPeriodInConfigurationIsAWrongValue(t *testing.T) {
	for _, value := range []string{"0", "-0", "0.5ns"} {
		t.Run(value, func(t *testing.T) {
			_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{
				"configs.quota.rateLimiter.permits": "5",
				"configs.quota.rateLimiter.period":  value,
			}))
			require.Equal(t, r4c.ZeroPeriod, r4c.CodeOf(err))
			assert.ErrorContains(t, err, `configs.quota.rateLimiter.period = "`+value+`": period must be positive`)
			assert.NotContains(t, err.Error(), "not set")

			reg, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{
				"instances.API.Call.rateLimiter.period": value,
			}))
			require.NoError(t, err)
			_, err = resilience.Wrap(reg, "API.Call", func(context.Context) (int, error) { return 1, nil },
				resilience.RateLimiter(ratelimit.Permits(5)))
			require.Equal(t, r4c.ZeroPeriod, r4c.CodeOf(err))
			assert.ErrorContains(t, err, `rateLimiter.period = "`+value+`": period must be positive`)
		})
	}
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "API.Call", func(context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Permits(5)))
	assert.ErrorContains(t, err, "period is not set")
}

// SPEC RL-14: extreme values never overflow: the largest period, a billion permits.
func TestRL14_ExtremesDoNotOverflow(t *testing.T) {
	maxD := time.Duration(math.MaxInt64)
	t.Run("one permit per largest period", func(t *testing.T) {
		clk := clock.NewManual()
		clk.Advance(time.Hour)
		l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(maxD), ratelimit.MaxWait(time.Hour))
		assert.Equal(t, maxD, gcra.Interval(l.Config().Permits, l.Config().Period))
		require.True(t, l.TryAcquire())
		assert.False(t, l.TryAcquire(), "the saturated TAT still rejects")
		for range 100 {
			r, err := l.Reserve()
			require.ErrorIs(t, err, ratelimit.ErrExceeded, "a saturated TAT never admits twice (RL-5)")
			assert.Equal(t, maxD, r.Delay(), "retry-after: beyond the largest Duration")
		}
		clk.Advance(maxD)
		assert.False(t, l.TryAcquire(), "a saturated TAT refuses for ever")
		assert.Zero(t, l.Snapshot().AvailablePermits, "and says so")
	})
	t.Run("largest maxWait", func(t *testing.T) {
		clk := clock.NewManual()
		l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(maxD), ratelimit.MaxWait(maxD))
		r1, err := l.Reserve()
		require.NoError(t, err)
		r2, err := l.Reserve()
		require.NoError(t, err, "the burst of 2, though the second moves the TAT past the largest Duration")
		assert.Zero(t, r2.Delay())
		for range 100 {
			_, err = l.Reserve()
			require.ErrorIs(t, err, ratelimit.ErrExceeded, "never more than RL-5 allows, even with the largest maxWait")
		}
		r2.Cancel() // the tail: its permit comes back
		assert.Equal(t, 1, l.Snapshot().AvailablePermits)
		r1.Cancel()
		assert.Equal(t, 2, l.Snapshot().AvailablePermits)
	})
	t.Run("a billion permits over the largest period", func(t *testing.T) {
		clk := clock.NewManual()
		l := newLimiter(t, clk, ratelimit.Permits(1_000_000_000), ratelimit.Period(maxD), ratelimit.MaxWait(maxD))
		assert.Equal(t, 1_000_000_000, l.Snapshot().AvailablePermits)
		require.Equal(t, 1000, admitted(l, 1000))
		assert.Equal(t, 1_000_000_000-1000, l.Snapshot().AvailablePermits)
		clk.Advance(maxD)
		assert.Equal(t, 1_000_000_000, l.Snapshot().AvailablePermits)
	})
	t.Run("a billion permits per second", func(t *testing.T) {
		clk := clock.NewManual()
		l := newLimiter(t, clk, ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second), ratelimit.MaxWait(maxD))
		assert.Equal(t, time.Nanosecond, gcra.Interval(l.Config().Permits, l.Config().Period))
		require.Equal(t, 1000, admitted(l, 1000))
		clk.Advance(500)
		assert.Equal(t, 1_000_000_000-500, l.Snapshot().AvailablePermits)
	})
}

// SPEC RL-9b: with a period and maxWait near the largest Duration, and at the end of the
// clock, every retry-after and delay saturates at the largest Duration, never wraps
// negative, in the results and in the events (fault: computed durations could overflow).
func TestRL9b_RetryAfterSaturates(t *testing.T) {
	maxD := time.Duration(math.MaxInt64)
	for _, c := range []struct {
		name   string
		start  time.Duration
		period time.Duration
	}{
		{"largest period", time.Hour, maxD},
		{"largest period minus 1ns", 0, maxD - 1},
		{"end of the clock", maxD - time.Second, time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewManual()
			clk.AdvanceTo(c.start)
			var events []policy.Event
			l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(c.period), ratelimit.MaxWait(maxD),
				ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
			r1, err := l.Reserve()
			require.NoError(t, err)
			r, err := l.Reserve()
			if err == nil {
				assert.Positive(t, r.Delay())
				r.Cancel()
			}
			for range 3 {
				r, err = l.Reserve()
				if err != nil {
					assert.Positive(t, r.Delay())
				}
				r.Cancel()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				require.ErrorIs(t, l.Acquire(ctx), ratelimit.ErrExceeded, "its permit is more than a minute away")
				call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
				f := call(ctx, 1)
				cancel()
				if _, done, err := f.Result(); done {
					assert.ErrorIs(t, err, ratelimit.ErrExceeded)
				} else {
					f.Cancel()
				}
			}
			for _, e := range events {
				assert.GreaterOrEqual(t, e.RetryAfter, time.Duration(0), "%v", e)
				assert.GreaterOrEqual(t, e.Wait, time.Duration(0), "%v", e)
				if e.Kind == ratelimit.EventRejected {
					assert.Positive(t, e.RetryAfter, "%v", e)
				}
			}
			r1.Cancel()
			assert.Equal(t, 1, l.Snapshot().AvailablePermits, "the first permit, the tail, is given back")
		})
	}
}

// SPEC RL-5: near the end of the representable time, the TAT saturates and refuses; it
// never admits the same permit twice.
func TestRL5_SaturatedTATNeverAdmitsTwice(t *testing.T) {
	clk := clock.NewManual()
	clk.AdvanceTo(time.Duration(math.MaxInt64) - 10*time.Second)
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Hour))
	n := 0
	for range 1000 {
		if _, err := l.Reserve(); err == nil {
			n++
		}
	}
	assert.LessOrEqual(t, n, 11, "1 at once and one per second for the 10s left")
	assert.GreaterOrEqual(t, n, 10)
}

// SPEC RL-16: maxWait defaults to 0, and Permits and Period must be set.
func TestRL16_Defaults(t *testing.T) {
	cfg := newLimiter(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second)).Config()
	assert.Zero(t, cfg.MaxWait)
	assert.False(t, cfg.Disabled, "enabled by default")
	l := newLimiter(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	require.True(t, l.TryAcquire())
	err := l.Acquire(context.Background())
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "no waiting by default")
}

// SPEC RG-5: rejections and waits publish events; admitted calls publish nothing.
func TestRG5_LimiterEvents(t *testing.T) {
	clk := clock.NewManual()
	var events []policy.Event
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	require.True(t, l.TryAcquire())
	assert.Empty(t, events, "admitted calls publish nothing")
	require.NoError(t, l.Acquire(context.Background())) // waits 1s
	require.False(t, l.TryAcquire())
	require.Len(t, events, 2)
	assert.Equal(t, policy.Event{Kind: ratelimit.EventWaited, Instance: "test", At: 0, Wait: time.Second}, events[0])
	assert.Equal(t, ratelimit.EventRejected, events[1].Kind)
	assert.Equal(t, time.Second, events[1].At)
	assert.Equal(t, time.Second, events[1].RetryAfter, "the retry-after")
	assert.Zero(t, events[1].Wait, "a rejected call is not held")
	assert.ErrorIs(t, events[1].Err, ratelimit.ErrExceeded)
}

// SPEC RL-6, RL-7: the hot paths allocate nothing, admitted or rejected.
func TestRL6_ZeroAllocations(t *testing.T) {
	ctx := context.Background()
	admitting, err := ratelimit.New(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	require.NoError(t, err)
	rejecting, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(time.Minute))
	require.NoError(t, err)
	rejecting.TryAcquire()
	for name, f := range map[string]func(){
		"TryAcquire admitted": func() { admitting.TryAcquire() },
		"TryAcquire rejected": func() { rejecting.TryAcquire() },
		"Acquire admitted":    func() { _ = admitting.Acquire(ctx) },
		"Acquire rejected":    func() { _ = rejecting.Acquire(ctx) },
		"Reserve admitted":    func() { _, _ = admitting.Reserve() },
		"Reserve rejected":    func() { _, _ = rejecting.Reserve() },
	} {
		assert.Zero(t, testing.AllocsPerRun(1000, f), name)
	}
	assert.False(t, rejecting.TryAcquire(), "still rejecting")
}

// Errors from a context that ended are distinct values that still match ErrExceeded.
func TestExceededErrorMatchesContextErrors(t *testing.T) {
	l := newLimiter(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Acquire(ctx)
	assert.True(t, errors.Is(err, ratelimit.ErrExceeded) && errors.Is(err, context.Canceled))
	assert.False(t, errors.Is(err, context.DeadlineExceeded))
	assert.False(t, errors.Is(l.Rejection(), context.Canceled))
}
