package bench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/ratelimit"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// The distributed limiters, on the Redis server at REDIS_ADDR (source .ci/redis.sh to
// start one): resilience4go's Redis backend (ratelimit/redis) against
// github.com/go-redis/redis_rate Allow. Both run one Lua script per call with EVALSHA, on
// the same go-redis client options; the limits are those of the in-process benchmarks.
// Besides ns/op, each benchmark reports scripts/op: the EVALSHA and EVAL commands the server
// executed per call, read from INFO commandstats. 1 is one round trip per call (the
// commands a script runs inside, TIME, GET and SET, are counted apart by the server and
// cost no round trip).

func redisClient(b *testing.B) *goredis.Client {
	b.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		b.Skip("no Redis server: set REDIS_ADDR (source .ci/redis.sh)")
	}
	c := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("Redis at %s: %v", addr, err)
	}
	return c
}

// serverScripts returns how many EVALSHA and EVAL commands the server has executed.
func serverScripts(b *testing.B, c *goredis.Client) int64 {
	b.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for line := range strings.SplitSeq(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		v, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			b.Fatalf("commandstats line %q: %v", line, err)
		}
		n += v
	}
	return n
}

// measure runs the benchmark body and reports the server's script runs per call.
func measure(b *testing.B, c *goredis.Client, parallel bool, call func() bool, want bool) {
	b.Helper()
	if call() != want { // warm up: connect and load the script
		b.Fatalf("first call: want admitted=%v", want)
	}
	before := serverScripts(b, c)
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if call() != want {
					b.Errorf("want admitted=%v", want)
					return
				}
			}
		})
	} else {
		for i := 0; i < b.N; i++ {
			if call() != want {
				b.Fatalf("want admitted=%v", want)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(serverScripts(b, c)-before)/float64(b.N), "scripts/op")
}

func redisOurs(b *testing.B, c *goredis.Client, permits int, period time.Duration) *ratelimit.Limiter {
	b.Helper()
	be, err := rlredis.New(c, rlredis.Prefix("bench:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":"))
	if err != nil {
		b.Fatal(err)
	}
	l, err := ratelimit.New(ratelimit.Name("limiter"), ratelimit.Permits(permits), ratelimit.Period(period), ratelimit.WithBackend(be))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func redisRate(c *goredis.Client, permits int, period time.Duration) (func() bool, *redis_rate.Limiter) {
	l := redis_rate.NewLimiter(c)
	key := "bench:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	limit := redis_rate.Limit{Rate: permits, Burst: permits, Period: period}
	ctx := context.Background()
	return func() bool {
		res, err := l.Allow(ctx, key, limit)
		return err == nil && res.Allowed > 0
	}, l
}

func benchmarkRedis(b *testing.B, parallel bool) {
	c := redisClient(b)
	b.Run("resilience4go/TryAcquire/admitted", func(b *testing.B) {
		l := redisOurs(b, c, admitPermits, admitPeriod)
		measure(b, c, parallel, l.TryAcquire, true)
	})
	b.Run("resilience4go/TryAcquire/rejected", func(b *testing.B) {
		l := redisOurs(b, c, 1, rejectPeriod)
		l.TryAcquire()
		measure(b, c, parallel, l.TryAcquire, false)
	})
	b.Run("redis_rate/Allow/admitted", func(b *testing.B) {
		allow, _ := redisRate(c, admitPermits, admitPeriod)
		measure(b, c, parallel, allow, true)
	})
	// At 10⁹ per second redis_rate's TAT, seconds in a float64, cannot move by 1ns: its
	// admitted calls write nothing. At 10⁶ per second both libraries write the key on
	// every admitted call.
	b.Run("resilience4go/TryAcquire/admitted_1e6", func(b *testing.B) {
		l := redisOurs(b, c, 1_000_000, time.Second)
		measure(b, c, parallel, l.TryAcquire, true)
	})
	b.Run("redis_rate/Allow/admitted_1e6", func(b *testing.B) {
		allow, _ := redisRate(c, 1_000_000, time.Second)
		measure(b, c, parallel, allow, true)
	})
	b.Run("redis_rate/Allow/rejected", func(b *testing.B) {
		allow, _ := redisRate(c, 1, rejectPeriod)
		allow()
		measure(b, c, parallel, allow, false)
	})
}

// BenchmarkRedis: one caller at a time, so ns/op is the latency of one call (a loopback
// round trip plus the script).
func BenchmarkRedis(b *testing.B) { benchmarkRedis(b, false) }

// BenchmarkRedisParallel: GOMAXPROCS callers on one client, so ns/op is the inverse of the
// throughput.
func BenchmarkRedisParallel(b *testing.B) { benchmarkRedis(b, true) }
