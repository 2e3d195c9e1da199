package adaptivelimit

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
)

const ms = float64(time.Millisecond)

// roundOf is a round of n samples of the given latency, with at most inFlight calls in
// flight, drops of them drops.
func roundOf(n int, latency time.Duration, inFlight, drops int) *round {
	r := &round{}
	for i := range n {
		r.add(latency, inFlight, i < drops)
	}
	return r
}

func TestRound(t *testing.T) {
	r := &round{}
	r.add(30*time.Millisecond, 4, false)
	r.add(10*time.Millisecond, 7, true)
	r.add(20*time.Millisecond, 5, false)
	assert.Equal(t, round{n: 3, drops: 1, sum: 60 * ms, maxInFlight: 7}, *r)
	assert.Equal(t, 20*ms, r.mean())
	assert.False(t, r.appLimited(14), "7 in flight use half of 14")
	assert.True(t, r.appLimited(14.5))
}

// SPEC AL-19: AIMD adds 1 after a round without a drop, multiplies by BackoffRatio after
// one with a drop, and holds when the round was app-limited (less than half the limit in
// flight).
func TestAIMD(t *testing.T) {
	a := newAlgorithm(Config{Algorithm: AIMD, BackoffRatio: 0.9, BaselineWindow: 1})
	assert.Equal(t, 21.0, a.next(20, roundOf(10, time.Millisecond, 10, 0)))
	assert.InDelta(t, 18.0, a.next(20, roundOf(10, time.Millisecond, 10, 3)), 1e-9, "one decrease, however many drops")
	assert.InDelta(t, 18.0, a.next(20, roundOf(10, time.Millisecond, 1, 1)), 1e-9, "a drop counts when app-limited too")
	assert.Equal(t, 20.0, a.next(20, roundOf(10, time.Millisecond, 9, 0)), "app-limited")
	assert.Zero(t, a.baseline())
}

// SPEC AL-19: Gradient2: limit·(1−s) + (limit·gradient + √limit)·s, the gradient being
// Tolerance·baseline/latency within [0.5, 1], the baseline the smallest round average of
// the window; app-limited rounds hold the limit (but count in the baseline).
func TestGradient2(t *testing.T) {
	g := newAlgorithm(Config{Algorithm: Gradient2, Tolerance: 1.5, Smoothing: 0.2, BaselineWindow: 50})
	// At the baseline: gradient 1.
	assert.InDelta(t, 20*0.8+(20+math.Sqrt(20))*0.2, g.next(20, roundOf(10, 10*time.Millisecond, 10, 0)), 1e-9)
	assert.Equal(t, 10*time.Millisecond, g.baseline())
	// 20ms against a 10ms baseline: gradient 1.5·10/20 = 0.75.
	assert.InDelta(t, 20*0.8+(20*0.75+math.Sqrt(20))*0.2, g.next(20, roundOf(10, 20*time.Millisecond, 10, 0)), 1e-9)
	// 100ms: the gradient stops at 0.5.
	assert.InDelta(t, 20*0.8+(20*0.5+math.Sqrt(20))*0.2, g.next(20, roundOf(10, 100*time.Millisecond, 10, 0)), 1e-9)
	// 14ms: within the tolerance, gradient 1.
	assert.InDelta(t, 20*0.8+(20+math.Sqrt(20))*0.2, g.next(20, roundOf(10, 14*time.Millisecond, 10, 0)), 1e-9)
	// App-limited: held, but a faster round lowers the baseline.
	assert.Equal(t, 20.0, g.next(20, roundOf(4, 5*time.Millisecond, 4, 0)))
	assert.Equal(t, 5*time.Millisecond, g.baseline())
	// Drops count by their latency only.
	assert.InDelta(t, 20*0.8+(20+math.Sqrt(20))*0.2, g.next(20, roundOf(10, 5*time.Millisecond, 10, 10)), 1e-9)
	// Zero latencies (a coarse clock) give a gradient of 1.
	z := newAlgorithm(Config{Algorithm: Gradient2, Tolerance: 1.5, Smoothing: 1, BaselineWindow: 50})
	assert.InDelta(t, 16+4, z.next(16, roundOf(10, 0, 10, 0)), 1e-9)
}

// SPEC AL-19: Vegas: the queue limit·(1 − baseline/latency) against lg = max(1,
// log10(limit)): at most lg adds 6·lg, below 3·lg adds lg, above 6·lg takes lg away,
// between holds; a drop takes lg away; app-limited rounds hold.
func TestVegas(t *testing.T) {
	v := newAlgorithm(Config{Algorithm: Vegas, BaselineWindow: 50})
	lg := math.Log10(100)
	at := func(latency time.Duration) float64 { return v.next(100, roundOf(60, latency, 60, 0)) }
	assert.InDelta(t, 100+6*lg, at(10*time.Millisecond), 1e-9, "no queue")
	assert.Equal(t, 10*time.Millisecond, v.baseline())
	// queue = 100·(1 − 10/latency): 10.2ms → 1.96 (≤ lg); 10.4ms → 3.8 (< 3·lg = 6);
	// 10.7ms → 6.5 (hold); 11.5ms → 13 (> 6·lg = 12).
	assert.InDelta(t, 100+6*lg, at(10200*time.Microsecond), 1e-9)
	assert.InDelta(t, 100+lg, at(10400*time.Microsecond), 1e-9)
	assert.Equal(t, 100.0, at(10700*time.Microsecond))
	assert.InDelta(t, 100-lg, at(11500*time.Microsecond), 1e-9)
	assert.InDelta(t, 100-lg, v.next(100, roundOf(60, 10*time.Millisecond, 60, 1)), 1e-9, "a drop")
	assert.Equal(t, 100.0, v.next(100, roundOf(60, 50*time.Millisecond, 49, 0)), "app-limited")
	// Below a limit of 10, lg is 1.
	assert.InDelta(t, 4+6, v.next(4, roundOf(4, 10*time.Millisecond, 4, 0)), 1e-9)
	assert.InDelta(t, 4-1, v.next(4, roundOf(4, 10*time.Millisecond, 4, 4)), 1e-9)
}

// SPEC AL-19: the baseline is the smallest round average of the last n to 2n rounds: it
// forgets a latency after at most 2n rounds, so that it follows a dependency that became
// slower for good.
func TestWindowedMin(t *testing.T) {
	w := newWindowedMin(3)
	assert.Equal(t, 5.0, w.add(5))
	for i := 1; i <= 5; i++ {
		assert.Equal(t, 5.0, w.add(9), "round %d after the 5", i)
	}
	assert.Equal(t, 9.0, w.add(9), "forgotten after 2n rounds")
	assert.Equal(t, 7.0, w.add(7))
	assert.Equal(t, 7.0, w.add(8))

	one := newWindowedMin(1)
	one.add(1)
	assert.Equal(t, 1.0, one.add(4))
	assert.Equal(t, 4.0, one.add(6), "n = 1: the minimum of the last one or two rounds")
}

type stubAlgorithm struct{ value float64 }

func (s stubAlgorithm) next(float64, *round) float64 { return s.value }
func (s stubAlgorithm) baseline() time.Duration      { return 0 }

// SPEC AL-12: whatever the algorithm returns, the limit stays within [MinLimit,
// MaxLimit]; a NaN leaves it as it was.
func TestLimitIsClamped(t *testing.T) {
	l, err := New(WithClock(clock.NewManual()), MinLimit(2), MaxLimit(40), InitialLimit(10))
	require.NoError(t, err)
	for _, tc := range []struct{ value, want float64 }{
		{1000, 40}, {math.Inf(1), 40}, {-5, 2}, {math.Inf(-1), 2}, {math.NaN(), 2}, {17.9, 17}, {math.NaN(), 17},
	} {
		l.algo = stubAlgorithm{tc.value}
		p, err := l.Acquire(context.Background())
		require.NoError(t, err)
		p.Record(nil)
		assert.Equal(t, int(tc.want), l.Limit(), "%v", tc.value)
	}
}

// The admission counter wraps around without disturbing the calls in flight, and a
// sample is told fresh or stale across the wrap.
func TestCounterWraps(t *testing.T) {
	l, err := New(WithClock(clock.NewManual()), UseAlgorithm(AIMD), InitialLimit(4), MaxLimit(10), BackoffRatio(0.5))
	require.NoError(t, err)
	l.s.SetCounter(math.MaxUint32 - 1)
	l.epoch.Store(math.MaxUint32 - 1)
	l.roundStart = math.MaxUint32 - 1
	p1, _ := l.TryAcquire()
	p2, _ := l.TryAcquire()
	assert.Equal(t, uint32(math.MaxUint32), p1.p.Ticket)
	assert.Equal(t, uint32(0), p2.p.Ticket, "wrapped")
	assert.Equal(t, 2, l.InFlight())
	p2.Record(nil) // 2 in flight: a round of 1 sample ends, 4 → 5
	assert.Equal(t, 5, l.Limit())
	p1.Record(context.DeadlineExceeded) // let in before the change: left out
	assert.Equal(t, 5, l.Limit())
	p3, _ := l.TryAcquire()
	assert.Equal(t, uint32(1), p3.p.Ticket)
	p3.Record(context.DeadlineExceeded)
	assert.Equal(t, 2, l.Limit(), "fresh after the wrap: 5·0.5")
	assert.Zero(t, l.InFlight())
}
