// Package redistest gives tests a real Redis server. Addr returns the server shared by a
// test process: the one at REDIS_ADDR when it is set; or else a redis-server started for
// the process on a free loopback port, without persistence, when redis-server is on PATH.
// Start gives one test a server of its own, which it may kill and restart, or pause and
// resume. ClusterAddrs and StartCluster do the same with a Redis Cluster of three masters
// (REDIS_CLUSTER_ADDRS names an existing one). Without a server, a test that asks for one
// skips with a message that says how to make it run (install redis-server, or set
// REDIS_ADDR); with CI=true it fails instead, so that CI never passes without running it.
//
// A package whose tests use Addr or ClusterAddrs wraps its TestMain with Main, which stops
// the shared server and cluster once the tests have run (and before goleak looks for
// leaks):
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.Main(m)) }
//
// Every function is safe for concurrent use by the tests of one process.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// EnvAddr is the environment variable that names an existing Redis server, host:port.
const EnvAddr = "REDIS_ADDR"

// startWithin bounds how long a started redis-server may take to answer PING.
const startWithin = 5 * time.Second

// TestingM is what goleak.VerifyTestMain runs: *testing.M, or Main's wrapper of it.
type TestingM interface{ Run() int }

// Main wraps m so that its Run stops the shared server and the shared cluster, if this
// process started them, once m's tests have run. Use it in TestMain:
// goleak.VerifyTestMain(redistest.Main(m)).
func Main(m TestingM) TestingM { return mainWithServer{m} }

type mainWithServer struct{ m TestingM }

func (w mainWithServer) Run() int {
	defer shared.stop()
	defer sharedCluster.stop()
	return w.m.Run()
}

// shared is the process's server, found or started by the first Addr.
var shared sharedServer

type sharedServer struct {
	mu sync.Mutex
	found
}

// found is what the first Addr found.
type found struct {
	addr string
	srv  *Server // the server this process started; nil for REDIS_ADDR's
	err  error   // why there is no server; Addr skips (or fails) every test with it
}

// find returns the shared server's address: env (REDIS_ADDR) when it is set, or else a
// redis-server started once. A failure is kept: later calls return it at once.
func (s *sharedServer) find(env string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr == "" && s.err == nil {
		if env != "" {
			s.addr = env
			return s.addr, nil
		}
		srv, err := start()
		if err != nil {
			s.err = err
		} else {
			s.srv, s.addr = srv, srv.addr
		}
	}
	return s.addr, s.err
}

// stop kills the server this process started, if any; the next find starts another.
func (s *sharedServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.stop()
		s.srv, s.addr = nil, ""
	}
}

// Addr returns the address of the Redis server that the tests of this process share: the
// server at REDIS_ADDR, when it is set; or else a redis-server started by the first call
// when it is on PATH, on a free loopback port, without persistence (stopped by Main's
// wrapper when the tests end). When there is neither, t skips with a message that says
// how to make it run, or fails when CI=true. Tests that share the server should use keys
// (or a database) of their own.
func Addr(t testing.TB) string {
	t.Helper()
	addr, err := shared.find(os.Getenv(EnvAddr))
	if err != nil {
		unavailable(t, Unavailable(err))
	}
	return addr
}

// Unavailable is the message of a test skipped for want of a Redis server: what was
// missing and how to make the test run.
func Unavailable(err error) string {
	return "no Redis server for this test: install redis-server (it is then started on a free " +
		"port for the tests) or set " + EnvAddr + "=host:port of a running server (" + err.Error() + ")"
}

// unavailable skips t with msg, or fails it when CI=true.
func unavailable(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
		return
	}
	t.Skip(msg)
}

// Start starts a redis-server of t's own on a free loopback port, without persistence;
// t may Kill and Restart it, or Pause and Resume it, and it is stopped when t ends.
// REDIS_ADDR does not help here: when redis-server is not on PATH, t skips with a
// message that says so (or fails when CI=true).
func Start(t testing.TB) *Server {
	t.Helper()
	srv, err := start()
	if err != nil {
		unavailable(t, "this test starts a Redis server of its own: install redis-server ("+err.Error()+")")
		return nil
	}
	t.Cleanup(srv.stop)
	return srv
}

// Server is a redis-server process on 127.0.0.1, started by Start (or as a node of a
// Cluster). Its methods are safe for concurrent use.
type Server struct {
	port int
	addr string
	dir  string
	args []string // more redis-server arguments, for every launch

	mu     sync.Mutex // guards cmd, exited and paused
	cmd    *exec.Cmd
	paused bool
	// exited receives the process's exit; its waiting goroutine lives as long as the process.
	exited chan error
}

// Addr returns the server's address, 127.0.0.1:port. It stays the same across Restart.
func (s *Server) Addr() string { return s.addr }

// Kill stops the server at once, as a crash would, and waits for the process to exit.
// Its data is lost. A paused server is resumed first, so that nothing waits on a stopped
// process. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kill()
}

// kill is Kill with s.mu held.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	s.resume()
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Pause stops the server's process (SIGSTOP) without ending it, as a hung server: its
// connections stay open and requests sent to it wait, unanswered, until Resume (or Kill).
// Pausing a paused or killed server does nothing.
func (s *Server) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && !s.paused {
		stopProcess(s.cmd.Process)
		s.paused = true
	}
}

// Resume lets a paused server run again (SIGCONT); it answers the requests that waited.
// Resuming a server that is not paused does nothing.
func (s *Server) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resume()
}

// resume is Resume with s.mu held.
func (s *Server) resume() {
	if s.cmd != nil && s.paused {
		continueProcess(s.cmd.Process)
		s.paused = false
	}
}

// running reports whether the server's process runs and is not paused.
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil && !s.paused
}

// Restart starts the killed server again on the same port, empty, and waits until it
// answers PING.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("redis-server on " + s.addr + " is running")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	return s.launch(bin)
}

// stop kills the server and removes its directory.
func (s *Server) stop() {
	s.Kill()
	_ = os.RemoveAll(s.dir)
}

// start starts redis-server on a free port and waits until it answers PING. A port taken
// between choosing it and binding it is retried with another.
func start() (*Server, error) { return startWith(freePort, "r4c-redis-", nil) }

// startWith starts redis-server, with args after the usual ones, on a port chosen by
// pick, its files in a new temporary directory named after pattern, and waits until it
// answers PING. A port taken between choosing it (pick) and binding it is retried with
// another.
func startWith(pick func() (int, error), pattern string, args []string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return nil, err
	}
	srv := &Server{dir: dir, args: args}
	for range 5 {
		var port int
		if port, err = pick(); err != nil {
			break
		}
		srv.port, srv.addr = port, "127.0.0.1:"+strconv.Itoa(port)
		if err = srv.launch(bin); err == nil {
			return srv, nil
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

// ClosedAddr returns a loopback address where nothing listens, so that connections to it
// are refused at once.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// launch runs bin on s's port and waits until it answers PING, or exits, or startWithin
// passes. The server that answers must be the process launched: another one that took
// the port meanwhile does not count. s.mu is held, or s is not shared yet.
func (s *Server) launch(bin string) error {
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no", "--loglevel", "warning"},
		s.args...)
	s.cmd = exec.Command(bin, args...)
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return err
	}
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	pid := "\nprocess_id:" + strconv.Itoa(s.cmd.Process.Pid) + "\r"
	c := goredis.NewClient(&goredis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond,
		DialerRetries: 1}) // one dial per poll: a refused one fails at once
	defer c.Close()
	deadline := time.Now().Add(startWithin)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			s.cmd = nil
			return fmt.Errorf("redis-server on %s exited: %v", s.addr, err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		info, err := c.Info(ctx, "server").Result() // answers as PING does, and names the process
		cancel()
		if err == nil && strings.Contains(info, pid) {
			return nil
		}
		time.Sleep(10 * time.Millisecond) // polling for the process to start serving
	}
	s.kill()
	return fmt.Errorf("redis-server on %s did not answer PING within %v", s.addr, startWithin)
}
