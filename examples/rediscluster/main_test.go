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

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.Main(m)) }

// With a Redis Cluster (REDIS_CLUSTER_ADDRS, or three redis-servers started for the test),
// the 4 calls take 4 of the shared quota's 9 permits, and its key lives in the cluster.
func TestWithCluster(t *testing.T) {
	addrs := redistest.ClusterAddrs(t)
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "{" + prefix + "geocoding}"

	// The example gives Redis 50ms per call, and its first call loads the script and the
	// slot map: a loaded machine can make that slower, and the example then limits itself,
	// as it should. So it gets three tries, each with a fresh quota.
	var out bytes.Buffer
	want := "the cluster answered: the shared quota of 9 per second, in Redis\n4 calls: passed, passed, passed, passed\n"
	for try := 1; try <= 3; try++ {
		require.NoError(t, c.Del(ctx, key).Err())
		out.Reset()
		require.NoError(t, run(context.Background(), &out, addrs, clock.NewManual()))
		if out.String() == want {
			break
		}
		t.Logf("try %d: %q", try, out.String())
	}
	assert.Equal(t, want, out.String())
	n, err := c.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the quota lives in the cluster")
}

// Without the cluster, the instance limits itself to its share: a burst of 9/3 = 3 calls,
// then a refusal (the manual clock does not move, so no permit comes back and the failed
// node is not tried again).
func TestWithoutCluster(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, []string{redistest.ClosedAddr(t)}, clock.NewManual()))
	assert.Equal(t, `the cluster did not answer (RateLimiterBackendFailed): this instance took its share, 3 of the 9
4 calls: passed, passed, passed, refused
`, out.String())
}
