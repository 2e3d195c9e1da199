package redis_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/redistest"
)

// The tests run against a real Redis server (internal/redistest): a redis-server started
// for this test process on a free loopback port, without persistence, and stopped when
// the tests end, when redis-server is on PATH; or else the one at REDIS_ADDR. Without
// either, the tests that need a server skip, saying how to make them run, except in CI
// (CI=true), where they fail.

func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.Main(m)) }

// testDB is the database the tests use: not 0, which other packages' tests may flush
// while these run against the same server.
const testDB = 7

// newClient returns a client of addr that honours context deadlines, closed when t ends.
func newClient(t testing.TB, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr, DB: testDB, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// requireServer fails t at once when the shared server (or cluster) does not answer.
func requireServer(t testing.TB, c goredis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, c.Ping(ctx).Err(), "Redis at %v", c)
}

// onEach runs f twice, as subtests: against a single server ("server") and against a
// 3-node Redis Cluster ("cluster"), so that every rule it checks holds on both. The
// clients f gets from testClient, backend and backendOn are those of its subtest's.
func onEach(t *testing.T, f func(t *testing.T)) {
	t.Run("server", f)
	t.Run("cluster", f)
}

// onCluster reports whether t runs in onEach's "cluster" subtest (or one of its own).
func onCluster(t testing.TB) bool { return slices.Contains(strings.Split(t.Name(), "/"), "cluster") }

// testClient returns a client of the shared server, or, under onEach's "cluster", of the
// shared cluster (redistest.ClusterAddrs); it honours context deadlines and is closed when
// t ends.
func testClient(t testing.TB) goredis.UniversalClient {
	t.Helper()
	if onCluster(t) {
		return clusterClient(t, redistest.ClusterAddrs(t))
	}
	return newClient(t, redistest.Addr(t))
}

// clusterClient returns a cluster client of addrs that honours context deadlines, closed
// when t ends.
func clusterClient(t testing.TB, addrs []string) *goredis.ClusterClient {
	t.Helper()
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
