package bench

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
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
// cost no round trip). Each also reports roundtrips/op: the commands and pipelines the
// client sent per call, counted by a hook on the client that both sides use (roundTrips),
// read before and after each side's benchmark, so that each side's count is its own.

// roundTrips counts what a client sends to the server: each command and each pipeline
// once.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// sent is the round-trip counter of the clients made by redisClient.
var sent roundTrips

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
	c.AddHook(&sent)
	return c
}

// serverStats is what the server has done so far: the EVALSHA and EVAL commands it has
// executed, the microseconds it spent in them, and its CPU time in seconds (user and
// system, its own threads).
type serverStats struct {
	scripts, scriptUsec int64
	cpu                 float64
}

// serverNow reads the server's serverStats (INFO commandstats and cpu).
func serverNow(b *testing.B, c *goredis.Client) serverStats {
	b.Helper()
	info, err := c.Info(context.Background(), "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var st serverStats
	for line := range strings.SplitSeq(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		switch {
		case !ok:
		case name == "used_cpu_sys" || name == "used_cpu_user":
			v, err := strconv.ParseFloat(stats, 64)
			if err != nil {
				b.Fatalf("cpu line %q: %v", line, err)
			}
			st.cpu += v
		case name == "cmdstat_evalsha" || name == "cmdstat_eval":
			var calls, usec int64
			for field := range strings.SplitSeq(stats, ",") {
				k, v, _ := strings.Cut(field, "=")
				var err error
				switch k {
				case "calls":
					calls, err = strconv.ParseInt(v, 10, 64)
				case "usec":
					usec, err = strconv.ParseInt(v, 10, 64)
				}
				if err != nil {
					b.Fatalf("commandstats line %q: %v", line, err)
				}
			}
			st.scripts += calls
			st.scriptUsec += usec
		}
	}
	return st
}

// measure runs the benchmark body and reports, per call, the server's script runs, the
// time it spent in them (commandstats) and its CPU time (whatever it did, I/O included),
// and the client's round trips. callers > 0 runs the body on that many goroutines at once
// (b.SetParallelism, rounded up to a multiple of GOMAXPROCS); 0 on one goroutine unless
// parallel (then GOMAXPROCS goroutines).
func measure(b *testing.B, c *goredis.Client, parallel bool, call func() bool, want bool) {
	measureOn(b, c, parallel, 0, call, want)
}

func measureOn(b *testing.B, c *goredis.Client, parallel bool, callers int, call func() bool, want bool) {
	b.Helper()
	if call() != want { // warm up: connect and load the script
		b.Fatalf("first call: want admitted=%v", want)
	}
	before := serverNow(b, c)
	trips := sent.n.Load()
	b.ReportAllocs()
	b.ResetTimer()
	if callers > 0 {
		procs := runtime.GOMAXPROCS(0)
		b.SetParallelism((callers + procs - 1) / procs)
		parallel = true
	}
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
	trips = sent.n.Load() - trips
	after := serverNow(b, c)
	n := float64(b.N)
	b.ReportMetric(float64(after.scripts-before.scripts)/n, "scripts/op")
	b.ReportMetric(float64(after.scriptUsec-before.scriptUsec)*1e3/n, "script-ns/op")
	b.ReportMetric((after.cpu-before.cpu)*1e9/n, "server-cpu-ns/op")
	b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/op")
}

// redisOurs returns a limiter on its own key, with a timeout of 1s: on a loaded machine a
// call may wait for Redis longer than the default 50ms, and would then take the failure
// policy (Local, whose in-process burst admits); redis_rate waits for the client's own
// timeouts.
func redisOurs(b *testing.B, c *goredis.Client, permits int, period time.Duration) *ratelimit.Limiter {
	b.Helper()
	be, err := rlredis.New(c, rlredis.Prefix("bench:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":"),
		rlredis.Timeout(time.Second))
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

// callers is how many goroutines call at once in BenchmarkRedisCallers.
const callers = 32

// BenchmarkRedisCallers: 32 goroutines call at once (b.SetParallelism), all on ONE limiter
// name (one key), on one client with ContextTimeoutEnabled; ns/op is the inverse of the
// throughput. resilience4go's TryAcquire runs its Redis script with EVALSHA; while one of
// its runs is in flight, the calls that come queue and go together in the next run (one
// EVALSHA deciding each, in order, alike requests sent as one group and answered in runs),
// so each call keeps its own exact answer.
// redis_rate's Allow runs its script with EVALSHA once per call, as its documentation
// shows. admitted: 10⁹ permits per second on both sides (every call admitted); rejected:
// 1 permit per 1000h, taken by a first call (every call refused). Both report scripts/op
// (script runs the server executed per call) and roundtrips/op (commands and pipelines
// the client sent per call).
func BenchmarkRedisCallers(b *testing.B) {
	c := redisClient(b)
	b.Run("resilience4go/TryAcquire/admitted/32callers", func(b *testing.B) {
		l := redisOurs(b, c, admitPermits, admitPeriod)
		measureOn(b, c, true, callers, l.TryAcquire, true)
	})
	b.Run("redis_rate/Allow/admitted/32callers", func(b *testing.B) {
		allow, _ := redisRate(c, admitPermits, admitPeriod)
		measureOn(b, c, true, callers, allow, true)
	})
	b.Run("resilience4go/TryAcquire/rejected/32callers", func(b *testing.B) {
		l := redisOurs(b, c, 1, rejectPeriod)
		l.TryAcquire()
		measureOn(b, c, true, callers, l.TryAcquire, false)
	})
	b.Run("redis_rate/Allow/rejected/32callers", func(b *testing.B) {
		allow, _ := redisRate(c, 1, rejectPeriod)
		allow()
		measureOn(b, c, true, callers, allow, false)
	})
}

// TestRedisAllocsPerDecision: a serial decision of resilience4go's Redis backend
// (TryAcquire, admitted and rejected) allocates no more than redis_rate's Allow, measured
// in the same test on the same server and client options, with testing.AllocsPerRun
// (allocations) and testing.Benchmark (bytes).
func TestRedisAllocsPerDecision(t *testing.T) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		t.Skip("no Redis server: set REDIS_ADDR (source .ci/redis.sh)")
	}
	c := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	for _, tc := range []struct {
		name    string
		permits int
		period  time.Duration
		want    bool
	}{{"admitted", admitPermits, admitPeriod, true}, {"rejected", 1, rejectPeriod, false}} {
		t.Run(tc.name, func(t *testing.T) {
			be, err := rlredis.New(c, rlredis.Prefix("allocs:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":"))
			if err != nil {
				t.Fatal(err)
			}
			l, err := ratelimit.New(ratelimit.Name("limiter"), ratelimit.Permits(tc.permits),
				ratelimit.Period(tc.period), ratelimit.WithBackend(be))
			if err != nil {
				t.Fatal(err)
			}
			rl := redis_rate.NewLimiter(c)
			key := "allocs:" + strconv.FormatInt(time.Now().UnixNano(), 36)
			limit := redis_rate.Limit{Rate: tc.permits, Burst: tc.permits, Period: tc.period}
			ctx := context.Background()
			allow := func() bool {
				res, err := rl.Allow(ctx, key, limit)
				return err == nil && res.Allowed > 0
			}
			if !tc.want {
				l.TryAcquire()
				allow()
			}
			ours := func() {
				if l.TryAcquire() != tc.want {
					t.Errorf("resilience4go: want admitted=%v", tc.want)
				}
			}
			peer := func() {
				if allow() != tc.want {
					t.Errorf("redis_rate: want admitted=%v", tc.want)
				}
			}
			oursAllocs, peerAllocs := testing.AllocsPerRun(200, ours), testing.AllocsPerRun(200, peer)
			bytes := func(f func()) int64 {
				return testing.Benchmark(func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						f()
					}
				}).AllocedBytesPerOp()
			}
			oursBytes, peerBytes := bytes(ours), bytes(peer)
			t.Logf("allocs/op: resilience4go %.0f, redis_rate %.0f; B/op: resilience4go %d, redis_rate %d",
				oursAllocs, peerAllocs, oursBytes, peerBytes)
			if oursAllocs > peerAllocs {
				t.Errorf("allocs/op: resilience4go %.0f > redis_rate %.0f", oursAllocs, peerAllocs)
			}
			if oursBytes > peerBytes {
				t.Errorf("B/op: resilience4go %d > redis_rate %d", oursBytes, peerBytes)
			}
		})
	}
}

// BenchmarkRedis: one caller at a time, so ns/op is the latency of one call (a loopback
// round trip plus the script).
func BenchmarkRedis(b *testing.B) { benchmarkRedis(b, false) }

// BenchmarkRedisParallel: GOMAXPROCS callers on one client, so ns/op is the inverse of the
// throughput.
func BenchmarkRedisParallel(b *testing.B) { benchmarkRedis(b, true) }
