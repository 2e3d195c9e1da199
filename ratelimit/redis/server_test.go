package redis_test

import (
	"context"
	"fmt"
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

// uniquePrefix returns a key prefix of its own for t, so that tests (and repeated runs
// with -count) never share a key.
func uniquePrefix(t testing.TB) string {
	return fmt.Sprintf("r4ctest:%s:%d:", t.Name(), time.Now().UnixNano())
}

// requireServer fails t at once when the shared server does not answer.
func requireServer(t testing.TB, c *goredis.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, c.Ping(ctx).Err(), "Redis at %s", c.Options().Addr)
}
