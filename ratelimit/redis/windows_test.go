package redis_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// SPEC RL-29 on Redis and Redis Cluster: two instances of a limiter of 10 per second and
// at most 3 per hour, called by 8 goroutines each at once (so their calls coalesce), admit
// 3 calls in all; a refusal's retry-after is the hour window's (20 minutes, less the time
// the calls took), not the second's. Every key of the limiter has its hash tag: on a
// cluster, they live in one slot.
func TestRL29_WindowsShareOneQuotaOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		opts := []ratelimit.Option{ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.Windows("3/1h")}
		ls := []*ratelimit.Limiter{limiter(t, b, "quota", opts...), limiter(t, b, "quota", opts...)}
		var ok atomic.Int64
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				if ls[i%2].TryAcquire() {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(3), ok.Load(), "3 per hour, whatever the 10 per second")
		err := ls[0].TryAcquireN(1)
		var ex *ratelimit.ExceededError
		require.ErrorAs(t, err, &ex)
		in, known := ex.RetryIn()
		require.True(t, known)
		between(t, in, 19*time.Minute, 20*time.Minute, "the hour window's wait")
		assert.Zero(t, ls[1].Snapshot().AvailablePermits)

		ctx := context.Background()
		key := rlredis.Key(b, "quota")
		wkey := key + ":win:3:3600000000000"
		require.Equal(t, int64(1), c.Exists(ctx, wkey).Val(), "the window's TAT key")
		pttl := c.PTTL(ctx, wkey).Val()
		assert.Greater(t, pttl, 59*time.Minute, "it expires when the window's burst is full again")
		if cc, isCluster := c.(*goredis.ClusterClient); isCluster {
			assert.Equal(t, cc.ClusterKeySlot(ctx, key).Val(), cc.ClusterKeySlot(ctx, wkey).Val(), "one slot")
		}
	})
}

// SPEC RL-29 on Redis: a reservation with windows waits the longest of their waits within
// MaxWait, and a canceled one gives its permits back on every window; a change of
// Windows keeps the state of the windows it keeps.
func TestRL29_WindowsReserveCancelReconfigureOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "w", ratelimit.Permits(100), ratelimit.Period(time.Second), ratelimit.Windows("2/1h, 50/1m"),
			ratelimit.MaxWait(time.Hour))
		require.NoError(t, l.TryAcquireN(2))
		r, err := l.Reserve()
		require.NoError(t, err)
		between(t, r.Delay(), 29*time.Minute, 30*time.Minute, "T of 2 per hour")
		r.Cancel()
		r, err = l.Reserve()
		require.NoError(t, err)
		between(t, r.Delay(), 29*time.Minute, 30*time.Minute, "the canceled reservation's permit came back")
		r.Cancel()

		c := l.Config()
		c.Windows = "50/1m"
		require.NoError(t, l.Reconfigure(c))
		assert.Equal(t, 48, l.Snapshot().AvailablePermits, "the minute window kept its 2 permits taken")
		c.Windows = "50/1m, 2/1h"
		require.NoError(t, l.Reconfigure(c))
		assert.Zero(t, l.Snapshot().AvailablePermits, "the hour window's key is the same again")
	})
}

// SPEC RL-29 on Redis: a keyed limiter with windows keeps them for each key.
func TestRL29_KeyedWindowsOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		k, err := keyed.New[string](ratelimit.Name("k"), ratelimit.Permits(10), ratelimit.Period(time.Second),
			ratelimit.Windows("2/1h"), ratelimit.WithBackend(b))
		require.NoError(t, err)
		for _, key := range []string{"alice", "bob"} {
			require.NoError(t, k.TryAcquire(key, 1))
			require.NoError(t, k.TryAcquire(key, 1))
			err := k.TryAcquire(key, 1)
			require.True(t, errors.Is(err, ratelimit.ErrExceeded), "%s: 2 per hour", key)
			assert.Zero(t, k.AvailablePermits(key))
		}
		assert.Equal(t, 2, k.AvailablePermits("carol"))
	})
}

// The package's Example_windows, on the tests' server: the burst of the second's window,
// and a key for each window, each expiring when its burst is full again: the day's after
// 10 of its T = 86.4s.
func TestRL30_ExampleWindows(t *testing.T) {
	c := testClient(t)
	requireServer(t, c)
	var out strings.Builder
	windowsExample(&out, c, rlredis.UniquePrefix(t))
	assert.Equal(t, "admitted 10 of 12\n{search} expires in 1s\n{search}:win:1000:86400000000000 expires in 14m24s\n", out.String())
}

// SPEC RL-30: a keyed limiter's Decide on Redis reports the key's quota over every
// window, as in-process: Remaining the fewest free over the pairs and Reset until every
// pair's burst is free again (the HTTP fields say them), for an admitted call and a
// refused one, for the limiter's windows and a key's own.
func TestRL30_DecideReportsTheWindowsOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		for name, opts := range map[string][]ratelimit.Option{
			"limiter's": {ratelimit.Windows("3/1h")},
			"own":       {keyed.PerKey(func(string) string { return "10/1s, 3/1h" })},
		} {
			k, err := keyed.New[string](append([]ratelimit.Option{ratelimit.Name("d"), ratelimit.Permits(10),
				ratelimit.Period(time.Second), ratelimit.WithBackend(b)}, opts...)...)
			require.NoError(t, err)
			key := "k-" + name
			for i := range 3 {
				d := k.Decide(context.Background(), key)
				require.True(t, d.Admitted, name)
				assert.Equal(t, 2-i, d.Remaining, "%s: call %d: the hour window's", name, i)
				between(t, d.Reset, time.Duration(i+1)*20*time.Minute-time.Minute, time.Duration(i+1)*20*time.Minute,
					name+": until the hour window's burst is free again")
				assert.Equal(t, 2-i, k.AvailablePermits(key), name)
			}
			d := k.Decide(context.Background(), key)
			require.False(t, d.Admitted, name)
			between(t, d.RetryAfter, 19*time.Minute, 20*time.Minute, name+": the hour window's next permit")
			between(t, d.Reset, 59*time.Minute, time.Hour, name+": a refusal's Reset is until every pair's burst is free")
		}
	})
}
