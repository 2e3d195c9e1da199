package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// permitAt is n permits admitted for clock time at.
type permitAt struct {
	at time.Duration
	n  int
}

// windowPair is one (permits, period) of a limiter, with its emission interval.
type windowPair struct {
	permits int
	period  time.Duration
}

func (w windowPair) interval() time.Duration {
	t := w.period / time.Duration(w.permits)
	if w.period%time.Duration(w.permits) != 0 {
		t++
	}
	return t
}

// SPEC RL-29: 10/1s and 15/2s on one limiter, an hour of simulated time of random calls
// for 1 to 3 permits (tries, reservations within a MaxWait of 1s, some canceled before
// their time, some waited for): no window [a, a+d] of the permit times holds more than
// min over the pairs of (permits + ⌊d/T⌋) permits, for every d up to 20s. Every refusal
// of a reservation tells its exact retry-after: 1ns before it the same call is refused,
// at it the call passes.
func TestRL29_WindowsBoundAndExactRetryAfter(t *testing.T) {
	pairs := []windowPair{{10, time.Second}, {15, 2 * time.Second}}
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.Windows("15/2s"), ratelimit.MaxWait(time.Second))
	rng := rand.New(rand.NewPCG(29, 1))

	var log []permitAt
	type held struct {
		r   ratelimit.Reservation
		idx int // in log
	}
	var pending []held
	canceled := map[int]bool{}
	refusals, exact, cancels := 0, 0, 0
	for clk.Now() < time.Hour {
		clk.Advance(time.Duration(rng.IntN(120)) * time.Millisecond)
		now := clk.Now()
		n := 1 + rng.IntN(3)
		switch op := rng.IntN(10); {
		case op < 5:
			if l.TryAcquireN(n) == nil {
				log = append(log, permitAt{now, n})
			}
		case op < 8:
			r, err := l.ReserveN(n)
			if err != nil {
				refusals++
				continue
			}
			log = append(log, permitAt{now + r.Delay(), n})
			if r.Delay() > 0 {
				pending = append(pending, held{r, len(log) - 1})
			}
		case op < 9:
			live := pending[:0]
			for _, p := range pending {
				if log[p.idx].at >= now {
					live = append(live, p)
				}
			}
			if pending = live; len(pending) == 0 {
				continue
			}
			k := rng.IntN(len(pending))
			p := pending[k]
			pending = append(pending[:k], pending[k+1:]...)
			if log[p.idx].at >= now { // its time has not passed: its permits come back
				p.r.Cancel()
				canceled[p.idx] = true
				cancels++
			}
		default:
			// A refusal's retry-after, exact: build one with a reservation that cannot wait.
			for l.TryAcquireN(n) == nil {
				log = append(log, permitAt{now, n})
			}
			ra := retryAfterN(t, l, n)
			if ra <= 1 {
				continue
			}
			clk.Advance(ra - 1)
			require.Error(t, l.TryAcquireN(n), "1ns before the retry-after, at %v", now)
			clk.Advance(1)
			require.NoError(t, l.TryAcquireN(n), "at the retry-after %v, from %v", ra, now)
			log = append(log, permitAt{clk.Now(), n})
			exact++
		}
	}
	var kept []permitAt
	for i, p := range log {
		if !canceled[i] {
			kept = append(kept, p)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].at < kept[j].at })
	const horizon = 20 * time.Second
	worst := 0.0
	for i := range kept {
		sum := 0
		for j := i; j < len(kept) && kept[j].at-kept[i].at <= horizon; j++ {
			sum += kept[j].n
			d := kept[j].at - kept[i].at
			bound := 1 << 62
			for _, w := range pairs {
				bound = min(bound, w.permits+int(d/w.interval()))
			}
			require.LessOrEqual(t, sum, bound, "window [%v, %v]", kept[i].at, kept[j].at)
			worst = max(worst, float64(sum)/float64(bound))
		}
	}
	t.Logf("%d permits kept, %d refusals, %d exact retry-afters, %d cancels, fullest window %.3f of its bound",
		len(kept), refusals, exact, cancels, worst)
	assert.Greater(t, exact, 100)
	assert.Greater(t, cancels, 100)
	assert.Equal(t, 1.0, worst, "some window is full: the bound is tight")
}

// retryAfterN returns the retry-after of a call for n permits on l, which refuses it now,
// from a refused ReserveN(n) with MaxWait 0 (l's MaxWait is bypassed: a try).
func retryAfterN(t *testing.T, l *ratelimit.Limiter, n int) time.Duration {
	t.Helper()
	c := l.Config()
	saved := c
	c.MaxWait = 0
	require.NoError(t, l.Reconfigure(c))
	r, err := l.ReserveN(n)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.NoError(t, l.Reconfigure(saved))
	return r.Delay()
}

// SPEC RL-29: 2 per second and 3 per 10s. The burst of 2 passes; the third permit comes
// from the first pair at 500ms; then the second pair is the one that refuses, and the
// retry-after is its wait, the longest: 3 permits of T = ⌈10s/3⌉ ahead of a tolerance of
// 2·T, from 500ms. The call at that instant passes, and the first pair's permit, free
// long before, was not taken by the refusals.
func TestRL29_RetryAfterIsTheLongestWait(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.Windows("3/10s"))
	require.True(t, l.TryAcquire())
	require.True(t, l.TryAcquire())
	r, err := l.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 500*time.Millisecond, r.Delay(), "the first pair's wait")
	clk.Advance(500 * time.Millisecond)
	require.True(t, l.TryAcquire())
	assert.Equal(t, 0, l.Snapshot().AvailablePermits)

	const t2 = 3333333334 // ⌈10s/3⌉
	want := time.Duration(3*t2 - 500_000_000 - 2*t2)
	for range 3 {
		r, err = l.Reserve()
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.Equal(t, want, r.Delay(), "the second pair's wait, the longest")
		var ee *ratelimit.ExceededError
		require.ErrorAs(t, err, &ee)
		in, ok := ee.RetryIn()
		require.True(t, ok)
		assert.Equal(t, want, in)
	}
	clk.Advance(want - 1)
	assert.False(t, l.TryAcquire())
	clk.Advance(1)
	assert.True(t, l.TryAcquire(), "the call at the retry-after passes")
	assert.False(t, l.TryAcquire())
}

// SPEC RL-29: a call takes from every pair or from none: refusals by the second pair
// leave the first pair's permits where they were; a call for more than the smallest
// burst can never pass; a canceled reservation gives its permits back to every pair, and
// a waiting call whose context ends gives them back too.
func TestRL29_AllOrNothingAndCancel(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Windows("3/1m"),
		ratelimit.MaxWait(time.Hour))
	assert.Equal(t, 3, l.Snapshot().AvailablePermits, "the fewest of the pairs")
	require.ErrorIs(t, l.TryAcquireN(4), ratelimit.ErrExceedsBurst, "more than the smallest burst")
	require.NoError(t, l.TryAcquireN(3))
	for range 5 {
		require.False(t, l.TryAcquire())
	}
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, r.Delay(), "one T of the minute's pair")
	r.Cancel()
	r2, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, r2.Delay(), "the canceled permits came back to both pairs")

	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	ctx, cancel := context.WithCancel(t.Context())
	f := call(ctx, 0)
	assert.Equal(t, 1, l.Snapshot().Waiting, "scheduled 40s ahead")
	cancel()
	contracttest.Eventually(t, func() bool { return l.Snapshot().Waiting == 0 }, "the call whose context ended leaves")
	_, err = f.Await(t.Context())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	r3, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 40*time.Second, r3.Delay(), "the ended wait gave its permit back")
	clk.Advance(20 * time.Second)
	assert.Equal(t, 0, l.Snapshot().AvailablePermits)
}

// SPEC RL-29: a decision over several pairs allocates nothing.
func TestRL29_NoAllocation(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1000), ratelimit.Period(time.Millisecond),
		ratelimit.Windows("1000000/1s, 1000000/1m"))
	assert.Zero(t, testing.AllocsPerRun(100, func() { l.TryAcquire() }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = l.TryAcquireN(2) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = l.Acquire(context.Background()) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		r, _ := l.Reserve()
		r.Cancel()
	}))
	clk.Advance(time.Hour)
	assert.Zero(t, testing.AllocsPerRun(100, func() { l.TryAcquire(); clk.Advance(time.Millisecond) }))
}

// SPEC RL-29: windows are checked as Permits and Period are; a Reconfigure can add, change
// or drop them; a backend refuses them (its stores keep one), for a Limiter and a keyed one.
func TestRL29_Configuration(t *testing.T) {
	cases := []struct {
		opt  ratelimit.Option
		code string
	}{
		{ratelimit.Windows("0/1s"), r4c.BadPermits},
		{ratelimit.Windows("1/0s"), r4c.ZeroPeriod},
		{ratelimit.Windows("10/5ns"), r4c.PeriodTooShort},
		{ratelimit.Windows("10 a second"), r4c.BadNumber},
		{ratelimit.Windows("5/1m, 5/1m, 5/1m, 5/1m"), r4c.OutOfRange},
	}
	for _, c := range cases {
		_, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), c.opt)
		assertCode(t, err, c.code)
		_, err = keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Second), c.opt)
		assertCode(t, err, c.code)
	}

	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("100/1m"))
	assert.Equal(t, "100/1m", l.Config().Windows)
	for _, bad := range []string{"100", "x/1s", "10/forever", "10/1s,,", "0/1s"} {
		c := l.Config()
		c.Windows = bad
		err := l.Reconfigure(c)
		require.Error(t, err, bad)
		assert.Equal(t, "100/1m", l.Config().Windows, "nothing changed")
	}
	c := l.Config()
	c.Windows = " 100/1m , 2/1h "
	require.NoError(t, l.Reconfigure(c))
	assert.Equal(t, 2, l.Snapshot().AvailablePermits)
	require.NoError(t, l.TryAcquireN(2))
	assert.False(t, l.TryAcquire())
	c.Windows = ""
	require.NoError(t, l.Reconfigure(c))
	assert.Equal(t, 8, l.Snapshot().AvailablePermits, "the pair of Permits per Period kept its state")

}

// SPEC RL-29: a limiter with a backend sends its windows with every call, the same slice
// for every call at one configuration; while the store answers Local, the in-process
// fallback keeps the windows too.
func TestRL29_WindowsGoToTheBackend(t *testing.T) {
	clk := clock.NewManual()
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Local}}
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("3/1m, 100/1h"),
		ratelimit.WithBackend(st))
	for range 3 {
		require.NoError(t, l.TryAcquireN(1))
	}
	require.Error(t, l.TryAcquireN(1), "the local fallback keeps the window of 3 per minute")
	st.mu.Lock()
	first := st.last.Windows
	st.mu.Unlock()
	require.Equal(t, []backend.Window{{Permits: 3, Period: time.Minute}, {Permits: 100, Period: time.Hour}}, first)
	require.Error(t, l.TryAcquireN(1))
	st.mu.Lock()
	assert.Same(t, &first[0], &st.last.Windows[0], "one slice per configuration: no allocation per call")
	st.mu.Unlock()
	assert.Equal(t, 5, st.called())

	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Windows("5/1m"),
		ratelimit.WithBackend(&scriptedStore{grant: backend.Grant{Verdict: backend.Admitted}}))
	require.NoError(t, err)
	require.NoError(t, k.TryAcquire("a", 1))
}

// assertCode asserts that err is a *policy.ConfigError with code.
func assertCode(t *testing.T, err error, code string) {
	t.Helper()
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, code, ce.Code, ce.Error())
}
