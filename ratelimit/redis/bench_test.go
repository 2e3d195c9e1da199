package redis_test

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// The cost of a call through the Redis backend: one EVALSHA round trip to the tests'
// server. "bounded" is a client with ContextTimeoutEnabled, which bounds its own I/O;
// "guarded" is one without, whose calls the backend runs on a goroutine to bound them.
// The comparison with github.com/go-redis/redis_rate is in the bench module.
func BenchmarkTryAcquire(b *testing.B) {
	for _, kind := range []struct {
		name    string
		bounded bool
	}{{"bounded", true}, {"guarded", false}} {
		for _, path := range []struct {
			name    string
			permits int
			period  time.Duration
			want    bool
		}{{"admitted", 1_000_000_000, time.Second, true}, {"rejected", 1, 1000 * time.Hour, false}} {
			b.Run(kind.name+"/"+path.name, func(b *testing.B) {
				c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(b), DB: testDB, ContextTimeoutEnabled: kind.bounded})
				b.Cleanup(func() { _ = c.Close() })
				be, err := rlredis.New(c, rlredis.Prefix(uniquePrefix(b)))
				if err != nil {
					b.Fatal(err)
				}
				l, err := ratelimit.New(ratelimit.Name("bench"), ratelimit.Permits(path.permits),
					ratelimit.Period(path.period), ratelimit.WithBackend(be))
				if err != nil {
					b.Fatal(err)
				}
				if !path.want {
					l.TryAcquire()
				}
				if l.TryAcquire() != path.want {
					b.Fatalf("want admitted=%v", path.want)
				}
				b.ReportAllocs()
				for b.Loop() {
					if l.TryAcquire() != path.want {
						b.Fatalf("want admitted=%v", path.want)
					}
				}
			})
		}
	}
}
