package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// tenPerSecond is the raised quota of the RC-7 tests: one permit every 100ms.
var tenPerSecond = ratelimit.Config{Permits: 10, Period: time.Second}

// SPEC RC-7: 1 permit per hour, taken at 0; 1s later the quota
// becomes 10 per second. What was owed, 3599s of an hour, is 0.9997 of a permit, owed
// again at the new rate: the next permit is free within 100ms, not at 1h, then one every
// 100ms, and a minute later the new burst is full.
func TestRC7_RaisedQuotaGivesItsNextPermitWithinOneNewInterval(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.True(t, l.TryAcquire())
	clk.AdvanceTo(time.Second)
	require.NoError(t, l.Reconfigure(tenPerSecond))

	r, err := l.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Positive(t, r.Delay())
	assert.LessOrEqual(t, r.Delay(), 100*time.Millisecond, "within one new T, not 59m58s")
	clk.Advance(r.Delay())
	assert.True(t, l.TryAcquire())
	assert.False(t, l.TryAcquire())
	clk.Advance(100 * time.Millisecond)
	assert.True(t, l.TryAcquire(), "then one every 100ms")
	assert.False(t, l.TryAcquire())

	clk.AdvanceTo(62 * time.Second)
	assert.Equal(t, 10, admitted(l, 20), "61s after the change: the new burst")
}

// SPEC RC-7: the same for a keyed limiter: the key that spent its permit gets the next
// within one new T; a key idle at the change (every permit back) admits the new burst at
// once, as a new key does; a key never seen too.
func TestKeyed_RC7_RaisedQuotaConvertsEveryKey(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.True(t, k.TryAcquire("spent", 1) == nil)
	require.True(t, k.TryAcquire("idle", 1) == nil)
	clk.AdvanceTo(time.Hour + time.Second)
	require.True(t, k.TryAcquire("spent", 1) == nil)
	clk.Advance(time.Second)
	require.NoError(t, k.Reconfigure(tenPerSecond))

	r, err := k.Reserve("spent", 1)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Positive(t, r.Delay())
	assert.LessOrEqual(t, r.Delay(), 100*time.Millisecond)
	assert.Equal(t, 10, keyedAdmitted(k, "idle", 20))
	assert.Equal(t, 10, keyedAdmitted(k, "new", 20))
	clk.Advance(r.Delay())
	assert.Equal(t, 1, keyedAdmitted(k, "spent", 20))
}

// SPEC RC-7: a reservation granted before the change keeps its turn (its Delay is a
// promise), and what it owes counts at the new rate: 1 per hour with MaxWait 2h, one
// permit taken and one reserved for 1h; at 1s the quota becomes 10 per second. A new
// call waits the new T for each permit owed, the two, not an hour. Canceled after the
// change, the reservation gives nothing back: its slot was converted with the rest.
func TestRC7_ReservationsGrantedBeforeKeepTheirTurn(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(2*time.Hour))
	require.True(t, l.TryAcquire())
	held, err := l.Reserve()
	require.NoError(t, err)
	require.Equal(t, time.Hour, held.Delay())
	clk.AdvanceTo(time.Second)
	raised := tenPerSecond
	raised.MaxWait = 2 * time.Hour
	require.NoError(t, l.Reconfigure(raised))

	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Greater(t, r.Delay(), 100*time.Millisecond)
	assert.LessOrEqual(t, r.Delay(), 200*time.Millisecond, "one new T for each permit owed")
	r.Cancel() // the last one, granted after the change: its slot comes back
	before := l.Snapshot().AvailablePermits
	held.Cancel()
	assert.Equal(t, before, l.Snapshot().AvailablePermits, "a slot of the old schedule is not given back")
	r2, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, r.Delay(), r2.Delay())
}

// SPEC RC-7: a lowered quota owes its spent permits at its own, slower, rate, fractions
// included: 10 per second, all taken at 0; at 50ms 9.5 are owed, half a permit free.
// The quota becomes 1 per hour: half of its permit is free, so it is whole 30 minutes
// later. With more free than the new Permits, the new Permits are free at once.
func TestRC7_LoweredQuotaOwesAtItsOwnRate(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, configOf(tenPerSecond)...)
	require.NoError(t, l.TryAcquireN(10))
	clk.AdvanceTo(50 * time.Millisecond)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 1, Period: time.Hour}))
	r, err := l.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 30*time.Minute, r.Delay())

	m := newLimiter(t, clk, configOf(tenPerSecond)...)
	require.NoError(t, m.TryAcquireN(5))
	require.NoError(t, m.Reconfigure(ratelimit.Config{Permits: 2, Period: time.Hour}))
	assert.Equal(t, 2, admitted(m, 10), "5 were free: the new Permits, 2")
	r, err = m.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 30*time.Minute, r.Delay())
}
