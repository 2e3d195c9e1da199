//go:build unix

package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// redisServer is the Redis the fleet shares: REDIS_ADDR's, or a redis-server of its own.
type redisServer struct {
	addr string
	cmd  *exec.Cmd // nil for REDIS_ADDR's
}

// startRedis starts a redis-server on a free loopback port, without persistence.
func startRedis(ctx context.Context) (*redisServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server (install it, or set REDIS_ADDR): %w", err)
	}
	s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	c := goredis.NewClient(&goredis.Options{Addr: s.addr})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if c.Ping(ctx).Err() == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer within 5s", s.addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *redisServer) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// nodes returns a client of each node of the servers at addrs: the masters of a cluster.
func nodes(addrs []string) []*goredis.Client {
	cs := make([]*goredis.Client, len(addrs))
	for i, a := range addrs {
		cs[i] = goredis.NewClient(&goredis.Options{Addr: a})
	}
	return cs
}

// commands returns how many commands the nodes have processed in all.
func commands(ctx context.Context, cs []*goredis.Client) (int64, error) {
	var total int64
	for _, c := range cs {
		info, err := c.Info(ctx, "stats").Result()
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, err
				}
				total += n
			}
		}
	}
	return total, nil
}

// pause stops every node from serving clients for d (CLIENT PAUSE ALL): an outage of
// Redis, as the instances see it.
func pause(ctx context.Context, cs []*goredis.Client, d time.Duration) error {
	for _, c := range cs {
		if err := c.Do(ctx, "CLIENT", "PAUSE", d.Milliseconds(), "ALL").Err(); err != nil {
			return err
		}
	}
	return nil
}

// rtt returns the median of n PING round trips to the first node.
func rtt(ctx context.Context, cs []*goredis.Client, n int) (time.Duration, error) {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		if err := cs[0].Ping(ctx).Err(); err != nil {
			return 0, err
		}
		ds[i] = time.Since(t0)
	}
	return median(ds), nil
}
