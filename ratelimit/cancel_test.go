package ratelimit_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// SPEC RL-9: 1 permit per 100ms, burst 1. Reservations A, B and C get the permits at 0,
// 100 and 200ms. B is canceled at 10ms; D, at 10ms, gets B's 100ms slot, and C keeps its
// 200ms; the next call after D comes at 300ms.
func TestRL9_CanceledMiddleReservationGivesItsSlot(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(100*time.Millisecond), ratelimit.MaxWait(time.Second))
	a, err := l.Reserve()
	require.NoError(t, err)
	b, err := l.Reserve()
	require.NoError(t, err)
	c, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}, []time.Duration{a.Delay(), b.Delay(), c.Delay()})

	clk.AdvanceTo(10 * time.Millisecond)
	b.Cancel()
	d, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 90*time.Millisecond, d.Delay(), "D gets the 100ms slot")
	e, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 290*time.Millisecond, e.Delay(), "C keeps 200ms; E comes after it")
}

// SPEC RL-9: reservations made at one instant and all canceled, in any order, leave the
// limiter exactly as it was: nothing is lost, nothing is left over.
func TestRL9_CancelingEveryReservationInAnyOrderRestoresAll(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 9))
		clk := clock.NewManual()
		l := newLimiter(t, clk, ratelimit.Permits(4), ratelimit.Period(400*time.Millisecond), ratelimit.MaxWait(time.Hour))
		clk.AdvanceTo(time.Duration(rng.IntN(1000)) * time.Millisecond)
		before := rng.IntN(5)
		require.NoError(t, l.TryAcquireN(max(before, 1)))
		avail := l.Snapshot().AvailablePermits
		var rs []ratelimit.Reservation
		for range 1 + rng.IntN(12) {
			r, err := l.ReserveN(1 + rng.IntN(4))
			require.NoError(t, err)
			rs = append(rs, r)
		}
		rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		for _, r := range rs {
			r.Cancel()
		}
		require.Equal(t, avail, l.Snapshot().AvailablePermits, "seed %d", seed)
		r, err := l.ReserveN(4)
		require.NoError(t, err)
		want := time.Duration(0)
		if avail < 4 {
			want = time.Duration(4-avail) * 100 * time.Millisecond
		}
		assert.Equal(t, want, r.Delay(), "seed %d: the next call waits as it would have", seed)
	}
}

// granted is a permit grant seen from outside: when its permits are free, how many, and
// the T and Permits·T of the configuration it was granted under.
type granted struct {
	at       time.Duration
	n        int
	interval time.Duration
	burst    time.Duration // Permits·T
	r        ratelimit.Reservation
	canceled bool
	epoch    int // how many configuration changes came before it was granted (RC-4's check)
}

// checkWindows checks SPEC RL-5 as RC-4 states it for every window [at_i, at_j]: the
// permits free in it, each counted as its own T, span at most the window's length plus
// the largest Permits·T among them. Under one configuration this is at most
// Permits + ⌊d/T⌋ permits in any window of length d.
func checkWindows(t *testing.T, gs []granted, what string) {
	t.Helper()
	var live []granted
	for _, g := range gs {
		if !g.canceled {
			live = append(live, g)
		}
	}
	slices.SortFunc(live, func(a, b granted) int { return int(a.at - b.at) })
	for i := range live {
		var sum, burst time.Duration
		for j := i; j < len(live); j++ {
			sum += time.Duration(live[j].n) * live[j].interval
			burst = max(burst, live[j].burst)
			if d := live[j].at - live[i].at; sum > d+burst {
				t.Fatalf("%s: permits %d..%d free in [%v, %v] span %v > %v + %v", what, i, j, live[i].at, live[j].at, sum, d, burst)
			}
		}
	}
}

// SPEC RL-5, RL-9: random weighted reservations, random cancels of reservations whose
// time has not come, at random instants: the window bound holds for the permits kept.
func TestRL9_RandomReservesAndCancelsHoldTheWindowBound(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 5))
		clk := clock.NewManual()
		permits := 1 + rng.IntN(6)
		period := time.Duration(permits*(10+rng.IntN(50))) * time.Millisecond
		l := newLimiter(t, clk, ratelimit.Permits(permits), ratelimit.Period(period), ratelimit.MaxWait(2*period))
		cfg := l.Config()
		var gs []granted
		for range 300 {
			switch rng.IntN(5) {
			case 0:
				clk.Advance(time.Duration(rng.IntN(int(period/time.Millisecond)/2+1)) * time.Millisecond)
			case 1, 2:
				n := 1 + rng.IntN(permits)
				r, err := l.ReserveN(n)
				if err == nil {
					gs = append(gs, granted{at: clk.Now() + r.Delay(), n: n, interval: gcra.Interval(cfg.Permits, cfg.Period),
						burst: time.Duration(permits) * gcra.Interval(cfg.Permits, cfg.Period), r: r})
				}
			case 3:
				if err := l.TryAcquireN(1); err == nil {
					gs = append(gs, granted{at: clk.Now(), n: 1, interval: gcra.Interval(cfg.Permits, cfg.Period),
						burst: time.Duration(permits) * gcra.Interval(cfg.Permits, cfg.Period)})
				}
			case 4:
				if len(gs) == 0 {
					continue
				}
				g := &gs[rng.IntN(len(gs))]
				if g.r != (ratelimit.Reservation{}) && !g.canceled && g.at >= clk.Now() {
					g.r.Cancel()
					g.canceled = true
				}
			}
		}
		checkWindows(t, gs, fmt.Sprint("seed ", seed))
	}
}

// SPEC RL-9: a reservation canceled twice, with no call between, gives its permit back
// once: 1 permit at an instant, not 2.
func TestRL9_SecondCancelGivesNothingMore(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(100*time.Millisecond), ratelimit.MaxWait(time.Second))
	r, err := l.Reserve()
	require.NoError(t, err)
	r.Cancel()
	r.Cancel()
	assert.Equal(t, 1, admitted(l, 10))

	// The same for a reservation in the middle of the queue.
	clk.Advance(time.Second)
	a, _ := l.Reserve()
	b, _ := l.Reserve()
	c, _ := l.Reserve()
	b.Cancel()
	b.Cancel()
	d, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, d.Delay(), "b's slot")
	e, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 300*time.Millisecond, e.Delay(), "after c, not in b's slot again")
	_, _ = a, c
}
