package redis_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// The local limiter's rules (SPEC RL-2…RL-11), on a real Redis server and the real clock.
// Permits come back slowly (T of seconds) where a test must not see one come back, and
// bounds allow for the time the test itself takes: a delay measured after k·T of
// reservations lies in (k·T - elapsed, k·T].

// ruleTimeout bounds each call to Redis in the tests of the rules: generous, so that a
// call slowed down by a loaded machine is not taken as Redis failing, which would hand
// the decision to the in-process fallback (with a burst of its own) in the middle of a
// test about the shared state.
const ruleTimeout = 5 * time.Second

// newShared returns a client of the tests' server (or cluster, under onEach) and a Backend on it with a key prefix of
// the test's own and a timeout of ruleTimeout; opts come after and may change both.
func newShared(t *testing.T, opts ...rlredis.Option) (goredis.UniversalClient, backend.Backend) {
	t.Helper()
	c := testClient(t)
	requireServer(t, c)
	b, err := rlredis.New(c, append([]rlredis.Option{rlredis.Prefix(rlredis.UniquePrefix(t)), rlredis.Timeout(ruleTimeout)}, opts...)...)
	require.NoError(t, err)
	return c, b
}

// limiter returns a limiter named name on b.
func limiter(t *testing.T, b backend.Backend, name string, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(append([]ratelimit.Option{ratelimit.Name(name), ratelimit.WithBackend(b)}, opts...)...)
	require.NoError(t, err)
	return l
}

func admitted(l *ratelimit.Limiter, atMost int) int {
	n := 0
	for n < atMost && l.TryAcquire() {
		n++
	}
	return n
}

// between asserts lo < d <= hi.
func between(t *testing.T, d, lo, hi time.Duration, msg string) {
	t.Helper()
	assert.Greater(t, d, lo, msg)
	assert.LessOrEqual(t, d, hi, msg)
}

// SPEC RL-3, RL-6: the seed's burst: ten calls pass, the eleventh is rejected with the
// limiter's own rejection; a second limiter on the same name, standing for another
// process, shares the spent burst.
func TestRL3_BurstOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "search", ratelimit.Permits(10), ratelimit.Period(100*time.Second)) // T = 10s
		assert.Equal(t, 10, admitted(l, 20))
		assert.False(t, l.TryAcquire(), "the 11th call")
		err := l.Acquire(context.Background())
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		rejection := l.TryAcquireN(1)
		assert.Same(t, rejection, err, "one preallocated rejection per limiter (RL-6)")
		_, err = l.Reserve()
		assert.Same(t, rejection, err)

		_, b2 := backendOn(t, b)
		other := limiter(t, b2, "search", ratelimit.Permits(10), ratelimit.Period(100*time.Second))
		assert.False(t, other.TryAcquire(), "the quota is shared")
		assert.Zero(t, other.Snapshot().AvailablePermits)
		unrelated := limiter(t, b2, "other", ratelimit.Permits(10), ratelimit.Period(100*time.Second))
		assert.Equal(t, 10, admitted(unrelated, 20), "another name is another quota")
	})
}

// backendOn returns a new client and Backend with the same server and prefix as b: another
// process's view of the same quotas.
func backendOn(t *testing.T, b backend.Backend) (goredis.UniversalClient, backend.Backend) {
	t.Helper()
	c := testClient(t)
	b2, err := rlredis.New(c, rlredis.Prefix(rlredis.PrefixOf(b)), rlredis.Timeout(ruleTimeout))
	require.NoError(t, err)
	return c, b2
}

// SPEC RL-3: unused permits accumulate up to Permits, never more: a fresh limiter, however
// long idle, has exactly Permits.
func TestRL3_BurstNeverExceedsPermitsOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "idle", ratelimit.Permits(7), ratelimit.Period(700*time.Second))
		assert.Equal(t, 7, l.Snapshot().AvailablePermits)
		assert.Equal(t, 7, admitted(l, 100))
	})
}

// SPEC RL-4, RL-5: after the burst, one call every T. 8 goroutines hammer the limiter for
// a second; for every pair of admitted calls i ≤ j, the calls admitted between them are
// at most Permits + floor(d/T), with d measured from before call i started to after call j
// returned (the server decided both within that span); and at least 80% of the bound over
// the whole run passes.
func TestRL4_SteadyRateOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		const permits = 4
		l := limiter(t, b, "steady", ratelimit.Permits(permits), ratelimit.Period(400*time.Millisecond)) // T = 100ms
		T := gcra.Interval(l.Config().Permits, l.Config().Period)

		type span struct{ start, end time.Duration }
		var (
			mu    sync.Mutex
			spans []span
		)
		origin := time.Now()
		stop := origin.Add(time.Second)
		done := make(chan struct{})
		for range 8 {
			go func() {
				defer func() { done <- struct{}{} }()
				for time.Now().Before(stop) {
					start := time.Since(origin)
					if l.TryAcquire() {
						end := time.Since(origin)
						mu.Lock()
						spans = append(spans, span{start, end})
						mu.Unlock()
					}
				}
			}()
		}
		for range 8 {
			<-done
		}
		elapsed := time.Since(origin)

		// Sort by start: admissions are ordered by the server's decisions, which lie in their
		// spans; the bound over [start_i, end_j] holds for any i ≤ j in start order.
		for i := 1; i < len(spans); i++ {
			for j := i; j > 0 && spans[j].start < spans[j-1].start; j-- {
				spans[j], spans[j-1] = spans[j-1], spans[j]
			}
		}
		for i := range spans {
			for j := i; j < len(spans); j++ {
				d := spans[j].end - spans[i].start
				if d < 0 {
					continue
				}
				if bound := permits + int(d/T); j-i+1 > bound {
					t.Fatalf("%d calls admitted within %v, bound %d (RL-5)", j-i+1, d, bound)
				}
			}
		}
		bound := permits + int(elapsed/T)
		assert.LessOrEqual(t, len(spans), bound, "RL-5 over %v", elapsed)
		// At least 80% of what the span in which calls were started allows: a loaded
		// machine can stretch elapsed with calls that started before the end and return
		// late, and no call starts after it to use that time.
		low := permits + int(stop.Sub(origin)/T)
		assert.GreaterOrEqual(t, float64(len(spans)), 0.8*float64(low), "admitted %d of %d over %v", len(spans), low, stop.Sub(origin))
	})
}

// SPEC RL-7, RL-9, RL-9a, RL-9b: permits=5, period=5s, maxWait=2.5s. After the burst,
// reservations wait 1s, then 2s; the next is refused with a retry-after of 3s. Cancelling
// the 1s reservation, which the 2s one stands behind, frees its slot, which the next
// reservation takes (1s) before any later one; cancelling the 2s tail frees its slot.
// Cancelling the 1s one again, then the 2s tail, moves the TAT back over both.
func TestRL7_ReservationsOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "reserve", ratelimit.Permits(5), ratelimit.Period(5*time.Second), ratelimit.MaxWait(2500*time.Millisecond))
		start := time.Now()
		for range 5 {
			r, err := l.Reserve()
			require.NoError(t, err)
			require.Zero(t, r.Delay())
		}
		r1, err := l.Reserve()
		require.NoError(t, err)
		r2, err := l.Reserve()
		require.NoError(t, err)
		refused, rerr := l.Reserve()
		elapsed := time.Since(start)
		require.Less(t, elapsed, time.Second, "the test must run well within T")
		between(t, r1.Delay(), time.Second-elapsed, time.Second, "first reservation after the burst")
		between(t, r2.Delay(), 2*time.Second-elapsed, 2*time.Second, "second reservation")
		require.ErrorIs(t, rerr, ratelimit.ErrExceeded)
		between(t, refused.Delay(), 3*time.Second-elapsed, 3*time.Second, "retry-after (RL-9b)")

		r1.Cancel() // r2 stands behind it: its slot is free (RL-9a)
		again, err := l.Reserve()
		elapsed = time.Since(start)
		require.NoError(t, err)
		between(t, again.Delay(), time.Second-elapsed, time.Second, "r1's slot, before any later one")
		shadowed, err := l.Reserve()
		elapsed = time.Since(start)
		require.ErrorIs(t, err, ratelimit.ErrExceeded, "nothing else is free")
		between(t, shadowed.Delay(), 3*time.Second-elapsed, 3*time.Second, "retry-after")

		r2.Cancel() // the tail: its slot is free again
		r, err := l.Reserve()
		elapsed = time.Since(start)
		require.NoError(t, err)
		between(t, r.Delay(), 2*time.Second-elapsed, 2*time.Second, "the tail's slot again")
		refused.Cancel() // a refused reservation holds nothing
		_, err = l.Reserve()
		require.ErrorIs(t, err, ratelimit.ErrExceeded)

		again.Cancel() // r stands behind it: freed
		r.Cancel()     // the tail: the TAT moves back over r, then over again's slot
		first, err := l.Reserve()
		elapsed = time.Since(start)
		require.NoError(t, err)
		between(t, first.Delay(), time.Second-elapsed, time.Second, "the first slot after the burst")
		second, err := l.Reserve()
		elapsed = time.Since(start)
		require.NoError(t, err)
		between(t, second.Delay(), 2*time.Second-elapsed, 2*time.Second, "then the next, at the TAT")
	})
}

// SPEC RL-9: cancelling a reservation whose permit time has passed restores nothing. On a
// real clock that includes an immediate reservation canceled a moment later, as for an
// in-process limiter on the system clock.
func TestRL9_CancelOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		for _, l := range []*ratelimit.Limiter{
			limiter(t, b, "cancel", ratelimit.Permits(2), ratelimit.Period(200*time.Second)),
			limiter(t, nil, "in-process", ratelimit.Permits(2), ratelimit.Period(200*time.Second)),
		} {
			r, err := l.Reserve()
			require.NoError(t, err)
			require.Zero(t, r.Delay())
			time.Sleep(time.Millisecond) // the permit's instant passes on the real clock
			r.Cancel()
			assert.Equal(t, 1, l.Snapshot().AvailablePermits, "%s: the immediate permit is spent", l.InstanceID())
		}

		// 4 permits per second: after the burst, permits 250ms and 500ms away (a loaded
		// machine would have to stall that long between the burst and the reservations to
		// make them immediate), whose slots end 1s later (the burst's length), so the TAT
		// stays ahead while the test runs. Once their time has passed, canceling them, the
		// tail or the one before it, changes nothing: the TAT is the same and no slot is
		// freed.
		due := limiter(t, b, "due", ratelimit.Permits(4), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
		require.NoError(t, due.TryAcquireN(4))
		r, err := due.Reserve()
		require.NoError(t, err)
		tail, err := due.Reserve()
		require.NoError(t, err)
		require.Positive(t, tail.Delay())
		ctx := context.Background()
		before, err := c.Get(ctx, rlredis.Key(b, "due")).Result()
		require.NoError(t, err)
		time.Sleep(tail.Delay() + 20*time.Millisecond) // let the permits' time pass on the real clock
		r.Cancel()
		tail.Cancel()
		after, err := c.Get(ctx, rlredis.Key(b, "due")).Result()
		require.NoError(t, err)
		assert.Equal(t, before, after, "permits whose time has passed are spent")
		assert.Zero(t, c.Exists(ctx, rlredis.Key(b, "due")+":freed").Val(), "no slot freed")
	})
}

// SPEC RL-9b: a call made after the retry-after succeeds, and only one. T is 1s, so that
// a loaded machine's pause between two calls does not give a new permit between them.
func TestRL9b_RetryAfterOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "retry-after", ratelimit.Permits(2), ratelimit.Period(2*time.Second)) // T = 1s
		require.Equal(t, 2, admitted(l, 5))
		r, err := l.Reserve()
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		require.Positive(t, r.Delay())
		require.LessOrEqual(t, r.Delay(), time.Second)
		time.Sleep(r.Delay()) // the real clock must pass the retry-after
		assert.True(t, l.TryAcquire(), "after the retry-after")
		assert.False(t, l.TryAcquire(), "and only one")
	})
}

// SPEC RL-7, RL-8: Acquire reserves on Redis and waits on the local clock.
func TestRL8_AcquireWaitsLocally(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		var waited atomic.Int64
		const T = time.Second
		l := limiter(t, b, "acquire", ratelimit.Permits(1), ratelimit.Period(T), ratelimit.MaxWait(2*T),
			ratelimit.OnEvent(func(e policy.Event) {
				if e.Kind == ratelimit.EventWaited {
					waited.Store(int64(e.Wait))
				}
			}))
		first := time.Now()
		require.True(t, l.TryAcquire())
		start := time.Now()
		require.NoError(t, l.Acquire(context.Background()))
		elapsed := time.Since(start)
		w := time.Duration(waited.Load())
		// The server computed T less the time between the two decisions, which lie
		// between first and now.
		between(t, w, T-time.Since(first), T, "the wait the server computed")
		assert.GreaterOrEqual(t, elapsed, w, "the caller slept its wait")
	})
}

// SPEC RL-8, RL-9: a wait ended by the context gives the permit back, and a deadline
// before the permit is refused at once, reserving nothing.
func TestRL8_ContextOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		waiting := make(chan struct{}, 1)
		l := limiter(t, b, "ctx", ratelimit.Permits(5), ratelimit.Period(50*time.Second), ratelimit.MaxWait(30*time.Second), // T = 10s
			ratelimit.OnEvent(func(e policy.Event) {
				if e.Kind == ratelimit.EventWaited {
					select {
					case waiting <- struct{}{}:
					default:
					}
				}
			}))
		start := time.Now()
		require.Equal(t, 5, admitted(l, 10))

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- l.Acquire(ctx) }()
		<-waiting
		cancel()
		err := <-done
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		require.ErrorIs(t, err, context.Canceled)
		r, err := l.Reserve()
		elapsed := time.Since(start)
		require.NoError(t, err)
		between(t, r.Delay(), 10*time.Second-elapsed, 10*time.Second, "the canceled wait's slot is free again")

		dctx, dcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer dcancel()
		err = l.Acquire(dctx)
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		r2, err := l.Reserve()
		elapsed = time.Since(start)
		require.NoError(t, err)
		between(t, r2.Delay(), 20*time.Second-elapsed, 20*time.Second, "the refused Acquire reserved nothing")

		done2 := make(chan error, 1)
		cctx, ccancel := context.WithCancel(context.Background())
		ccancel()
		go func() { done2 <- l.Acquire(cctx) }()
		require.ErrorIs(t, <-done2, context.Canceled, "a done context reserves nothing")
	})
}

// SPEC RL-11: AvailablePermits and Snapshot read Redis.
func TestRL11_AvailableAndSnapshotOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "snap", ratelimit.Permits(10), ratelimit.Period(100*time.Second))
		assert.Equal(t, 10, l.Snapshot().AvailablePermits)
		require.Equal(t, 4, admitted(l, 4))
		assert.Equal(t, 6, l.Snapshot().AvailablePermits)
		assert.Equal(t, ratelimit.Snapshot{Instance: "snap", AvailablePermits: 6, Permits: 10}, l.Snapshot())
		_, b2 := backendOn(t, b)
		other := limiter(t, b2, "snap", ratelimit.Permits(10), ratelimit.Period(100*time.Second))
		assert.Equal(t, 6, other.Snapshot().AvailablePermits, "another process sees the same state")
	})
}

// SPEC RL-10: a disabled limiter never calls Redis.
func TestRL10_DisabledOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		l := limiter(t, b, "off", ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.Enabled(false))
		for range 10 {
			require.True(t, l.TryAcquire())
		}
		assert.Equal(t, 1, l.Snapshot().AvailablePermits)
		n, err := c.Exists(context.Background(), rlredis.Key(b, "off")).Result()
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// SPEC RL-2: the script's arithmetic is exact. The TAT after k permits of a fresh key is
// now₀ + k·T, T rounded up to a whole nanosecond, where now₀ is the server's TIME (whole
// microseconds) at the first call; the TTL is the time until the burst is full again.
func TestRL2_ExactArithmeticOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		ctx := context.Background()
		for _, tc := range []struct {
			permits int
			period  time.Duration
			take    int
		}{
			{3, time.Second, 3},                 // T = 333,333,334ns, rounded up
			{7, 1000 * time.Hour, 2},            // T = 514,285,714,285,715ns: carries across seconds
			{600_000, 100_000 * time.Second, 4}, // T = 166,666,667ns, rounded up
		} {
			name := "exact-" + strconv.Itoa(tc.permits)
			l := limiter(t, b, name, ratelimit.Permits(tc.permits), ratelimit.Period(tc.period))
			T := int64(gcra.Interval(l.Config().Permits, l.Config().Period))
			before, err := c.Time(ctx).Result()
			require.NoError(t, err)
			require.Equal(t, tc.take, admitted(l, tc.take))
			after, err := c.Time(ctx).Result()
			require.NoError(t, err)
			s, err := c.Get(ctx, rlredis.Key(b, name)).Result()
			require.NoError(t, err)
			v, err := rlredis.TATOf(s)
			require.NoError(t, err)
			now0 := v - int64(tc.take)*T
			assert.Zero(t, now0%1000, "%s: the server's time is in whole microseconds", name)
			assert.GreaterOrEqual(t, now0, before.UnixNano(), name)
			assert.LessOrEqual(t, now0, after.UnixNano(), name)
			ttl, err := c.PTTL(ctx, rlredis.Key(b, name)).Result()
			require.NoError(t, err)
			ahead := time.Duration(v - after.UnixNano())
			assert.LessOrEqual(t, ttl, ahead+50*time.Millisecond, "%s: expires when the burst is full again", name)
			assert.Greater(t, ttl, ahead-time.Second, name)
		}
	})
}

// SPEC RL-14: extreme values do not overflow: one permit per the largest period puts the
// TAT beyond the int64 range of nanoseconds since the epoch, which the script still
// handles exactly.
func TestRL14_ExtremesOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		maxD := time.Duration(1<<63 - 1)
		l := limiter(t, b, "extreme", ratelimit.Permits(1), ratelimit.Period(maxD), ratelimit.MaxWait(time.Hour))
		require.True(t, l.TryAcquire())
		assert.False(t, l.TryAcquire())
		r, err := l.Reserve()
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		between(t, r.Delay(), maxD-time.Minute, maxD, "retry-after up to the far TAT")
		assert.Zero(t, l.Snapshot().AvailablePermits)

		big := limiter(t, b, "billion", ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second), ratelimit.MaxWait(maxD))
		require.Equal(t, 100, admitted(big, 100))
		assert.Greater(t, big.Snapshot().AvailablePermits, 1_000_000_000-200)
	})
}
