package keyed_test

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/ratelimit/redis"
)

// redisClient returns a client of the Redis server the tests share (internal/redistest:
// REDIS_ADDR, or a redis-server started for the tests; skipped when there is neither), on
// database 9: this package's own, apart from ratelimit/redis's tests, which may run at the
// same time against the same server.
func redisClient(t *testing.T) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(t), DB: 9})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.FlushDB(context.Background()).Err())
	return c
}

// SPEC RL-15 per key: two keyed limiters with the same id and the same Redis backend —
// two instances of a service — share each client's quota, one Redis key per client, and
// the clients stay independent of each other.
func TestKeyed_Redis_InstancesShareEachKeysQuota(t *testing.T) {
	c := redisClient(t)
	b, err := redis.New(c, redis.Timeout(time.Second))
	require.NoError(t, err)
	instance := func() *keyed.Limiter[string] {
		k, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Hour),
			ratelimit.Name("api"), ratelimit.WithBackend(b))
		require.NoError(t, err)
		return k
	}
	a, z := instance(), instance()

	assert.Equal(t, 6, keyedAdmitted(a, "alice", 6))
	assert.Equal(t, 4, keyedAdmitted(z, "alice", 100), "the other instance has what is left of alice's quota")
	assert.False(t, a.TryAcquire("alice", 1) == nil)
	d := z.Decide(context.Background(), "alice")
	assert.False(t, d.Admitted)
	assert.InDelta(t, float64(6*time.Minute), float64(d.RetryAfter), float64(time.Second), "T = 1h/10")
	assert.InDelta(t, float64(time.Hour), float64(d.Reset), float64(time.Second))
	assert.Equal(t, 0, keyed.AvailablePermits(a, "alice"))

	assert.Equal(t, 10, keyedAdmitted(z, "bob", 100), "bob is unaffected by alice")
	keys, err := c.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"{r4c:api:alice}", "{r4c:api:bob}"}, keys, "one Redis key per client")

	// A canceled reservation gives its permit back in Redis.
	w, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.Name("waiting"), ratelimit.MaxWait(90*time.Minute), ratelimit.WithBackend(b))
	require.NoError(t, err)
	r1, err := w.Reserve("carol", 1)
	require.NoError(t, err)
	assert.Zero(t, r1.Delay())
	r2, err := w.Reserve("carol", 1)
	require.NoError(t, err)
	assert.InDelta(t, float64(time.Hour), float64(r2.Delay()), float64(time.Second))
	r2.Cancel()
	r3, err := w.Reserve("carol", 1)
	require.NoError(t, err)
	assert.InDelta(t, float64(time.Hour), float64(r3.Delay()), float64(time.Second), "r2's slot, given back")
	_, err = w.Reserve("carol", 1)
	assert.True(t, errors.Is(err, ratelimit.ErrExceeded), "beyond MaxWait")
}

// SPEC RC-7 per key on Redis: a key's schedule in Redis is converted at its first call
// after Reconfigure. 1 permit per hour, taken; raised to 10 per second: the key's next
// permit within 100ms. A reservation granted before a change to 20 per second, canceled
// after the key's next call converted it, gives nothing back. (Fault: the key kept the
// schedule written at 1 per hour: its next permit came about an hour later.)
func TestRC7_Keyed_RaisedQuotaOnRedis(t *testing.T) {
	c := redisClient(t)
	b, err := redis.New(c, redis.Timeout(time.Second))
	require.NoError(t, err)
	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.Name("raised"), ratelimit.MaxWait(time.Hour), ratelimit.WithBackend(b))
	require.NoError(t, err)
	require.True(t, k.TryAcquire("alice", 1) == nil)
	cfg := k.Config()
	cfg.Permits, cfg.Period = 10, time.Second
	require.NoError(t, k.Reconfigure(cfg))
	r, err := k.Reserve("alice", 1)
	require.NoError(t, err)
	assert.LessOrEqual(t, r.Delay(), 100*time.Millisecond, "within one new T")

	held, err := k.Reserve("alice", 1)
	require.NoError(t, err)
	cfg.Permits = 20
	require.NoError(t, k.Reconfigure(cfg))
	_, err = k.Reserve("alice", 1)
	require.NoError(t, err)
	ctx := context.Background()
	key := "{r4c:raised:alice}" // the default prefix
	before, err := c.Get(ctx, key).Result()
	require.NoError(t, err)
	held.Cancel()
	after, err := c.Get(ctx, key).Result()
	require.NoError(t, err)
	assert.Equal(t, before, after, "granted before the conversion: nothing given back")
	assert.Zero(t, c.Exists(ctx, key+":freed").Val(), "no freed slot")
}
