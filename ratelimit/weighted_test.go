package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// SPEC RL-17: 5 permits per second. A call for 6 can never pass: it fails with the burst
// sentinel, not with ErrExceeded, and takes nothing. A call for 5 on a full bucket passes,
// and the next 5 wait exactly the second that refills them.
func TestRL17_WeightedPermits(t *testing.T) {
	clk := clock.NewManual()
	var log []policy.Event
	l := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second),
		ratelimit.OnEvent(func(e policy.Event) { log = append(log, e) }))

	err := l.TryAcquireN(6)
	require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
	assert.NotErrorIs(t, err, ratelimit.ErrExceeded, "waiting would not help")
	var be *ratelimit.ExceededError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "test", be.InstanceID())
	_, ok := be.RetryIn()
	assert.False(t, ok, "no wait lets it through")
	assert.Equal(t, `ratelimit: a call for more than the 5 permits of "test" (its burst) can never be granted`, err.Error())
	require.Len(t, log, 1)
	assert.Equal(t, ratelimit.EventRejected, log[0].Kind)
	assert.Zero(t, log[0].RetryAfter, "no retry-after that would invite a retry")
	assert.Equal(t, 5, l.Snapshot().AvailablePermits, "nothing taken")

	r, err := l.ReserveN(6)
	require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
	assert.Zero(t, r.Delay())
	require.ErrorIs(t, l.AcquireN(context.Background(), 6), ratelimit.ErrExceedsBurst)
	assert.Equal(t, 5, l.Snapshot().AvailablePermits)

	require.NoError(t, l.TryAcquireN(5), "n = Permits on a full bucket")
	assert.Zero(t, l.Snapshot().AvailablePermits)
	r, err = l.ReserveN(5)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay())
}

// SPEC RL-17: n < 1 is a configuration error with code R4C-ATR-003, on every method and
// every kind of limiter; nothing is taken.
func TestRL17_CountBelowOne(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second))
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second))
	off := newLimiter(t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	for _, n := range []int{0, -1, -1 << 62} {
		_, errR := l.ReserveN(n)
		_, errK := k.Reserve("a", n)
		for _, err := range []error{l.TryAcquireN(n), l.AcquireN(context.Background(), n), errR,
			k.TryAcquire("a", n), k.Acquire(context.Background(), "a", n), errK, off.TryAcquireN(n)} {
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce, "n=%d", n)
			assert.Equal(t, r4c.BadPermits, ce.Code)
		}
	}
	assert.Equal(t, 5, l.Snapshot().AvailablePermits)
	assert.Equal(t, 5, keyedAdmitted(k, "a", 10), "nothing taken")
}

// SPEC RL-17, RL-7, RL-9: 20 permits per 2 s (T = 100ms). AcquireN(15) at 0; ReserveN(10)
// at 100ms waits 400ms; a 2-permit reservation at 200ms waits 500ms, behind the 10.
// Canceling the 10 at 300ms frees its slot (the schedule's 1.5 s to 2.5 s), and the 2
// keep their turn: at 300ms, 8 permits are free at once (a slot ending at 2.3 s is free
// at 300ms), 9 are not; 10 are free at 500ms. Without the slot, none would be free
// before 800ms.
func TestRL17_WeightedReservationsQueueAndCancel(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(20), ratelimit.Period(2*time.Second), ratelimit.MaxWait(time.Second))

	require.NoError(t, l.AcquireN(context.Background(), 15))
	clk.AdvanceTo(100 * time.Millisecond)
	r10, err := l.ReserveN(10)
	require.NoError(t, err)
	assert.Equal(t, 400*time.Millisecond, r10.Delay())
	clk.AdvanceTo(200 * time.Millisecond)
	r2, err := l.ReserveN(2)
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, r2.Delay(), "it queues behind the 10")

	clk.AdvanceTo(300 * time.Millisecond)
	assert.Zero(t, l.Snapshot().AvailablePermits)
	r10.Cancel()
	assert.Equal(t, 8, l.Snapshot().AvailablePermits)
	assert.ErrorIs(t, l.TryAcquireN(9), ratelimit.ErrExceeded)
	again, err := l.ReserveN(10)
	require.NoError(t, err)
	assert.Equal(t, 200*time.Millisecond, again.Delay(), "the freed slot, at its own time")
	assert.Zero(t, l.Snapshot().AvailablePermits)
	next, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, next.Delay(), "the next single permit comes after the 2, at 800ms")
}

// SPEC RL-17: a weighted call allocates nothing, admitted, refused, or refused for
// asking more than the burst.
func TestRL17_WeightedAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	admit := newLimiter(t, clk, ratelimit.Permits(1_000_000), ratelimit.Period(time.Nanosecond*1_000_000))
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))
	require.NoError(t, k.TryAcquire("a", 1))
	ctx := context.Background()
	for name, f := range map[string]func(){
		"TryAcquireN":       func() { _ = admit.TryAcquireN(3) },
		"AcquireN":          func() { _ = admit.AcquireN(ctx, 3) },
		"ReserveN":          func() { _, _ = admit.ReserveN(3) },
		"burst":             func() { _ = admit.TryAcquireN(2_000_000) },
		"keyed TryAcquireN": func() { _ = k.TryAcquire("a", 4) },
		"keyed burst":       func() { _, _ = k.Reserve("a", 11) },
	} {
		assert.Zero(t, testing.AllocsPerRun(200, f), name)
	}
}

// SPEC RL-17: a disabled limiter lets any call for 1..Permits pass; more is still the
// burst error, which is about the call and not the load.
func TestRL17_DisabledWeighted(t *testing.T) {
	l := newLimiter(t, clock.NewManual(), ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	for range 10 {
		require.NoError(t, l.TryAcquireN(5))
	}
	assert.True(t, errors.Is(l.TryAcquireN(6), ratelimit.ErrExceedsBurst))
	var zero ratelimit.Limiter
	assert.ErrorIs(t, zero.TryAcquireN(1), ratelimit.ErrExceeded, "a zero Limiter admits nothing")
}
