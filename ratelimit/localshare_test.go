package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// sharedLocal is a backend whose stores always answer Local and ask for 1/share of the
// quota.
type sharedLocal struct {
	scriptedStore
	share int
}

func (b *sharedLocal) LocalShare() int                             { return b.share }
func (b *sharedLocal) Bind(backend.Binding) (backend.Store, error) { return &b.scriptedStore, nil }

func newSharedLocal(share int) *sharedLocal {
	return &sharedLocal{scriptedStore: scriptedStore{grant: backend.Grant{Verdict: backend.Local}}, share: share}
}

// passes counts the calls that TryAcquire lets through now, up to 100.
func passes(l interface{ TryAcquire() bool }) int {
	n := 0
	for n < 100 && l.TryAcquire() {
		n++
	}
	return n
}

// SPEC RL-19: a store that answers Local with a share of 3 makes the limiter take a third
// of its quota in-process: a burst of Permits/3 and one permit every 3·T.
func TestRL19_LocalShareIsAThirdOfTheQuota(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("share"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(3)))
	require.NoError(t, err)

	assert.Equal(t, 3, l.Snapshot().AvailablePermits, "the local share's burst, floor(10/3)")
	assert.Equal(t, 3, passes(l))
	clk.Advance(299 * time.Millisecond) // 3·T = 300ms
	assert.Zero(t, passes(l))
	clk.Advance(time.Millisecond)
	assert.Equal(t, 1, passes(l), "one permit per 3·T")
	clk.Advance(10 * time.Second)
	assert.Equal(t, 3, l.Snapshot().AvailablePermits, "never more than the local burst")

	// Over 2s, one permit every 300ms: 3 + 6 (at 300, 600, … 1800ms) from a full burst.
	clk.Advance(10 * time.Second)
	got := passes(l)
	for range 2000 {
		clk.Advance(time.Millisecond)
		got += passes(l)
	}
	assert.Equal(t, 3+6, got)
}

// SPEC RL-19: with a share larger than Permits, the local burst is one permit, and the
// rate still Permits/share per Period.
func TestRL19_LocalShareOfFewPermits(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("few"), ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(3)))
	require.NoError(t, err)
	assert.Equal(t, 1, passes(l))
	clk.Advance(1499 * time.Millisecond) // 3·T = 1.5s
	assert.False(t, l.TryAcquire())
	clk.Advance(time.Millisecond)
	assert.True(t, l.TryAcquire())
}

// SPEC RL-19, RL-17: a call for more permits than the local burst (at most Permits)
// passes when the local bucket is full, and the bucket owes the rest: the next permit
// comes that much later. On a bucket that is not full it waits until it is, within its
// MaxWait, and a canceled reservation gives its permits back.
func TestRL19_WeightedCallAboveTheLocalBurst(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("weighted"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second), ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(3)))
	require.NoError(t, err)
	require.NoError(t, l.TryAcquireN(5), "5 > the local burst of 3, on a full bucket")
	assert.Zero(t, l.Snapshot().AvailablePermits)
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 900*time.Millisecond, r.Delay(), "5·300ms owed, less the burst's 2·300ms of tolerance")
	r.Cancel()

	clk.Advance(time.Hour)
	require.True(t, l.TryAcquire())
	err = l.TryAcquireN(5)
	require.ErrorIs(t, err, ratelimit.ErrExceeded, "the bucket is not full")
	next, ok := err.(*ratelimit.ExceededError).RetryIn()
	require.True(t, ok)
	assert.Equal(t, 300*time.Millisecond, next, "when it is full again")
	r, err = l.ReserveN(5)
	require.NoError(t, err)
	assert.Equal(t, 300*time.Millisecond, r.Delay())
	r.Cancel()
	assert.Equal(t, 2, l.Snapshot().AvailablePermits, "the canceled reservation gave its permits back")
	clk.Advance(300 * time.Millisecond)
	require.NoError(t, l.TryAcquireN(5), "at the retry-after")
}

// SPEC RL-19: with huge periods and shares, a weighted call above the local burst never
// overflows into an admission: it waits, or is refused, and the schedule stays usable.
// (Fault: a negative tolerance made the wait overflow, a call that had to wait centuries
// passed at once, and the schedule then refused every call for good.)
func TestRL19_NoOverflowAboveTheLocalBurst(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("yearly"), ratelimit.Permits(1000), ratelimit.Period(365*24*time.Hour),
		ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(1000)))
	require.NoError(t, err)
	require.True(t, l.TryAcquire(), "the local burst of 1")
	require.ErrorIs(t, l.TryAcquireN(500), ratelimit.ErrExceeded, "a year until the bucket is full")
	clk.Advance(365 * 24 * time.Hour)
	require.NoError(t, l.TryAcquireN(500), "full again after a year: it passes, and owes 499 years")
	assert.False(t, l.TryAcquire())
}

// SPEC RL-19: a share of 1 (or below) takes the whole quota.
func TestRL19_NoShareTakesTheWholeQuota(t *testing.T) {
	for _, b := range []backend.Backend{newSharedLocal(1), newSharedLocal(0),
		&scriptedStore{grant: backend.Grant{Verdict: backend.Local}}} {
		l, err := ratelimit.New(ratelimit.Name("whole"), ratelimit.Permits(10), ratelimit.Period(time.Second),
			ratelimit.WithClock(clock.NewManual()), ratelimit.WithBackend(b))
		require.NoError(t, err)
		assert.Equal(t, 10, passes(l))
	}
}

// SPEC RL-19 per key: a keyed limiter's keys take the local share each, and Decide
// reports it.
func TestRL19_KeyedLocalShare(t *testing.T) {
	clk := clock.NewManual()
	k, err := keyed.New[string](ratelimit.Name("keyed"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(3)))
	require.NoError(t, err)
	for _, key := range []string{"a", "b"} {
		d := k.Decide(context.Background(), key)
		assert.True(t, d.Admitted)
		assert.Equal(t, 3, d.Limit, "the local share's burst")
		assert.Equal(t, 2, d.Remaining)
		assert.True(t, k.TryAcquire(key, 1) == nil)
		assert.True(t, k.TryAcquire(key, 1) == nil)
		assert.False(t, k.TryAcquire(key, 1) == nil, key)
		assert.Equal(t, 300*time.Millisecond, k.Decide(context.Background(), key).RetryAfter)
	}
	clk.Advance(300 * time.Millisecond)
	assert.True(t, k.TryAcquire("a", 1) == nil)
	assert.NoError(t, k.Acquire(context.Background(), "b", 1))
}

// SPEC RL-19, RC-4: a limiter reconfigured while its store answers Local keeps its spent
// local permits spent, as an in-process limiter does, with or without a share; and the
// local share follows the new configuration. (Fault: the in-process schedule of a limiter
// with a backend was not rebased, and growing the Period freed spent permits.)
func TestRL19_ReconfigureOnTheLocalShare(t *testing.T) {
	for _, share := range []int{1, 3} {
		clk := clock.NewManual()
		l, err := ratelimit.New(ratelimit.Name("reconf"), ratelimit.Permits(30), ratelimit.Period(time.Second),
			ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(share)))
		require.NoError(t, err)
		require.Equal(t, 30/share, passes(l), "share %d", share)
		require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 30, Period: 10 * time.Second}))
		assert.Zero(t, l.Snapshot().AvailablePermits, "share %d: no spent permit came back", share)
		assert.Zero(t, passes(l), "share %d", share)
	}

	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("follows"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(2)))
	require.NoError(t, err)
	require.Equal(t, 5, l.Snapshot().AvailablePermits)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 20, Period: time.Second}))
	clk.Advance(time.Hour)
	assert.Equal(t, 10, passes(l), "the new local burst, 20/2")
	clk.Advance(99 * time.Millisecond)
	assert.Zero(t, passes(l))
	clk.Advance(time.Millisecond)
	assert.Equal(t, 1, passes(l), "one permit every 2·T' = 100ms")
}

// flappingStore answers Local or Reserved (a permit free now), switching at will.
type flappingStore struct {
	local atomic.Bool
	share int
}

func (f *flappingStore) LocalShare() int                             { return f.share }
func (f *flappingStore) Bind(backend.Binding) (backend.Store, error) { return f, nil }
func (f *flappingStore) Reserve(context.Context, backend.Request) (backend.Grant, error) {
	if f.local.Load() {
		return backend.Grant{Verdict: backend.Local}, nil
	}
	return backend.Grant{Verdict: backend.Admitted}, nil
}
func (f *flappingStore) Cancel(context.Context, backend.Grant) {}
func (f *flappingStore) Available(_ context.Context, req backend.Request) (int, bool) {
	if f.local.Load() {
		return 0, false
	}
	return req.Permits, true
}

// SPEC RL-19, RC-4 on the local share, as a property: after any change of Permits and Period, the
// local schedule frees at once no more permits than it had free, and at most the new local
// burst. Random configurations, shares and spent permits.
func TestRL19_LocalShareRebaseProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		share := 1 + rng.IntN(5)
		p1, p2 := 1+rng.IntN(40), 1+rng.IntN(40)
		d1 := time.Duration(1+rng.IntN(5000)) * time.Millisecond
		d2 := time.Duration(1+rng.IntN(5000)) * time.Millisecond
		clk := clock.NewManual()
		b := &flappingStore{share: share}
		b.local.Store(true)
		l, err := ratelimit.New(ratelimit.Name("prop"), ratelimit.Permits(p1), ratelimit.Period(d1),
			ratelimit.WithClock(clk), ratelimit.WithBackend(b))
		require.NoError(t, err)
		spend := rng.IntN(p1 + 1)
		for range spend {
			l.TryAcquire()
		}
		clk.Advance(time.Duration(rng.IntN(int(d1))))
		before := l.Snapshot().AvailablePermits
		require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: p2, Period: d2}))
		after := l.Snapshot().AvailablePermits
		burst2 := max(p2/share, 1)
		if !assert.LessOrEqual(t, after, min(before, burst2),
			"case %d: share %d, %d/%v -> %d/%v, spent %d", i, share, p1, d1, p2, d2, spend) {
			return
		}
		got := 0
		for got <= burst2 && l.TryAcquire() {
			got++
		}
		if !assert.Equal(t, after, got, "case %d: AvailablePermits vs calls", i) {
			return
		}
	}
}

// SPEC RL-30 (RL-19): with the Local failure policy, a limiter with windows decides every
// pair at its local share: with a share of 4, a window of 8 per minute lets 2 calls per
// minute pass in-process, and a weighted call above the share's burst owes it at the
// share's rate; AvailablePermits says the same. (Fault: the windows were decided at the
// whole quota, 8 per minute, on every instance.)
func TestRL30_LocalShareOfEveryWindow(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("share-windows"), ratelimit.Permits(100), ratelimit.Period(time.Second),
		ratelimit.Windows("8/1m"), ratelimit.MaxWait(time.Hour), ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(4)))
	require.NoError(t, err)
	assert.Equal(t, 2, l.Snapshot().AvailablePermits, "the minute window's share, 8/4")
	assert.Equal(t, 2, passes(l), "2 per minute in-process")
	clk.Advance(29 * time.Second) // the share's T: 4·7.5s = 30s
	assert.Zero(t, passes(l))
	clk.Advance(time.Second)
	assert.Equal(t, 1, passes(l))

	clk.Advance(time.Hour)
	require.NoError(t, l.TryAcquireN(4), "above the share's burst of 2, on a full bucket")
	r, err := l.ReserveN(1)
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second, r.Delay(), "4·30s owed, less the burst's 30s of tolerance")
	r.Cancel()

	// A change of Permits alone keeps the windows, at the share.
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 200, Period: time.Second, Windows: "8/1m", MaxWait: time.Hour}))
	clk.Advance(time.Hour)
	assert.Equal(t, 2, l.Snapshot().AvailablePermits)
	assert.Equal(t, 2, passes(l))
}
