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
				be, err := rlredis.New(c, rlredis.Prefix(rlredis.UniquePrefix(b)))
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

// The cost of a call that finds freed slots: the script reads and parses them. "none" is
// a refused call with no freed slot; "16 freed" one with the most freed slots a limiter
// keeps, none of which it can take (a bounded client).
func BenchmarkTryAcquireWithFreedSlots(b *testing.B) {
	for _, freed := range []int{0, 16} {
		b.Run(map[int]string{0: "none", 16: "16 freed"}[freed], func(b *testing.B) {
			c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(b), DB: testDB, ContextTimeoutEnabled: true})
			b.Cleanup(func() { _ = c.Close() })
			be, err := rlredis.New(c, rlredis.Prefix(rlredis.UniquePrefix(b)))
			if err != nil {
				b.Fatal(err)
			}
			l, err := ratelimit.New(ratelimit.Name("bench"), ratelimit.Permits(1), ratelimit.Period(1000*time.Hour),
				ratelimit.MaxWait(1<<62), ratelimit.WithBackend(be))
			if err != nil {
				b.Fatal(err)
			}
			rs := make([]ratelimit.Reservation, 2*freed+2)
			for i := range rs {
				if rs[i], err = l.Reserve(); err != nil {
					b.Fatal(err)
				}
			}
			for i := 1; i < 2*freed; i += 2 {
				rs[i].Cancel()
			}
			if l.TryAcquire() {
				b.Fatal("want refused")
			}
			b.ReportAllocs()
			for b.Loop() {
				if l.TryAcquire() {
					b.Fatal("want refused")
				}
			}
		})
	}
}

// The cost of further windows on Redis: an admitted TryAcquire with Permits per Period
// alone ("1 window"), and with 2 further windows ("3 windows"), each in a key of its own
// that the same script run reads and writes: one round trip either way (a bounded client).
func BenchmarkTryAcquireWindows(b *testing.B) {
	for _, w := range []struct{ name, windows string }{
		{"1 window", ""}, {"3 windows", "1000000000/1m, 1000000000/1h"},
	} {
		b.Run(w.name, func(b *testing.B) {
			c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(b), DB: testDB, ContextTimeoutEnabled: true})
			b.Cleanup(func() { _ = c.Close() })
			// A generous timeout: a loaded machine must not send the calls to the
			// failure policy, which would measure the in-process fallback instead.
			be, err := rlredis.New(c, rlredis.Prefix(rlredis.UniquePrefix(b)), rlredis.Timeout(5*time.Second))
			if err != nil {
				b.Fatal(err)
			}
			l, err := ratelimit.New(ratelimit.Name("bench"), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second),
				ratelimit.Windows(w.windows), ratelimit.WithBackend(be))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if !l.TryAcquire() {
					b.Fatal("want admitted")
				}
			}
		})
	}
}
