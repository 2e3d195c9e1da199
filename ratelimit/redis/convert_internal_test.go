package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// A change of rate converts the schedule on Redis as in-process (SPEC RC-4, RC-7): these
// tests read the store's grants exactly, each with the server's now of its decision
// (Grant.At - Wait), and run the same calls on an in-process Limiter whose manual clock is
// set to that same now before each call, so that both decide at one instant.

// hourly is 1 permit per hour; tenPerSecond, 10 per second (T = 100ms).
var (
	hourly       = ratelimit.Config{Permits: 1, Period: time.Hour}
	tenPerSecond = ratelimit.Config{Permits: 10, Period: time.Second}
	twoPerMinute = ratelimit.Config{Permits: 2, Period: time.Minute}
)

// twin is a store on Redis and an in-process limiter on a manual clock that take the same
// calls at the same instants: the clock's 0 is the server's now of the first grant.
type twin struct {
	t    *testing.T
	st   *store
	l    *ratelimit.Limiter
	clk  *clock.Manual
	now0 int64 // the server's now of the first grant; -1 before it
}

func newTwin(t *testing.T, cfg ratelimit.Config) *twin {
	t.Helper()
	_, st := newTestStore(t, cfg)
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Name("twin"), ratelimit.Permits(cfg.Permits), ratelimit.Period(cfg.Period),
		ratelimit.MaxWait(3*time.Hour), ratelimit.WithClock(clk))
	require.NoError(t, err)
	return &twin{t: t, st: st, l: l, clk: clk, now0: -1}
}

// reserve takes n permits at the rate of cfg on Redis, then in process at the server's
// now of that grant (reconfigured to cfg first when its rate differs), and checks that
// both wait the same. It returns the store's grant.
func (w *twin) reserve(cfg ratelimit.Config, n int) backend.Grant {
	w.t.Helper()
	g, _ := w.both(cfg, n)
	return g
}

// both is reserve, returning the in-process reservation too.
func (w *twin) both(cfg ratelimit.Config, n int) (backend.Grant, ratelimit.Reservation) {
	w.t.Helper()
	g := reserve(w.t, w.st, cfg, n, 3*time.Hour)
	require.Equal(w.t, backend.Admitted, g.Verdict)
	now := g.At - int64(g.Wait)
	if w.now0 < 0 {
		w.now0 = now
	}
	w.clk.AdvanceTo(time.Duration(now - w.now0))
	if c := w.l.Config(); c.Permits != cfg.Permits || c.Period != cfg.Period {
		c.Permits, c.Period = cfg.Permits, cfg.Period
		require.NoError(w.t, w.l.Reconfigure(c))
	}
	r, err := w.l.ReserveN(n)
	require.NoError(w.t, err)
	assert.Equal(w.t, r.Delay(), g.Wait, "%d permits at %v per %v, as in process", n, cfg.Permits, cfg.Period)
	return g, r
}

// SPEC RC-7: a raised quota on Redis. 1 permit per hour, taken; raised to 10 per second
// (T = 100ms): the next permit within one new T, as in process, and not an hour later.
// (Fault: the store kept the TAT written at the old rate: the next permit came 59m59s
// later.)
func TestRC7_RaisedQuotaOnRedisWithinOneNewInterval(t *testing.T) {
	w := newTwin(t, hourly)
	w.reserve(hourly, 1)
	g := w.reserve(tenPerSecond, 1)
	assert.LessOrEqual(t, g.Wait, 100*time.Millisecond, "within one new T")
	// The next ones 100ms apart, as in process.
	for range 3 {
		next := w.reserve(tenPerSecond, 1)
		assert.Equal(t, g.At+int64(100*time.Millisecond), next.At)
		g = next
	}
}

// SPEC RC-7: a lowered quota owes its spent permits at its own, slower, rate: 10 per
// second, 12 taken (the last 2 in one call), lowered to 2 per minute (T = 30s): the 12
// permits owed are 6 minutes, less the new burst of 1 minute, so the next permit comes
// 90s later. Then raised again, lowered again, with weights: Redis and in-process answer
// alike at every step.
func TestRC7_LoweredQuotaOnRedisAsInProcess(t *testing.T) {
	w := newTwin(t, tenPerSecond)
	for range 10 {
		w.reserve(tenPerSecond, 1)
	}
	w.reserve(tenPerSecond, 2)
	g := w.reserve(twoPerMinute, 1)
	// The server's clock ran between the first grant and this one: each moment of it paid
	// off the debt at the old rate, a T of 100ms, which the new rate counts at 30s, 300
	// times as long.
	elapsed := g.At - int64(g.Wait) - w.now0
	want := 90*time.Second - 300*time.Duration(elapsed)
	assert.InDelta(t, float64(want), float64(g.Wait), float64(time.Second),
		"12 permits owed at 30s each, less the burst and less what %v at the old rate paid", time.Duration(elapsed))
	w.reserve(twoPerMinute, 2)
	w.reserve(tenPerSecond, 3)
	w.reserve(twoPerMinute, 1)
}

// SPEC RC-7: the freed slot of a reservation canceled before a change is counted free by
// the conversion and then dropped, as in process.
func TestRC7_FreedSlotsConvertedOnRedisAsInProcess(t *testing.T) {
	w := newTwin(t, tenPerSecond)
	for range 10 {
		w.reserve(tenPerSecond, 1)
	}
	g2, r2 := w.both(tenPerSecond, 1)
	w.reserve(tenPerSecond, 1)
	// g2 stands between g1 and the last: its slot is kept free on both.
	require.True(t, w.st.cancel(context.Background(), g2))
	r2.Cancel()
	_, f := tat(t, mustClient(t, w.st), w.st)
	require.NotEmpty(t, f, "a freed slot")
	w.reserve(twoPerMinute, 1)
	_, f = tat(t, mustClient(t, w.st), w.st)
	assert.Empty(t, f, "the conversion drops the freed slots")
	w.reserve(twoPerMinute, 1)
}

// SPEC RC-7: a reservation granted before a change of rate, canceled after the schedule
// was converted, gives nothing back: its slot belongs to the old schedule. One granted
// after it gives its permit back.
func TestRC7_CancelAcrossAConversionOnRedisGivesNothingBack(t *testing.T) {
	c, st := newTestStore(t, hourly)
	ctx := context.Background()
	old := reserved(t, st, hourly, 1, 3*time.Hour)
	old2 := reserved(t, st, hourly, 1, 3*time.Hour) // the last one, whose cancel would move the TAT back
	fresh := reserved(t, st, tenPerSecond, 1, time.Hour)
	assert.Equal(t, old2.Epoch+1, fresh.Epoch, "the conversion counts")
	before, _ := tat(t, c, st)
	assert.False(t, st.cancel(ctx, old2), "granted before the conversion")
	assert.False(t, st.cancel(ctx, old))
	after, _ := tat(t, c, st)
	assert.Equal(t, before, after, "nothing given back")
	assert.True(t, st.cancel(ctx, fresh), "granted after it")
	back, _ := tat(t, c, st)
	assert.Equal(t, fresh.Prev, back, "the TAT moves back over it")
}

// SPEC RC-7: a key holding a bare TAT, as an earlier version wrote it, is read with no
// conversion (its rate is unknown), and rewritten with the rate of the call that moves
// it; a change of rate after that converts.
func TestRC7_BareTATKeyIsReadAsBefore(t *testing.T) {
	c, st := newTestStore(t, tenPerSecond)
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	require.NoError(t, err)
	presetKeys(t, c, st, now.UnixNano()+int64(time.Hour)) // bare: "<ns>"
	g := reserve(t, st, tenPerSecond, 1, 2*time.Hour)
	require.Equal(t, backend.Admitted, g.Verdict)
	assert.Greater(t, g.Wait, 59*time.Minute, "read at the call's rate, not converted")
	assert.Zero(t, g.Epoch)
	v, err := c.Get(ctx, st.keys[0]).Result()
	require.NoError(t, err)
	assert.Regexp(t, `^\d+ 100000000 10 0$`, v, "rewritten with the rate")
	tatNs, err := TATOf(v)
	require.NoError(t, err)
	assert.Equal(t, g.Next, tatNs)
	// 20 per second: the hour owed at 100ms a permit is owed at 50ms, half an hour.
	g2 := reserve(t, st, ratelimit.Config{Permits: 20, Period: time.Second}, 1, 3*time.Hour)
	require.Equal(t, backend.Admitted, g2.Verdict)
	assert.Equal(t, int64(1), g2.Epoch, "converted from 10 per second")
	assert.InDelta(t, float64(30*time.Minute), float64(g2.Wait), float64(time.Second))
	v, err = c.Get(ctx, st.keys[0]).Result()
	require.NoError(t, err)
	assert.Regexp(t, `^\d+ 50000000 20 1$`, v)
}

// mustClient returns a client of st's server.
func mustClient(t *testing.T, st *store) *goredis.Client {
	t.Helper()
	c, ok := st.b.client.(*goredis.Client)
	require.True(t, ok)
	return c
}
