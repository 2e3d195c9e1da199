package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// sharedLocal is a backend whose stores always answer Local and ask for 1/share of the
// quota.
type sharedLocal struct {
	scriptedStore
	share int
}

func (b *sharedLocal) LocalShare() int                                 { return b.share }
func (b *sharedLocal) Bind(ratelimit.Binding) (ratelimit.Store, error) { return &b.scriptedStore, nil }

func newSharedLocal(share int) *sharedLocal {
	return &sharedLocal{scriptedStore: scriptedStore{grant: ratelimit.Grant{Outcome: ratelimit.Local}}, share: share}
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

	assert.Equal(t, 3, l.AvailablePermits(), "the local share's burst, floor(10/3)")
	assert.Equal(t, 3, passes(l))
	clk.Advance(299 * time.Millisecond) // 3·T = 300ms
	assert.Zero(t, passes(l))
	clk.Advance(time.Millisecond)
	assert.Equal(t, 1, passes(l), "one permit per 3·T")
	clk.Advance(10 * time.Second)
	assert.Equal(t, 3, l.AvailablePermits(), "never more than the local burst")

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

// SPEC RL-19, RL-17: a call for more permits than the local burst waits for the rest,
// within its MaxWait, and is refused without one.
func TestRL19_WeightedCallAboveTheLocalBurstWaits(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("weighted"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second), ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(3)))
	require.NoError(t, err)
	require.ErrorIs(t, l.TryAcquireN(5), ratelimit.ErrExceeded, "5 > the local burst of 3, and no wait allowed")
	r, err := l.ReserveN(5)
	require.NoError(t, err)
	assert.Equal(t, 600*time.Millisecond, r.Delay(), "the 2 permits above the burst, 300ms each")
	assert.Zero(t, l.AvailablePermits())
}

// SPEC RL-19: a share of 1, or no LocalSharer, takes the whole quota.
func TestRL19_NoShareTakesTheWholeQuota(t *testing.T) {
	for _, b := range []ratelimit.Backend{newSharedLocal(1), newSharedLocal(0),
		&scriptedStore{grant: ratelimit.Grant{Outcome: ratelimit.Local}}} {
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
	k, err := ratelimit.NewKeyed[string](ratelimit.Name("keyed"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(newSharedLocal(3)))
	require.NoError(t, err)
	for _, key := range []string{"a", "b"} {
		assert.Equal(t, 3, k.AvailablePermits(key), key)
		d := k.Decide(key)
		assert.True(t, d.Admitted)
		assert.Equal(t, 3, d.Limit, "the local share's burst")
		assert.Equal(t, 2, d.Remaining)
		assert.True(t, k.TryAcquire(key))
		assert.True(t, k.TryAcquire(key))
		assert.False(t, k.TryAcquire(key), key)
		assert.Equal(t, 300*time.Millisecond, k.Decide(key).RetryAfter)
	}
	clk.Advance(300 * time.Millisecond)
	assert.True(t, k.TryAcquire("a"))
	assert.NoError(t, k.Acquire(context.Background(), "b"))
}
