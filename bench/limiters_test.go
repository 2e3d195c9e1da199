package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	fsrl "github.com/failsafe-go/failsafe-go/ratelimiter"
	uber "go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/resilience4go/resilience4go/ratelimit"
)

// The limits of the benchmarks, the same for every library: "admitted" is a billion permits
// per second with a burst as large (a call takes far longer than 1ns, so every call is
// admitted); "rejected" is one permit per 1000 hours, drained before the timer starts.
const (
	admitPermits = 1_000_000_000
	admitPeriod  = time.Second
	rejectPeriod = 1000 * time.Hour
)

func oursAdmitting(b *testing.B) *ratelimit.Limiter {
	b.Helper()
	l, err := ratelimit.New(ratelimit.Permits(admitPermits), ratelimit.Period(admitPeriod))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func oursRejecting(b *testing.B) *ratelimit.Limiter {
	b.Helper()
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(rejectPeriod))
	if err != nil {
		b.Fatal(err)
	}
	if !l.TryAcquire() {
		b.Fatal("the first permit was refused")
	}
	return l
}

// rate.Inf would return before the token arithmetic: a finite rate keeps the real path.
func rateAdmitting() *rate.Limiter {
	return rate.NewLimiter(rate.Limit(admitPermits), admitPermits)
}

func rateRejecting(b *testing.B) *rate.Limiter {
	b.Helper()
	l := rate.NewLimiter(rate.Every(rejectPeriod), 1)
	if !l.Allow() {
		b.Fatal("the first token was refused")
	}
	return l
}

// uber's Take never rejects: it sleeps until the call's turn. With a billion per second
// (and its default slack of 10) the turn has always come.
func uberAdmitting() uber.Limiter {
	return uber.New(admitPermits, uber.Per(admitPeriod))
}

// failsafe-go's smooth limiter, the one closest to GCRA: it tracks when the next permit is
// free and spaces permits evenly (one every 1ns here).
func failsafeAdmitting() fsrl.RateLimiter[int] {
	return fsrl.NewSmooth[int](admitPermits, admitPeriod)
}

func failsafeRejecting(b *testing.B) fsrl.RateLimiter[int] {
	b.Helper()
	l := fsrl.NewSmooth[int](1, rejectPeriod)
	if !l.TryAcquirePermit() {
		b.Fatal("the first permit was refused")
	}
	return l
}

// reportMisses reports the calls whose outcome was not the benchmark's (an "admitted"
// benchmark's call that was rejected, or the reverse) as miss/op, when there were any.
func reportMisses(b *testing.B, misses int64) {
	if misses > 0 {
		b.ReportMetric(float64(misses)/float64(b.N), "miss/op")
	}
}

// BenchmarkLimiter measures one permit taken from each limiter on its own, by one goroutine.
func BenchmarkLimiter(b *testing.B) {
	ctx := context.Background()

	b.Run("resilience4go/TryAcquire/admitted", func(b *testing.B) {
		l := oursAdmitting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if !l.TryAcquire() {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("resilience4go/TryAcquire/rejected", func(b *testing.B) {
		l := oursRejecting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if l.TryAcquire() {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("resilience4go/Acquire/admitted", func(b *testing.B) {
		l := oursAdmitting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if l.Acquire(ctx) != nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})

	b.Run("rate/Allow/admitted", func(b *testing.B) {
		l := rateAdmitting()
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if !l.Allow() {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("rate/Allow/rejected", func(b *testing.B) {
		l := rateRejecting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if l.Allow() {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("rate/Wait/admitted", func(b *testing.B) {
		l := rateAdmitting()
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if l.Wait(ctx) != nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})

	b.Run("uber/Take/admitted", func(b *testing.B) {
		l := uberAdmitting()
		b.ReportAllocs()
		for b.Loop() {
			l.Take()
		}
	})

	b.Run("failsafe/TryAcquirePermit/admitted", func(b *testing.B) {
		l := failsafeAdmitting()
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if !l.TryAcquirePermit() {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("failsafe/TryAcquirePermit/rejected", func(b *testing.B) {
		l := failsafeRejecting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if l.TryAcquirePermit() {
				misses++
			}
		}
		reportMisses(b, misses)
	})
}

// BenchmarkLimiterParallel is BenchmarkLimiter with one goroutine per processor sharing
// each limiter (-cpu sets how many).
func BenchmarkLimiterParallel(b *testing.B) {
	b.Run("resilience4go/TryAcquire/admitted", func(b *testing.B) {
		l := oursAdmitting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if !l.TryAcquire() {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("resilience4go/TryAcquire/rejected", func(b *testing.B) {
		l := oursRejecting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if l.TryAcquire() {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("resilience4go/Acquire/admitted", func(b *testing.B) {
		l := oursAdmitting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			var m int64
			for pb.Next() {
				if l.Acquire(ctx) != nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})

	b.Run("rate/Allow/admitted", func(b *testing.B) {
		l := rateAdmitting()
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if !l.Allow() {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("rate/Allow/rejected", func(b *testing.B) {
		l := rateRejecting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if l.Allow() {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("rate/Wait/admitted", func(b *testing.B) {
		l := rateAdmitting()
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			var m int64
			for pb.Next() {
				if l.Wait(ctx) != nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})

	b.Run("uber/Take/admitted", func(b *testing.B) {
		l := uberAdmitting()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Take()
			}
		})
	})

	b.Run("failsafe/TryAcquirePermit/admitted", func(b *testing.B) {
		l := failsafeAdmitting()
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if !l.TryAcquirePermit() {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("failsafe/TryAcquirePermit/rejected", func(b *testing.B) {
		l := failsafeRejecting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if l.TryAcquirePermit() {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
}
