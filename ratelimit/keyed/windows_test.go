package keyed_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// SPEC RL-29: a keyed limiter of 10/1s and 15/2s keeps both windows for each key, with
// few keys so that none is evicted: half an hour of random calls (tries, reservations
// within 1s, some canceled) on 3 keys; for each key no window [a, a+d] (d up to 20s)
// holds more than the smallest permits + ⌊d/T⌋; every refusal's retry-after is exact.
func TestRL29_KeyedWindowsBoundAndExactRetryAfter(t *testing.T) {
	type pair struct {
		permits int
		t       time.Duration
	}
	pairs := []pair{{10, 100 * time.Millisecond}, {15, 133333334}}
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("15/2s"),
		ratelimit.MaxWait(time.Second))
	rng := rand.New(rand.NewPCG(29, 2))
	type permitAt struct {
		at time.Duration
		n  int
	}
	keys := []string{"a", "b", "c"}
	logs := map[string][]permitAt{}
	type held struct {
		r   ratelimit.Reservation
		key string
		idx int
	}
	var pending []held
	canceled := map[string]map[int]bool{"a": {}, "b": {}, "c": {}}
	exact, cancels := 0, 0
	for clk.Now() < 30*time.Minute {
		clk.Advance(time.Duration(rng.IntN(100)) * time.Millisecond)
		now := clk.Now()
		key, n := keys[rng.IntN(len(keys))], 1+rng.IntN(3)
		switch op := rng.IntN(10); {
		case op < 5:
			if k.TryAcquire(key, n) == nil {
				logs[key] = append(logs[key], permitAt{now, n})
			}
		case op < 8:
			r, err := k.Reserve(key, n)
			if err != nil {
				continue
			}
			logs[key] = append(logs[key], permitAt{now + r.Delay(), n})
			if r.Delay() > 0 {
				pending = append(pending, held{r, key, len(logs[key]) - 1})
			}
		case op < 9:
			live := pending[:0]
			for _, p := range pending {
				if logs[p.key][p.idx].at >= now {
					live = append(live, p)
				}
			}
			if pending = live; len(pending) == 0 {
				continue
			}
			i := rng.IntN(len(pending))
			p := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			p.r.Cancel()
			canceled[p.key][p.idx] = true
			cancels++
		default:
			d := k.Decide(context.Background(), key)
			if d.Admitted {
				logs[key] = append(logs[key], permitAt{now, 1})
				continue
			}
			ra := d.RetryAfter
			if ra <= 1 {
				continue
			}
			clk.Advance(ra - 1)
			require.Error(t, k.TryAcquire(key, 1), "1ns before the retry-after")
			clk.Advance(1)
			require.NoError(t, k.TryAcquire(key, 1), "at the retry-after %v", ra)
			logs[key] = append(logs[key], permitAt{clk.Now(), 1})
			exact++
		}
	}
	worst := 0.0
	for _, key := range keys {
		var kept []permitAt
		for i, p := range logs[key] {
			if !canceled[key][i] {
				kept = append(kept, p)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].at < kept[j].at })
		for i := range kept {
			sum := 0
			for j := i; j < len(kept) && kept[j].at-kept[i].at <= 20*time.Second; j++ {
				sum += kept[j].n
				d := kept[j].at - kept[i].at
				bound := 1 << 62
				for _, w := range pairs {
					bound = min(bound, w.permits+int(d/w.t))
				}
				require.LessOrEqual(t, sum, bound, "key %s, window [%v, %v]", key, kept[i].at, kept[j].at)
				worst = max(worst, float64(sum)/float64(bound))
			}
		}
	}
	t.Logf("%d exact retry-afters, %d cancels, fullest window %.3f of its bound", exact, cancels, worst)
	assert.Greater(t, exact, 50)
	assert.Greater(t, cancels, 50)
	assert.Equal(t, 1.0, worst)
}

// SPEC RL-29: for a key, the second window refuses with the longest wait; Decide reports
// the fewest permits left and the latest reset; a key whose long window still owes is not
// swept even though its short one is idle; windows cannot be added by Reconfigure to a
// keyed limiter built without them, nor used with a backend.
func TestRL29_KeyedWindows(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.Windows("3/10s"))
	require.NoError(t, k.TryAcquire("a", 2))
	d := k.Decide(context.Background(), "a")
	assert.False(t, d.Admitted)
	assert.Equal(t, 500*time.Millisecond, d.RetryAfter)
	clk.Advance(500 * time.Millisecond)
	d = k.Decide(context.Background(), "a")
	require.True(t, d.Admitted)
	assert.Equal(t, 0, d.Remaining)
	const t2 = 3333333334
	assert.Equal(t, time.Duration(3*t2-500_000_000), d.Reset, "until the long window's burst is back")
	d = k.Decide(context.Background(), "a")
	assert.Equal(t, time.Duration(3*t2-500_000_000-2*t2), d.RetryAfter, "the long window's wait")
	assert.Equal(t, 2, k.AvailablePermits("b"), "a new key: the smallest burst")
	require.ErrorIs(t, k.TryAcquire("b", 3), ratelimit.ErrExceedsBurst)

	clk.Advance(2 * time.Second)
	assert.Zero(t, k.Sweep(), "the long window of a still owes")
	assert.Equal(t, 1, k.Len())
	clk.Advance(10 * time.Second)
	assert.Equal(t, 1, k.Sweep())

	plain := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second))
	c := plain.Config()
	c.Windows = "3/10s"
	err := plain.Reconfigure(c)
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err))
	c = k.Config()
	c.Windows = ""
	require.NoError(t, k.Reconfigure(c))
	assert.Equal(t, 2, k.AvailablePermits("a"))
	c.Windows = "1/1m"
	require.NoError(t, k.Reconfigure(c))
	require.NoError(t, k.TryAcquire("a", 1))
	assert.Error(t, k.TryAcquire("a", 1))
}

// SPEC RL-29: a decision of a keyed limiter over several windows allocates nothing for a
// key that has a cell.
func TestRL29_KeyedWindowsNoAllocation(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1_000_000), ratelimit.Period(time.Second),
		ratelimit.Windows("1000000/1s, 1000000/1m"))
	require.NoError(t, k.TryAcquire("a", 1))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = k.TryAcquire("a", 1) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { k.Decide(context.Background(), "a") }))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		r, _ := k.Reserve("a", 2)
		r.Cancel()
	}))
}
