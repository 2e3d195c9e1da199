package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(Main(m)) }

// recorder stands for a test: it records Skip and Fatal instead of ending the goroutine.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

// needRedisServer skips t when redis-server is not on PATH: what these tests check is
// how a started server behaves.
func needRedisServer(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip(Unavailable(err))
	}
}

func ping(addr string) error {
	c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// REDIS_ADDR, when it is set, is the server, with or without redis-server on PATH:
// nothing is started.
func TestFind_EnvAddrIsTheServer(t *testing.T) {
	for _, path := range []string{t.TempDir(), os.Getenv("PATH")} {
		t.Setenv("PATH", path)
		var s sharedServer
		addr, err := s.find("10.0.0.1:6379")
		require.NoError(t, err)
		assert.Equal(t, "10.0.0.1:6379", addr)
		assert.Nil(t, s.srv)
	}
}

// Without REDIS_ADDR and with redis-server on PATH, the first call starts one; later
// calls share it, and stop kills it.
func TestFind_StartsOneServer(t *testing.T) {
	needRedisServer(t)
	var s sharedServer
	addr, err := s.find("")
	require.NoError(t, err)
	assert.NotEqual(t, "10.0.0.1:6379", addr, "a server of the tests' own")
	require.NoError(t, ping(addr))
	again, err := s.find("")
	require.NoError(t, err)
	assert.Equal(t, addr, again, "one server per process")
	s.stop()
	assert.Error(t, ping(addr), "stopped")
	s.stop()
}

// Without REDIS_ADDR and without redis-server, the error is kept and the message says how
// to make the test run: a skip, or a failure in CI.
func TestFind_NoServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var s sharedServer
	_, err := s.find("")
	require.Error(t, err)
	_, again := s.find("")
	assert.Same(t, err, again, "not tried again")

	msg := Unavailable(err)
	assert.Contains(t, msg, "install redis-server")
	assert.Contains(t, msg, "set REDIS_ADDR=host:port")
	assert.Contains(t, msg, err.Error())

	t.Setenv("CI", "")
	var r recorder
	unavailable(&r, msg)
	assert.Equal(t, msg, r.skipped)
	assert.Empty(t, r.failed)
	t.Setenv("CI", "true")
	r = recorder{}
	unavailable(&r, msg)
	assert.Equal(t, msg, r.failed, "CI never passes without running the test")
	assert.Empty(t, r.skipped)
}

// Addr skips with the message when there is no server at all.
func TestAddr_SkipsWithoutServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(EnvAddr, "")
	t.Setenv("CI", "")
	saved := shared.swap(found{})
	defer shared.swap(saved)
	var r recorder
	Addr(&r)
	assert.Contains(t, r.skipped, "install redis-server")
	assert.Contains(t, r.skipped, "REDIS_ADDR")
}

// swap replaces s's state with o's and returns the old one, for the tests of Addr.
func (s *sharedServer) swap(f found) found {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.found
	s.found = f
	return old
}

// A test's own server can be killed, as by a crash, and restarted empty on the same port.
func TestStart_KillAndRestart(t *testing.T) {
	needRedisServer(t)
	srv := Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	assert.Error(t, srv.Restart(), "running")

	srv.Kill()
	assert.Error(t, ping(srv.Addr()))
	srv.Kill()

	require.NoError(t, srv.Restart())
	assert.NoError(t, ping(srv.Addr()))
	n, err := c.Exists(ctx, "k").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no persistence: the server comes back empty")
}

// Without redis-server, Start skips (REDIS_ADDR cannot stand in for a server the test
// kills).
func TestStart_SkipsWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	var r recorder
	assert.Nil(t, Start(&r))
	assert.Contains(t, r.skipped, "install redis-server")
}

// Main's wrapper stops the shared server once the tests have run, and returns their code.
func TestMain_StopsTheSharedServer(t *testing.T) {
	needRedisServer(t)
	t.Setenv(EnvAddr, "")
	saved := shared.swap(found{})
	defer shared.swap(saved)
	addr := Addr(t)
	require.NoError(t, ping(addr))
	assert.Equal(t, 3, Main(exitCode(3)).Run())
	assert.Error(t, ping(addr), "stopped")
}

type exitCode int

func (c exitCode) Run() int { return int(c) }

// Nothing listens at ClosedAddr.
func TestClosedAddr(t *testing.T) {
	_, err := net.DialTimeout("tcp", ClosedAddr(t), time.Second)
	assert.Error(t, err)
}
