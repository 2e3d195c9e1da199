package bench

import (
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/ratelimit"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// Leases (rlredis.Leases): a limiter on the Redis backend reserves its permits in
// batches and decides its calls in-process from them. A hot limit, 10⁴ per second, which
// the benchmark's callers offer far more than (every decision is timed, admitted or
// refused), three ways: resilience4go's TryAcquire with leases of 200ms on the Redis
// server at REDIS_ADDR, the same limiter in-process (no backend), and redis_rate's Allow
// (one script run per call). scripts/op and roundtrips/op are as in redis_test.go: with
// leases, a small fraction of a script run per decision.

// hotPermits is the benchmarks' limit per second.
const hotPermits = 10_000

// anyVerdict makes a decision whose verdict the benchmark does not check.
func anyVerdict(f func() bool) func() bool { return func() bool { f(); return true } }

// leaseLife is the life of the benchmarks' leases.
const leaseLife = 200 * time.Millisecond

// leasedLimiter returns a limiter with leases on its own key, once its leases follow its
// rate: it is called until its backend has leased permits (at most 5s), and then for 3
// lease lives, in which the size of its leases grows to its rate.
func leasedLimiter(b *testing.B, c *goredis.Client) *ratelimit.Limiter {
	b.Helper()
	be, err := rlredis.New(c, rlredis.Prefix("bench:lease:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":"),
		rlredis.Timeout(time.Second), rlredis.Leases(leaseLife))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	l, err := ratelimit.New(ratelimit.Name("limiter"), ratelimit.Permits(hotPermits), ratelimit.Period(time.Second),
		ratelimit.WithBackend(be))
	if err != nil {
		b.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); be.Leases().Leased == 0; {
		if time.Now().After(end) {
			b.Fatal("no lease after 5s")
		}
		l.TryAcquire()
	}
	for end := time.Now().Add(3 * leaseLife); time.Now().Before(end); {
		l.TryAcquire()
	}
	return l
}

func benchmarkLease(b *testing.B, parallel bool) {
	c := redisClient(b)
	b.Run("resilience4go/TryAcquire/leased", func(b *testing.B) {
		l := leasedLimiter(b, c)
		measure(b, c, parallel, anyVerdict(l.TryAcquire), true)
	})
	b.Run("resilience4go/TryAcquire/inprocess", func(b *testing.B) {
		l, err := ratelimit.New(ratelimit.Permits(hotPermits), ratelimit.Period(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		measure(b, c, parallel, anyVerdict(l.TryAcquire), true)
	})
	b.Run("redis_rate/Allow/admitted", func(b *testing.B) {
		allow, _ := redisRate(c, hotPermits, time.Second)
		measure(b, c, parallel, anyVerdict(allow), true)
	})
}

// BenchmarkLease: one caller at a time, so ns/op is the latency of one decision.
func BenchmarkLease(b *testing.B) { benchmarkLease(b, false) }

// BenchmarkLeaseParallel: GOMAXPROCS callers on one limiter, so ns/op is the inverse of
// the throughput.
func BenchmarkLeaseParallel(b *testing.B) { benchmarkLease(b, true) }
