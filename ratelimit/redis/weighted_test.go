package redis_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// Weighted permits, live reconfiguration and the slots of canceled reservations, through
// a Limiter on Redis, on the server's clock. A delay measured after the calls of a
// scenario lies in (x - elapsed, x], x being the delay of a call made at the scenario's
// start (its permit time does not depend on when the call is made); the exact permit
// times are checked on the store's tokens in schedule_internal_test.go.

// 5 permits per second: a call for 6 can never pass (ErrExceedsBurst, not ErrExceeded),
// takes nothing and sends nothing; 5 pass at once; 5 more within MaxWait 2s wait 1s.
func TestWeighted_BurstOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		var cmds commands
		c.AddHook(&cmds)
		onTime(t, func(attempt int) bool {
			l := limiter(t, b, fmt.Sprint("weighted-", attempt), ratelimit.Permits(5), ratelimit.Period(time.Second),
				ratelimit.MaxWait(2*time.Second))
			cmds.take()
			err := l.TryAcquireN(6)
			require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
			assert.NotErrorIs(t, err, ratelimit.ErrExceeded)
			assert.Empty(t, cmds.take(), "refused before Redis is asked")
			assert.Equal(t, 5, l.Snapshot().AvailablePermits)

			start := time.Now()
			require.NoError(t, l.TryAcquireN(5))
			free := l.Snapshot().AvailablePermits
			one := l.TryAcquireN(1)
			r, err := l.ReserveN(5)
			elapsed := time.Since(start)
			if elapsed >= 800*time.Millisecond {
				return false
			}
			assert.Zero(t, free)
			require.ErrorIs(t, one, ratelimit.ErrExceeded)
			require.NoError(t, err)
			between(t, r.Delay(), time.Second-elapsed, time.Second, "5 permits 1s after the first 5")
			_, err = l.ReserveN(6)
			require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
			return true
		})
	})
}

// 20 permits per 2s (T = 100ms): AcquireN(15) passes at once; ReserveN(10) is free 500ms
// after it (a wait of 400ms for a call made 100ms later), a 2-permit reservation 700ms
// after it (500ms for a call made 200ms later). Canceling the 10, behind which the 2
// stand, frees their slot: 5 permits pass at once, 5 more wait until 500ms, and a single
// permit after them goes behind the 2, at 800ms. Together: never more than the rate
// allows. (SPEC RL-7, RL-9a.)
func TestWeighted_ScheduleOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		onTime(t, func(attempt int) bool {
			l := limiter(t, b, fmt.Sprint("schedule-", attempt), ratelimit.Permits(20), ratelimit.Period(2*time.Second),
				ratelimit.MaxWait(time.Second))
			start := time.Now()
			require.NoError(t, l.AcquireN(context.Background(), 15))
			r10, err := l.ReserveN(10)
			require.NoError(t, err)
			r2, err := l.ReserveN(2)
			require.NoError(t, err)
			r10.Cancel() // the 2 stand behind it: its slot is free again
			first := l.TryAcquireN(5)
			rest := l.TryAcquireN(5)
			r5, err5 := l.ReserveN(5)
			r1, err1 := l.ReserveN(1)
			_, err20 := l.ReserveN(20)
			elapsed := time.Since(start)
			if elapsed >= 400*time.Millisecond {
				return false
			}
			between(t, r10.Delay(), 500*time.Millisecond-elapsed, 500*time.Millisecond, "10 permits")
			between(t, r2.Delay(), 700*time.Millisecond-elapsed, 700*time.Millisecond, "2 permits")
			require.NoError(t, first, "the freed slot's first 5 permits, at once")
			require.ErrorIs(t, rest, ratelimit.ErrExceeded, "the rest of the slot is not free yet")
			require.NoError(t, err5)
			require.NoError(t, err1)
			between(t, r5.Delay(), 500*time.Millisecond-elapsed, 500*time.Millisecond, "the rest of the freed slot")
			between(t, r1.Delay(), 800*time.Millisecond-elapsed, 800*time.Millisecond, "behind the 2")
			require.ErrorIs(t, err20, ratelimit.ErrExceeded, "nothing more within 1s")
			return true
		})
	})
}

// Reconfigure on a limiter with a Backend: the store takes the new rate from the next call,
// which converts what the schedule owes. At 10 per second (T = 100ms), after the burst, 4
// permits are free 400ms later and the next ones come 100ms apart; at 20 per second (T =
// 50ms) the 16 permits owed (1.6s at the old T, less the time since) are owed at 50ms,
// and the next ones come 50ms apart. The limiter keeps its backend. (SPEC RC-1, RC-7.)
func TestReconfigure_OnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		onTime(t, func(attempt int) bool {
			var log events
			l := limiter(t, b, fmt.Sprint("reconfigure-", attempt), ratelimit.Permits(10), ratelimit.Period(time.Second),
				ratelimit.MaxWait(2*time.Second), ratelimit.OnEvent(log.add))
			start := time.Now()
			require.NoError(t, l.TryAcquireN(10))
			r4, err := l.ReserveN(4)
			require.NoError(t, err)
			slow1, err := l.Reserve()
			require.NoError(t, err)
			slow2, err := l.Reserve()
			require.NoError(t, err)
			cfg := l.Config()
			cfg.Permits = 20
			require.NoError(t, l.Reconfigure(cfg))
			before := time.Now()
			fast1, err := l.Reserve()
			require.NoError(t, err)
			fast2, err := l.Reserve()
			require.NoError(t, err)
			between2 := time.Since(before)
			elapsed := time.Since(start)
			if elapsed >= 400*time.Millisecond {
				return false
			}
			between(t, r4.Delay(), 400*time.Millisecond-elapsed, 400*time.Millisecond, "4 permits after the burst")
			between(t, slow1.Delay(), 500*time.Millisecond-elapsed, 500*time.Millisecond, "T = 100ms")
			between(t, slow2.Delay(), 600*time.Millisecond-elapsed, 600*time.Millisecond, "T = 100ms")
			between(t, fast1.Delay(), 350*time.Millisecond-elapsed, 350*time.Millisecond, "16 permits owed at T = 50ms, from the next call")
			between(t, fast2.Delay(), 400*time.Millisecond-elapsed, 400*time.Millisecond, "T = 50ms")
			// Two calls made between2 apart: their delays differ by the new T less that time.
			between(t, fast2.Delay()-fast1.Delay(), 50*time.Millisecond-between2, 50*time.Millisecond, "spacing after the change")
			changed, ok := log.first(policy.ConfigChanged)
			require.True(t, ok)
			assert.Equal(t, []string{"permits"}, changed.Changed)
			assert.Zero(t, l.Snapshot().AvailablePermits)
			return true
		})
	})
}

// onTime runs run, a scenario on the real clock, until one run takes no longer than the
// waits it builds, at most 3 times: run returns false, before asserting anything that
// depends on it, when it was too slow (a loaded machine descheduled it past a permit's
// time). Each run uses keys of its own (attempt is 0, 1, 2).
func onTime(t *testing.T, run func(attempt int) bool) {
	t.Helper()
	for attempt := range 3 {
		if run(attempt) {
			return
		}
		t.Logf("run %d took longer than its waits: again", attempt)
	}
	t.Fatal("no run within its waits in 3 attempts")
}

// The freed-slots key: "{" + prefix + name + "}:freed", with the limiter's hash tag,
// holding the freed slots as "start-end" in seconds since the epoch with 9 decimals,
// expiring when the last one ends; it is deleted when no slot is left.
func TestKeyLayout_FreedSlots(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		ctx := context.Background()
		l := limiter(t, b, "freed", ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Hour))
		require.True(t, l.TryAcquire())
		r1, err := l.Reserve()
		require.NoError(t, err)
		r2, err := l.Reserve()
		require.NoError(t, err)
		key := rlredis.Key(b, "freed") + ":freed"
		assert.Zero(t, c.Exists(ctx, key).Val(), "none before a cancel")

		r1.Cancel()
		v, err := c.Get(ctx, key).Result()
		require.NoError(t, err)
		tv, err := c.Get(ctx, rlredis.Key(b, "freed")).Result()
		require.NoError(t, err)
		tat, err := rlredis.TATOf(tv)
		require.NoError(t, err)
		from, to, ok := strings.Cut(v, "-")
		require.True(t, ok, v)
		assert.Regexp(t, `^\d{10}\.\d{9}$`, from)
		assert.Regexp(t, `^\d{10}\.\d{9}$`, to)
		assert.Equal(t, tat-int64(time.Second), mustNanos(t, to), "r1's slot ends where r2's begins")
		assert.Equal(t, tat-2*int64(time.Second), mustNanos(t, from), "and starts where the first permit's ends")
		ttl, err := c.PTTL(ctx, key).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Second, "until the slot's end, 2s from the first call")
		assert.LessOrEqual(t, ttl, 2*time.Second)

		r, err := l.Reserve()
		require.NoError(t, err)
		between(t, r.Delay(), 0, time.Second, "r1's slot again")
		assert.Zero(t, c.Exists(ctx, key).Val(), "used up: deleted")
		r.Cancel()
		r2.Cancel() // the tail: the TAT moves back over r2, then over r's freed slot
		assert.Zero(t, c.Exists(ctx, key).Val())
		assert.Zero(t, l.Snapshot().AvailablePermits, "the first permit is spent")
		r, err = l.Reserve()
		require.NoError(t, err)
		between(t, r.Delay(), 0, time.Second, "the first slot after the burst again")
	})
}

// mustNanos reads "seconds.nanoseconds" as nanoseconds.
func mustNanos(t *testing.T, v string) int64 {
	t.Helper()
	sec, nsec, ok := strings.Cut(v, ".")
	require.True(t, ok, v)
	s, err := strconv.ParseInt(sec, 10, 64)
	require.NoError(t, err)
	n, err := strconv.ParseInt(nsec, 10, 64)
	require.NoError(t, err)
	return s*int64(time.Second) + n
}
