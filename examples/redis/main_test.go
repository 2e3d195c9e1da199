package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.Main(m)) }

// With a Redis server (a redis-server started for the test, or REDIS_ADDR), the call
// passes through the shared limiter. (Fault: the test skipped unless REDIS_ADDR was set,
// even with redis-server installed.)
func TestRunWithRedis(t *testing.T) {
	addr := redistest.Addr(t)
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// The example gives Redis 50ms. Its first call against a server also loads the script,
	// and a loaded machine can make any call slower than that: the example then falls back,
	// as it should. So it gets three tries, each with a fresh quota.
	var out bytes.Buffer
	for try := 1; try <= 3; try++ {
		require.NoError(t, c.Del(ctx, "{search-service:geocoding}").Err())
		out.Reset()
		require.NoError(t, run(context.Background(), &out, addr))
		if out.String() == "48.8566,2.3522\n" {
			break
		}
		t.Logf("try %d: %q", try, out.String())
	}
	assert.Equal(t, "48.8566,2.3522\n", out.String(), "Redis answered: no fallback")
	n, err := c.Exists(ctx, "{search-service:geocoding}").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the quota lives in Redis")
}

// Without Redis, the Local failure policy lets each instance limit itself: the call
// still passes.
func TestRunWithoutRedis(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, redistest.ClosedAddr(t)))
	assert.Equal(t, "48.8566,2.3522\n(Redis did not answer: this instance limited itself)\n", out.String())
}
