package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The tests run against a real Redis server: the one at REDIS_ADDR, or else a
// redis-server started for this test process on a free loopback port, without
// persistence, and stopped when the tests end. Without either, the tests that need a
// server skip, except in CI (CI=true), where they fail.

// mainWithServer stops the shared server, if the tests started one, before goleak looks
// for leaks.
type mainWithServer struct{ m *testing.M }

func (w mainWithServer) Run() int {
	code := w.m.Run()
	shared.mu.Lock()
	if shared.srv != nil {
		shared.srv.stop()
	}
	shared.mu.Unlock()
	return code
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(mainWithServer{m}) }

var shared struct {
	mu   sync.Mutex
	addr string
	srv  *server
	err  error
}

// serverAddr returns the address of the tests' Redis server; see the comment above.
func serverAddr(t testing.TB) string {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.addr == "" && shared.err == nil {
		if addr := os.Getenv("REDIS_ADDR"); addr != "" {
			shared.addr = addr
		} else if srv, err := startServer(0); err == nil {
			shared.srv, shared.addr = srv, srv.addr
		} else {
			shared.err = err
		}
	}
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	return shared.addr
}

// unavailable skips t for want of a server, or fails it in CI.
func unavailable(t testing.TB, err error) {
	t.Helper()
	msg := "no Redis server for this test: set REDIS_ADDR or install redis-server (" + err.Error() + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// ownServer starts a redis-server for one test, which may stop and restart it; it is
// stopped when the test ends.
func ownServer(t testing.TB) *server {
	t.Helper()
	srv, err := startServer(0)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(srv.stop)
	return srv
}

// server is a redis-server process on 127.0.0.1.
type server struct {
	port int
	addr string
	dir  string
	cmd  *exec.Cmd
	// exited receives the process's exit; its waiting goroutine lives as long as the server.
	exited chan error
}

// startServer starts redis-server on port, or on a free port if port is 0, and waits
// until it answers PING.
func startServer(port int) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "r4c-redis-")
	if err != nil {
		return nil, err
	}
	srv := &server{dir: dir}
	for attempt := 0; attempt < 5; attempt++ {
		p := port
		if p == 0 {
			if p, err = freePort(); err != nil {
				break
			}
		}
		srv.port, srv.addr = p, "127.0.0.1:"+strconv.Itoa(p)
		if err = srv.launch(bin); err == nil {
			return srv, nil
		}
		if port != 0 {
			break
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) launch(bin string) error {
	s.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no", "--loglevel", "warning")
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	c := goredis.NewClient(&goredis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			s.cmd = nil
			return fmt.Errorf("redis-server on %s exited: %v", s.addr, err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond) // polling for the server to start
	}
	s.kill()
	return errors.New("redis-server on " + s.addr + " did not answer PING within 5s")
}

// kill stops the server process at once, as a crash would, and waits for it to exit.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// restart starts the server again on the same port, empty.
func (s *server) restart() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	return s.launch(bin)
}

// stop kills the server and removes its directory.
func (s *server) stop() {
	s.kill()
	_ = os.RemoveAll(s.dir)
}

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
