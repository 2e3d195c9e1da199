package circuitbreaker

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
)

// These tests cover the closed-state path without a slow-call threshold (the default):
// calls are not measured, a success found clean is recorded by the flag alone, and the
// clock is read only when an outcome needs the time.

// CB-SLOW-OFF: without a threshold no call is slow, however long it takes, so the
// slow-call rate never opens the breaker; the same calls with a threshold are slow.
func TestCB1_LongCallsAreNotSlowWithoutThreshold(t *testing.T) {
	for _, threshold := range []time.Duration{0, time.Second} {
		clk := clock.NewManual()
		b, err := New(WithClock(clk), SlowCallThreshold(threshold), SlowCallRateThreshold(1),
			SlidingWindowSize(4), MinimumCalls(4))
		require.NoError(t, err)
		call := DecorateFunc(b, func(ctx context.Context, _ int) (int, error) {
			return 0, clk.Sleep(ctx, time.Hour)
		})
		for range 4 {
			_, err := call(context.Background(), 0)
			require.NoError(t, err)
		}
		if threshold == 0 {
			assert.Equal(t, Closed, b.State())
			assert.Zero(t, b.Snapshot().SlowCalls)
			assert.Equal(t, 4, b.Snapshot().BufferedCalls)
		} else {
			assert.Equal(t, Open, b.State(), "the same calls are slow with a threshold")
			assert.Equal(t, 4, b.Snapshot().SlowCalls)
		}
	}
}

// CB-SLOW-OFF: a threshold set by Reconfigure applies to the calls admitted after it: a
// call admitted before, without one, is neither measured nor slow when it ends; the
// calls admitted after are measured (two clock reads) and slow when above it.
func TestCB1_ReconfiguredThresholdAppliesToLaterCalls(t *testing.T) {
	clk := clock.NewManual()
	cc := &countingClock{Clock: clk}
	b, err := New(WithClock(cc), SlidingWindowSize(10), MinimumCalls(10))
	require.NoError(t, err)
	started := make(chan struct{})
	release := make(chan struct{})
	call := DecorateFunc(b, func(_ context.Context, d time.Duration) (int, error) {
		if d < 0 {
			close(started)
			<-release
			return 0, nil
		}
		clk.Advance(d)
		return 0, nil
	})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = call(context.Background(), -1) }) // admitted without a threshold
	<-started
	c := b.Config()
	c.SlowCallThreshold = time.Second
	require.NoError(t, b.Reconfigure(c))
	clk.Advance(time.Hour)
	close(release)
	wg.Wait()
	assert.Zero(t, b.Snapshot().SlowCalls, "admitted without a threshold: not slow")

	cc.reads.Store(0)
	_, _ = call(context.Background(), 2*time.Second)
	assert.Equal(t, int64(2), cc.reads.Load(), "admitted with a threshold: start and end")
	assert.Equal(t, 1, b.Snapshot().SlowCalls)

	c.SlowCallThreshold = 0
	require.NoError(t, b.Reconfigure(c))
	cc.reads.Store(0)
	_, _ = call(context.Background(), 2*time.Second)
	assert.Equal(t, int64(1), cc.reads.Load(), "threshold off again: the end only, on a clock that is not the system's")
	assert.Equal(t, 1, b.Snapshot().SlowCalls)
	assert.Equal(t, 3, b.Snapshot().BufferedCalls)
}

// countingClock counts the reads of a clock (kindtest.CountingClock cannot be used by
// the package's own tests).
type countingClock struct {
	clock.Clock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Duration {
	c.reads.Add(1)
	return c.Clock.Now()
}

// CB-SLOW-OFF: with the system clock and no threshold, a count-based window records
// outcomes without reading the clock, but for a transition to open, which reads it under
// the mutex: the breaker stays open WaitInOpen from then. The window agrees with a naive
// model of the last n outcomes throughout.
func TestCB3_SystemClockCountWindowMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const wait = time.Hour
	for _, size := range []int{1, 2, 3, 5, 10} {
		minCalls := max(size-1, 1)
		b, err := New(SlidingWindowSize(size), MinimumCalls(minCalls), FailureRateThreshold(40), WaitInOpen(wait),
			IgnoreOn(errCleanIgnored))
		require.NoError(t, err)
		require.True(t, b.system)
		require.True(t, b.cur.Load().lean)
		call := DecorateFunc(b, func(_ context.Context, err error) (int, error) { return 0, err })
		var naive []outcome
		opens := 0
		for i := range 3000 {
			var err error
			var o outcome
			switch r := rng.IntN(100); {
			case r < 6:
				err, o = errCleanBoom, failedBit
			case r < 8:
				err = errCleanIgnored
			}
			before := sysclock.Now()
			_, got := call(context.Background(), err)
			after := sysclock.Now()
			require.Equal(t, err, got)
			if err != errCleanIgnored {
				naive = append(naive, o)
				if len(naive) > size {
					naive = naive[1:]
				}
			}
			var want counts
			for _, n := range naive {
				want.add(n)
			}
			b.mu.Lock()
			require.Equal(t, want, b.win.total, "size %d, step %d", size, i)
			b.mu.Unlock()
			checkClean(t, b)
			if want.calls >= minCalls && b.cur.Load().exceeded(want) {
				opens++
				require.Equal(t, Open, b.State(), "size %d, step %d", size, i)
				until := time.Duration(b.openUntil.Load())
				require.GreaterOrEqual(t, until, before+wait)
				require.LessOrEqual(t, until, after+wait)
				b.Reset()
				naive = naive[:0]
			} else {
				require.Equal(t, Closed, b.State(), "size %d, step %d", size, i)
			}
		}
		assert.Positive(t, opens, "size %d: the breaker opened", size)
	}
}

// CB-SLOW-OFF: many goroutines on the system clock without a threshold, mostly taking
// the lean path, with failures and transitions by hand: the flag always agrees with the
// window, transitions chain, and the ring is exact once the calls are over.
func TestCB3_ConcurrentLeanPathStress(t *testing.T) {
	const size = 16
	var (
		mu  sync.Mutex
		trs []policy.Event
	)
	b, err := New(SlidingWindowSize(size), MinimumCalls(size), FailureRateThreshold(25), WaitInOpen(time.Microsecond),
		PermittedInHalfOpen(2), IgnoreOn(errCleanIgnored), OnEvent(func(e policy.Event) {
			if e.Kind == EventTransition {
				mu.Lock()
				trs = append(trs, e)
				mu.Unlock()
			}
		}))
	require.NoError(t, err)
	call := DecorateFunc(b, func(_ context.Context, r int) (int, error) {
		switch {
		case r < 5:
			return r, errCleanBoom
		case r < 6:
			return r, errCleanIgnored
		}
		return r, nil
	})
	var stop atomic.Bool
	var checkers, callers sync.WaitGroup
	checkers.Go(func() {
		for !stop.Load() {
			checkClean(t, b)
		}
	})
	var cleanSeen atomic.Int64
	for g := range 8 {
		callers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for i := range 5000 {
				if g == 0 && i%1200 == 0 {
					_ = b.TransitionTo(ForcedOpen)
					b.Reset()
				}
				if b.clean.Load() {
					cleanSeen.Add(1)
				}
				_, _ = call(context.Background(), rng.IntN(100))
			}
		})
	}
	callers.Wait()
	stop.Store(true)
	checkers.Wait()

	requireTransitionsChain(t, &mu, &trs, b)
	assert.Positive(t, cleanSeen.Load(), "the window was clean at times")

	b.Reset()
	for range size {
		_, _ = call(context.Background(), 99)
	}
	require.True(t, b.clean.Load())
	_, _ = call(context.Background(), 0)
	for range size - 1 {
		_, _ = call(context.Background(), 99)
	}
	b.mu.Lock()
	assert.Equal(t, counts{calls: size, failed: 1}, b.win.total)
	b.mu.Unlock()
	_, _ = call(context.Background(), 99)
	b.mu.Lock()
	assert.Equal(t, counts{calls: size}, b.win.total)
	b.mu.Unlock()
	checkClean(t, b)
}

// CB-SLOW-OFF: a time-based window without a threshold reads the clock once per
// outcome, at its end, and buckets it by that time.
func TestCB2_TimeWindowReadsTheEndOnly(t *testing.T) {
	clk := clock.NewManual()
	cc := &countingClock{Clock: clk}
	b, err := New(WithClock(cc), SlidingWindowType(TimeBased), SlidingWindowSize(2), MinimumCalls(100))
	require.NoError(t, err)
	call := DecorateFunc(b, func(_ context.Context, d time.Duration) (int, error) {
		clk.Advance(d)
		return 0, nil
	})
	cc.reads.Store(0)
	_, _ = call(context.Background(), 1500*time.Millisecond) // ends in second 1
	assert.Equal(t, int64(1), cc.reads.Load())
	_, _ = call(context.Background(), time.Second) // ends in second 2
	assert.Equal(t, 2, b.Snapshot().BufferedCalls)
	clk.Advance(time.Second) // second 3: the call that ended in second 1 drops out
	assert.Equal(t, 1, b.Snapshot().BufferedCalls)
}
