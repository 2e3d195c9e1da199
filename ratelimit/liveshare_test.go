package ratelimit_test

import (
	"context"
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

// liveLocal is a backend whose stores always answer Local, and whose share changes while
// the limiters run, as a backend that counts the live instances does.
type liveLocal struct {
	scriptedStore
	share atomic.Int64
}

func (b *liveLocal) LocalShare() int                             { return int(b.share.Load()) }
func (b *liveLocal) Bind(backend.Binding) (backend.Store, error) { return &b.scriptedStore, nil }

func newLiveLocal(share int) *liveLocal {
	b := &liveLocal{scriptedStore: scriptedStore{grant: backend.Grant{Verdict: backend.Local}}}
	b.share.Store(int64(share))
	return b
}

// SPEC RL-35: the share is read at each decision in-process, not once at the build: a
// limiter built at a share of 4 takes a quarter of its quota, then half of it as soon as
// the backend's share is 2, then all of it at 1. The schedule is kept as time: the TAT
// the quarter share left is read at the new rate (here, idle, so a full new burst).
func TestRL35_TheLocalShareIsReadAtEachDecision(t *testing.T) {
	clk := clock.NewManual()
	b := newLiveLocal(4)
	l, err := ratelimit.New(ratelimit.Name("live"), ratelimit.Permits(20), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(b))
	require.NoError(t, err)
	assert.Equal(t, 5, l.Snapshot().AvailablePermits, "20/4")
	assert.Equal(t, 5, passes(l))
	clk.Advance(199 * time.Millisecond) // 4·T = 200ms
	assert.Zero(t, passes(l))
	clk.Advance(time.Millisecond)
	assert.Equal(t, 1, passes(l))

	b.share.Store(2)
	clk.Advance(time.Hour)
	assert.Equal(t, 10, l.Snapshot().AvailablePermits, "20/2, at once")
	assert.Equal(t, 10, passes(l))
	clk.Advance(100 * time.Millisecond) // 2·T
	assert.Equal(t, 1, passes(l))

	b.share.Store(1)
	clk.Advance(time.Hour)
	assert.Equal(t, 20, passes(l), "the whole quota")
}

// SPEC RL-35: what the local schedule owes is kept as time when the share changes: a
// quarter share's burst spent (the TAT 800ms ahead, less its tolerance) at a share of 2
// frees its next permit when the TAT, read at 2·T, allows it, and never more than the
// new burst: over any stretch, one burst of the share in force plus its rate.
func TestRL35_TheScheduleIsKeptAsTime(t *testing.T) {
	clk := clock.NewManual()
	b := newLiveLocal(4)
	l, err := ratelimit.New(ratelimit.Name("as-time"), ratelimit.Permits(20), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(b))
	require.NoError(t, err)
	require.Equal(t, 5, passes(l)) // TAT = now + 5·200ms = 1s
	b.share.Store(2)
	// At 2·T = 100ms and a burst of 10, tolerance 900ms: the TAT 1s ahead frees one
	// permit 100ms later.
	assert.Zero(t, passes(l))
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 1, passes(l))
	clk.Advance(time.Second)
	assert.Equal(t, 10, passes(l), "never more than the new burst")
}

// SPEC RL-35: the keyed limiter reads the share at each decision in-process too, for
// its calls, Decide and AvailablePermits.
func TestRL35_KeyedReadsTheShareLive(t *testing.T) {
	clk := clock.NewManual()
	b := newLiveLocal(4)
	k, err := keyed.New[string](ratelimit.Name("keyed-live"), ratelimit.Permits(20), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(b))
	require.NoError(t, err)
	assert.Equal(t, 5, k.AvailablePermits("a"))
	d := k.Decide(context.Background(), "a")
	assert.Equal(t, 5, d.Limit)
	assert.Equal(t, 4, d.Remaining)
	b.share.Store(2)
	clk.Advance(time.Hour)
	assert.Equal(t, 10, k.AvailablePermits("a"))
	d = k.Decide(context.Background(), "a")
	assert.Equal(t, 10, d.Limit)
	assert.Equal(t, 9, d.Remaining)
	n := 0
	for n < 100 && k.TryAcquire("a", 1) == nil {
		n++
	}
	assert.Equal(t, 9, n)
}

// SPEC RL-35: a Reconfigure converts the local schedule at the share in force then.
func TestRL35_ReconfigureAtTheShareInForce(t *testing.T) {
	clk := clock.NewManual()
	b := newLiveLocal(4)
	l, err := ratelimit.New(ratelimit.Name("reconf-live"), ratelimit.Permits(20), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(b))
	require.NoError(t, err)
	require.Equal(t, 5, passes(l))
	b.share.Store(2)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 20, Period: 10 * time.Second}))
	assert.Zero(t, passes(l), "no spent permit came back")
	clk.Advance(time.Hour)
	assert.Equal(t, 10, passes(l), "the new burst at the share in force, 20/2")
}

// SPEC RL-35: the share costs one read of the backend per decision in-process, and no
// allocation while it stays the same; a decision on the backend does not read it.
func TestRL35_LiveShareAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	b := newLiveLocal(4)
	l, err := ratelimit.New(ratelimit.Name("allocs-live"), ratelimit.Permits(1_000_000), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(b))
	require.NoError(t, err)
	require.True(t, l.TryAcquire()) // the share's rate is made
	allocs := testing.AllocsPerRun(1000, func() {
		clk.Advance(time.Millisecond)
		_ = l.TryAcquire()
	})
	assert.Zero(t, allocs)

	c := &countingShare{flappingStore: &flappingStore{share: 4}}
	l, err = ratelimit.New(ratelimit.Name("on-backend"), ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(c))
	require.NoError(t, err)
	for range 10 {
		require.True(t, l.TryAcquire())
	}
	assert.Equal(t, 10, l.Snapshot().AvailablePermits)
	assert.Zero(t, c.reads.Load(), "the store decided: the share was not read")
	c.local.Store(true)
	require.True(t, l.TryAcquire())
	assert.Equal(t, int64(1), c.reads.Load(), "one read per decision in-process")
}

// countingShare counts the reads of its share.
type countingShare struct {
	*flappingStore
	reads atomic.Int64
}

func (c *countingShare) LocalShare() int                             { c.reads.Add(1); return c.flappingStore.LocalShare() }
func (c *countingShare) Bind(backend.Binding) (backend.Store, error) { return c.flappingStore, nil }
