package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// SPEC RC-1, RC-3, RC-4: 10 permits per second, all taken at 0. At 500ms 4 are free
// again (the reservation made at 0 for 100ms holds the fifth). The quota becomes 20 per
// second: the next call sees it. The change frees no more than the 4 that were free, and
// after them permits come every 50ms, the new spacing, behind the reservation granted
// before the change, which keeps its turn.
func TestRC1_RaisedQuotaAppliesFromTheNextCall(t *testing.T) {
	clk := clock.NewManual()
	var log []policy.Event
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second),
		ratelimit.OnEvent(func(e policy.Event) {
			if e.Kind == policy.ConfigChanged {
				log = append(log, e)
			}
		}))
	require.NoError(t, l.TryAcquireN(10))
	held, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, held.Delay())

	clk.AdvanceTo(500 * time.Millisecond)
	assert.Equal(t, 4, l.Snapshot().AvailablePermits)
	cfg := l.Config()
	cfg.Permits = 20
	require.NoError(t, l.Reconfigure(cfg))
	assert.Equal(t, cfg, l.Config())
	require.Len(t, log, 1)
	assert.Equal(t, []string{"permits"}, log[0].Changed)
	assert.Equal(t, 500*time.Millisecond, log[0].At)
	assert.Equal(t, "test", log[0].Instance)

	assert.Equal(t, 4, l.Snapshot().AvailablePermits, "no more than were free before the change")
	require.NoError(t, l.TryAcquireN(4))
	for i := 1; i <= 3; i++ {
		r, err := l.Reserve()
		require.NoError(t, err)
		assert.Equal(t, time.Duration(i)*50*time.Millisecond, r.Delay(), "the new spacing")
	}

	require.NoError(t, l.Reconfigure(cfg), "the same configuration")
	assert.Len(t, log, 1, "changes nothing and publishes nothing")
}

// SPEC RC-4: a longer Period does not turn spent permits into new ones: 10 per second,
// all taken at 0; at 500ms 5 are free, and the quota becomes 10 per 10 s. 5 are free,
// not 9, and the next permit comes a second (the new T) after them.
func TestRC4_LongerPeriodFreesNothingMore(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Minute))
	require.NoError(t, l.TryAcquireN(10))
	clk.AdvanceTo(500 * time.Millisecond)
	require.Equal(t, 5, l.Snapshot().AvailablePermits)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 10, Period: 10 * time.Second, MaxWait: time.Minute}))
	assert.Equal(t, 5, l.Snapshot().AvailablePermits)
	require.NoError(t, l.TryAcquireN(5))
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay())
}

// SPEC RC-2: an invalid configuration returns its code and changes nothing: the limiter
// decides as before, and publishes no event.
func TestRC2_InvalidReconfigureChangesNothing(t *testing.T) {
	clk := clock.NewManual()
	var events int
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.OnEvent(func(e policy.Event) {
			if e.Kind == policy.ConfigChanged {
				events++
			}
		}))
	before := l.Config()
	for _, tc := range []struct {
		cfg  ratelimit.Config
		code string
	}{
		{ratelimit.Config{Permits: 0, Period: time.Second}, r4c.BadPermits},
		{ratelimit.Config{Permits: 5, Period: -time.Second}, r4c.ZeroPeriod},
		{ratelimit.Config{Permits: 5, Period: 4}, r4c.PeriodTooShort},
		{ratelimit.Config{Permits: 5, Period: time.Second, MaxWait: -1}, r4c.NegativeDuration},
	} {
		err := l.Reconfigure(tc.cfg)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.cfg)
		assert.Equal(t, tc.code, ce.Code)
		assert.Equal(t, before, l.Config())
	}
	assert.Equal(t, 2, admitted(l, 10), "still 2 per second")
	assert.Zero(t, events)

	var zero ratelimit.Limiter
	var ce *policy.ConfigError
	require.ErrorAs(t, zero.Reconfigure(before), &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
}

// SPEC RC-1: a limiter can be disabled and enabled again while it runs.
func TestRC1_DisableAndEnableLive(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.True(t, l.TryAcquire())
	require.False(t, l.TryAcquire())
	off := l.Config()
	off.Disabled = true
	require.NoError(t, l.Reconfigure(off))
	assert.True(t, l.TryAcquire())
	assert.True(t, l.TryAcquire())
	off.Disabled = false
	require.NoError(t, l.Reconfigure(off))
	assert.False(t, l.TryAcquire(), "the permit taken before is still taken")
}

// SPEC RC-4, RC-7, RL-5, RL-9: random configuration changes, random weighted
// reservations, random cancels and random instants: every window [t, t+d] holds at most
// the Permits in force at t, plus each stretch of it under one configuration divided by
// that configuration's T, plus, for each change in it, the permits reserved before the
// change and still waiting at it, plus the permits in it reserved before a change that
// came before their time (see checkChanges); and at each change, no more permits are free
// after it than before.
func TestRC4_RandomChangesHoldTheBound(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 4))
		clk := clock.NewManual()
		random := func() ratelimit.Config {
			p := 1 + rng.IntN(8)
			return ratelimit.Config{Permits: p, Period: time.Duration(p*(5+rng.IntN(60))) * time.Millisecond,
				MaxWait: time.Duration(rng.IntN(300)) * time.Millisecond}
		}
		cfg := random()
		l := newLimiter(t, clk, configOf(cfg)...)
		var gs []granted
		changes := []change{{cfg: cfg}}
		grant := func(at time.Duration, n int, r ratelimit.Reservation) {
			gs = append(gs, granted{at: at, n: n, r: r, epoch: len(changes) - 1})
		}
		for range 400 {
			switch rng.IntN(7) {
			case 0:
				clk.Advance(time.Duration(rng.IntN(80)) * time.Millisecond)
			case 1:
				before, c := l.Snapshot().AvailablePermits, random()
				waiting := 0
				for _, g := range gs {
					if !g.canceled && g.at > clk.Now() {
						waiting += g.n
					}
				}
				require.NoError(t, l.Reconfigure(c))
				changes = append(changes, change{at: clk.Now(), cfg: c, waiting: waiting})
				require.LessOrEqual(t, l.Snapshot().AvailablePermits, min(before, c.Permits),
					"seed %d: a change frees no more at once than were free", seed)
			case 2, 3:
				n := 1 + rng.IntN(l.Config().Permits)
				if r, err := l.ReserveN(n); err == nil {
					grant(clk.Now()+r.Delay(), n, r)
				}
			case 4, 5:
				n := 1 + rng.IntN(l.Config().Permits)
				if l.TryAcquireN(n) == nil {
					grant(clk.Now(), n, ratelimit.Reservation{})
				}
			case 6:
				if len(gs) > 0 {
					g := &gs[rng.IntN(len(gs))]
					if g.r != (ratelimit.Reservation{}) && !g.canceled && g.at >= clk.Now() {
						g.r.Cancel()
						g.canceled = true
					}
				}
			}
		}
		checkChanges(t, gs, changes, fmt.Sprint("seed ", seed))
	}
}

// change is a configuration put in force at a clock time, with the permits reserved
// before it and still waiting at it.
type change struct {
	at      time.Duration
	cfg     ratelimit.Config
	waiting int
}

// checkChanges checks SPEC RC-4's bound for every window [t, t+d] from one permit's time
// to another's: the permits free in it number at most P(t) + ⌊Σ len_k/T_k⌋ + Σ W_c, where
// P(t) is the Permits in force just before t (a change at t itself counts as in the
// window), the window is cut at the changes in it into stretches of length len_k, each
// under one configuration of emission interval T_k, and W_c is, for each change in the
// window, the permits reserved before it and still waiting at it; the permits reserved
// before a change and free after it are not counted (they keep the turn an earlier
// configuration gave them). Under one configuration it is RL-5.
func checkChanges(t *testing.T, gs []granted, changes []change, what string) {
	t.Helper()
	var live []granted
	for _, g := range gs {
		if !g.canceled {
			live = append(live, g)
		}
	}
	slices.SortFunc(live, func(a, b granted) int { return int(a.at - b.at) })
	for i := range live {
		from := live[i].at
		// The configuration in force just before from, and the changes from it on.
		k := 0
		for k+1 < len(changes) && changes[k+1].at < from {
			k++
		}
		count := 0
		for j := i; j < len(live); j++ {
			if g := live[j]; g.epoch+1 >= len(changes) || changes[g.epoch+1].at > g.at {
				count += g.n
			}
			to := live[j].at
			bound, start := float64(changes[k].cfg.Permits), from
			c := changes[k]
			for m := k + 1; m < len(changes) && changes[m].at <= to; m++ {
				bound += float64(changes[m].at-start)/float64(gcra.Interval(c.cfg.Permits, c.cfg.Period)) + float64(changes[m].waiting)
				c, start = changes[m], changes[m].at
			}
			bound += float64(to-start) / float64(gcra.Interval(c.cfg.Permits, c.cfg.Period))
			if float64(count) > math.Floor(bound+1e-9) {
				t.Fatalf("%s: permits %d..%d free in [%v, %v]: %d > %v", what, i, j, from, to, count, bound)
			}
		}
	}
}

// SPEC RC-1: calls and changes race; each call is decided by one whole configuration
// (run with -race). With every configuration allowing 1..4 permits, no call for 1..4 is
// ever refused for exceeding the burst, and no call for 5 is ever admitted.
func TestRC1_ChangesRaceWithCalls(t *testing.T) {
	l := newLimiter(t, clock.System(), ratelimit.Permits(4), ratelimit.Period(time.Millisecond))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := 1 + (i+g)%5
				err := l.TryAcquireN(n)
				if n == 5 {
					assert.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
				} else {
					assert.NotErrorIs(t, err, ratelimit.ErrExceedsBurst)
				}
				_ = l.Snapshot().AvailablePermits
			}
		})
	}
	for i := range 500 {
		require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 4, Period: time.Duration(1+i%7) * time.Millisecond}))
	}
	close(stop)
	wg.Wait()
}

// SPEC RC-1, RC-3, RC-7: a keyed limiter's keys all take the new configuration from their
// next call; what each owes is owed at the new rate (a's one permit of 1s is two of 500ms).
func TestKeyed_RC1_ReconfigureEveryKey(t *testing.T) {
	clk := clock.NewManual()
	var changed []string
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.OnEvent(func(e policy.Event) {
			if e.Kind == policy.ConfigChanged {
				changed = e.Changed
			}
		}))
	require.True(t, k.TryAcquire("a", 1) == nil)
	require.NoError(t, k.Reconfigure(ratelimit.Config{Permits: 2, Period: time.Second}))
	assert.Equal(t, []string{"permits"}, changed)
	assert.Equal(t, 2, k.Config().Permits)
	assert.Equal(t, 2, keyedAdmitted(k, "b", 10), "a new key has the new burst")
	assert.Zero(t, keyedAdmitted(k, "a", 10), "a's TAT is still 1s ahead: its next permit is at 500ms")
	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, 1, keyedAdmitted(k, "a", 10))
	var ce *policy.ConfigError
	require.ErrorAs(t, k.Reconfigure(ratelimit.Config{Permits: -1, Period: time.Second}), &ce)
	assert.Equal(t, 2, k.Config().Permits)
}

// SPEC RC-4: slots freed by canceled reservations are counted in what was free: a change
// to a faster rate frees no more at once (one free before, one after), though a freed
// 100ms slot would hold 50 permits at the new T of 2ms.
func TestRC4_FreedSlotsCountInWhatWasFree(t *testing.T) {
	clk := clock.NewManual()
	clk.AdvanceTo(time.Second)
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(200*time.Millisecond), ratelimit.MaxWait(time.Second))
	_, _ = l.Reserve()
	b, _ := l.Reserve()
	_, _ = l.Reserve()
	b.Cancel()
	require.Equal(t, 1, l.Snapshot().AvailablePermits)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 100, Period: 200 * time.Millisecond, MaxWait: time.Second}))
	assert.Equal(t, 1, l.Snapshot().AvailablePermits)
	assert.Equal(t, 1, admitted(l, 200))
}

// SPEC RC-1: a change of MaxWait (or Disabled) alone moves nothing: 1 per hour, the permit
// taken at 0; 1ns before it is due, MaxWait changes, and it is still due 1ns later.
func TestRC1_MaxWaitChangeMovesNothing(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.True(t, l.TryAcquire())
	clk.AdvanceTo(time.Hour - 1)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 1, Period: time.Hour, MaxWait: time.Second}))
	e, _ := errors.AsType[*ratelimit.ExceededError](l.Rejection())
	wait, _ := e.RetryIn()
	assert.Equal(t, time.Duration(1), wait)
	clk.Advance(1)
	assert.True(t, l.TryAcquire())
}

// SPEC RC-1: a snapshot reads one configuration: its permits and its available permits
// never come from two (run with -race).
func TestRC1_SnapshotIsNeverTorn(t *testing.T) {
	l := newLimiter(t, clock.System(), ratelimit.Permits(1), ratelimit.Period(time.Hour))
	k := newKeyed[string](t, clock.System(), ratelimit.Permits(1), ratelimit.Period(time.Hour))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c := ratelimit.Config{Permits: 1, Period: time.Hour}
			if i%2 == 0 {
				c = ratelimit.Config{Permits: 100, Period: time.Hour, Disabled: true}
			}
			_ = l.Reconfigure(c)
			_ = k.Reconfigure(c)
		}
	})
	for range 20_000 {
		s := l.Snapshot()
		require.LessOrEqual(t, s.AvailablePermits, s.Permits)
		d := k.Decide(context.Background(), "a")
		require.LessOrEqual(t, d.Remaining, d.Limit)
	}
	close(stop)
	wg.Wait()
}
