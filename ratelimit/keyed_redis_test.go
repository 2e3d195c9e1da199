package ratelimit_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/redis"
)

// redisClient returns a client of the Redis at REDIS_ADDR, or of a redis-server started
// for the test on a free loopback port; the test is skipped when there is neither.
func redisClient(t *testing.T) *goredis.Client {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("no Redis in CI: .ci/run must start one and set REDIS_ADDR")
			}
			t.Skip("no Redis: set REDIS_ADDR or install redis-server")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		require.NoError(t, ln.Close())
		addr = "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "",
			"--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning")
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	// Database 9: this package's own, apart from ratelimit/redis's tests, which may run at
	// the same time against the same server.
	c := goredis.NewClient(&goredis.Options{Addr: addr, DB: 9})
	t.Cleanup(func() { _ = c.Close() })
	// Wait for the server to answer (it may still be starting).
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			if os.Getenv("CI") == "true" {
				t.Fatalf("Redis at %s does not answer: %v", addr, err)
			}
			t.Skipf("Redis at %s does not answer: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for an external process to start
	}
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
	instance := func() *ratelimit.Keyed[string] {
		k, err := ratelimit.NewKeyed[string](ratelimit.Permits(10), ratelimit.Period(time.Hour),
			ratelimit.Name("api"), ratelimit.WithBackend(b))
		require.NoError(t, err)
		return k
	}
	a, z := instance(), instance()

	assert.Equal(t, 6, keyedAdmitted(a, "alice", 6))
	assert.Equal(t, 4, keyedAdmitted(z, "alice", 100), "the other instance has what is left of alice's quota")
	assert.False(t, a.TryAcquire("alice"))
	d := z.Decide("alice")
	assert.False(t, d.Admitted)
	assert.InDelta(t, float64(6*time.Minute), float64(d.RetryAfter), float64(time.Second), "T = 1h/10")
	assert.InDelta(t, float64(time.Hour), float64(d.Reset), float64(time.Second))
	assert.Equal(t, 0, a.AvailablePermits("alice"))

	assert.Equal(t, 10, keyedAdmitted(z, "bob", 100), "bob is unaffected by alice")
	keys, err := c.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"{r4c:api:alice}", "{r4c:api:bob}"}, keys, "one Redis key per client")

	// A canceled reservation gives its permit back in Redis.
	w, err := ratelimit.NewKeyed[string](ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.Name("waiting"), ratelimit.MaxWait(90*time.Minute), ratelimit.WithBackend(b))
	require.NoError(t, err)
	r1, err := w.Reserve("carol")
	require.NoError(t, err)
	assert.Zero(t, r1.Delay())
	r2, err := w.Reserve("carol")
	require.NoError(t, err)
	assert.InDelta(t, float64(time.Hour), float64(r2.Delay()), float64(time.Second))
	r2.Cancel()
	r3, err := w.Reserve("carol")
	require.NoError(t, err)
	assert.InDelta(t, float64(time.Hour), float64(r3.Delay()), float64(time.Second), "r2's slot, given back")
	_, err = w.Reserve("carol")
	assert.True(t, errors.Is(err, ratelimit.ErrExceeded), "beyond MaxWait")
}
