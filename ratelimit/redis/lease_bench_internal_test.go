package redis

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// BenchmarkLeasedAdmitted: TryAcquire admitted from a lease, and an in-process limiter's
// at the same rate, admitted from its burst (every decision is an admission, both ways).
// The rate, 10⁸ permits per 10⁴s (T = 100µs), has a burst that no run of the benchmark
// drains, and a lease of all of it, whose slots pass at 10⁴ a second, far fewer than the
// calls take. Run with -cpu 1,2 for the parallel runs' contention. The refused decisions
// of a hot limit are in the bench module (BenchmarkLease).
func BenchmarkLeasedAdmitted(b *testing.B) {
	const permits, period = 100_000_000, 10_000 * time.Second
	for _, leasedPath := range []bool{true, false} {
		name := "inprocess"
		if leasedPath {
			name = "leased"
		}
		for _, parallel := range []bool{false, true} {
			mode := "serial"
			if parallel {
				mode = "parallel"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				opts := []ratelimit.Option{ratelimit.Name("x"), ratelimit.Permits(permits), ratelimit.Period(period)}
				c := &capture{}
				if leasedPath {
					c.Backend = benchLeased(b)
					opts = append(opts, ratelimit.WithBackend(c))
				}
				l, err := ratelimit.New(opts...)
				if err != nil {
					b.Fatal(err)
				}
				if leasedPath {
					st := c.st
					if !st.lz.busy.CompareAndSwap(false, true) {
						b.Fatal("a lease on its way")
					}
					st.reserveLease(backend.Request{N: permits, MaxWait: st.b.cfg.Lease, Permits: permits, Period: period})
					if st.lz.cur.Load() == nil {
						b.Fatal("no lease")
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				if parallel {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if !l.TryAcquire() {
								b.Error("refused")
								return
							}
						}
					})
				} else {
					for b.Loop() {
						if !l.TryAcquire() {
							b.Fatal("refused")
						}
					}
				}
				b.StopTimer()
				if leasedPath {
					b.ReportMetric(float64(c.st.lz.cur.Load().usedNow())/float64(b.N), "leased/op")
				}
			})
		}
	}
}

// benchLeased returns a backend with leases of an hour on a client of its own.
func benchLeased(b *testing.B) *Backend {
	b.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(b), DB: scheduleDB, ContextTimeoutEnabled: true})
	b.Cleanup(func() { _ = c.Close() })
	be, err := New(c, Prefix(UniquePrefix(b)), Leases(time.Hour), Timeout(2*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	return be
}
