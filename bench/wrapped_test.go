package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsbh "github.com/failsafe-go/failsafe-go/bulkhead"
	fscb "github.com/failsafe-go/failsafe-go/circuitbreaker"
	fsretry "github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// The wrapped function: as cheap as a function can be, so that what is measured is the
// policies around it.
func echo(_ context.Context, n int) (int, error) { return n, nil }

func one() (int, error) { return 1, nil }

// The four policies, configured alike in both libraries: a retry of 3 attempts 500ms apart
// (never used: the function succeeds), a count-based circuit breaker that opens at 50%
// failures over the last 100 calls and waits 60s open, the rate limiter, and a bulkhead of 25
// concurrent calls that rejects at once when full. Both compose them in the same order,
// outermost first: retry, breaker, limiter, bulkhead.
const (
	retryAttempts  = 3
	retryDelay     = 500 * time.Millisecond
	breakerPercent = 50
	breakerWindow  = 100
	breakerWait    = 60 * time.Second
	bulkheadSlots  = 25
)

func newRegistry(b *testing.B) *resilience.Registry {
	b.Helper()
	r, err := resilience.NewRegistry()
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func oursWrapped(b *testing.B, permits int, period time.Duration) func(context.Context, int) (int, error) {
	b.Helper()
	call, err := resilience.Wrap1(newRegistry(b), "Bench.Call", echo,
		resilience.RateLimiter(ratelimit.Permits(permits), ratelimit.Period(period)))
	if err != nil {
		b.Fatal(err)
	}
	return call
}

func oursWrappedAdmitting(b *testing.B) func(context.Context, int) (int, error) {
	return oursWrapped(b, admitPermits, admitPeriod)
}

func oursWrappedRejecting(b *testing.B) func(context.Context, int) (int, error) {
	b.Helper()
	call := oursWrapped(b, 1, rejectPeriod)
	if _, err := call(context.Background(), 1); err != nil {
		b.Fatal(err)
	}
	return call
}

func oursFour(b *testing.B) func(context.Context, int) (int, error) {
	b.Helper()
	call, err := resilience.Wrap1(newRegistry(b), "Bench.Call", echo,
		resilience.Retry(retry.MaxAttempts(retryAttempts), retry.Delay(retryDelay)),
		resilience.CircuitBreaker(
			circuitbreaker.FailureRateThreshold(breakerPercent),
			circuitbreaker.SlidingWindowSize(breakerWindow),
			circuitbreaker.MinimumCalls(breakerWindow),
			circuitbreaker.WaitInOpen(breakerWait)),
		resilience.RateLimiter(ratelimit.Permits(admitPermits), ratelimit.Period(admitPeriod)),
		resilience.Bulkhead(bulkhead.MaxConcurrent(bulkheadSlots)))
	if err != nil {
		b.Fatal(err)
	}
	return call
}

func failsafeWrappedAdmitting() failsafe.Executor[int] {
	return failsafe.With[int](failsafeAdmitting())
}

func failsafeWrappedRejecting(b *testing.B) failsafe.Executor[int] {
	return failsafe.With[int](failsafeRejecting(b))
}

func failsafeFour() failsafe.Executor[int] {
	return failsafe.With[int](
		fsretry.NewBuilder[int]().WithMaxAttempts(retryAttempts).WithDelay(retryDelay).Build(),
		fscb.NewBuilder[int]().WithFailureThresholdRatio(breakerPercent, breakerWindow).WithDelay(breakerWait).Build(),
		failsafeAdmitting(),
		fsbh.New[int](bulkheadSlots))
}

// BenchmarkWrapped measures one call of a wrapped function, by one goroutine: ours
// (resilience.Wrap1) against failsafe-go's executor (failsafe.With(...).Get), with a rate
// limiter alone ("ratelimiter") and with the four policies ("four").
func BenchmarkWrapped(b *testing.B) {
	ctx := context.Background()

	b.Run("resilience4go/Wrap1/ratelimiter/admitted", func(b *testing.B) {
		call := oursWrappedAdmitting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if _, err := call(ctx, 1); err != nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("resilience4go/Wrap1/ratelimiter/rejected", func(b *testing.B) {
		call := oursWrappedRejecting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if _, err := call(ctx, 1); err == nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("resilience4go/Wrap1/four/admitted", func(b *testing.B) {
		call := oursFour(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if _, err := call(ctx, 1); err != nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})

	b.Run("failsafe/Get/ratelimiter/admitted", func(b *testing.B) {
		exec := failsafeWrappedAdmitting()
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if _, err := exec.Get(one); err != nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("failsafe/Get/ratelimiter/rejected", func(b *testing.B) {
		exec := failsafeWrappedRejecting(b)
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if _, err := exec.Get(one); err == nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})
	b.Run("failsafe/Get/four/admitted", func(b *testing.B) {
		exec := failsafeFour()
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if _, err := exec.Get(one); err != nil {
				misses++
			}
		}
		reportMisses(b, misses)
	})
}

// BenchmarkWrappedParallel is BenchmarkWrapped with one goroutine per processor calling the
// same wrapped function.
func BenchmarkWrappedParallel(b *testing.B) {
	b.Run("resilience4go/Wrap1/ratelimiter/admitted", func(b *testing.B) {
		call := oursWrappedAdmitting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			var m int64
			for pb.Next() {
				if _, err := call(ctx, 1); err != nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("resilience4go/Wrap1/ratelimiter/rejected", func(b *testing.B) {
		call := oursWrappedRejecting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			var m int64
			for pb.Next() {
				if _, err := call(ctx, 1); err == nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("resilience4go/Wrap1/four/admitted", func(b *testing.B) {
		call := oursFour(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			var m int64
			for pb.Next() {
				if _, err := call(ctx, 1); err != nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})

	b.Run("failsafe/Get/ratelimiter/admitted", func(b *testing.B) {
		exec := failsafeWrappedAdmitting()
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if _, err := exec.Get(one); err != nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("failsafe/Get/ratelimiter/rejected", func(b *testing.B) {
		exec := failsafeWrappedRejecting(b)
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if _, err := exec.Get(one); err == nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
	b.Run("failsafe/Get/four/admitted", func(b *testing.B) {
		exec := failsafeFour()
		var misses atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var m int64
			for pb.Next() {
				if _, err := exec.Get(one); err != nil {
					m++
				}
			}
			misses.Add(m)
		})
		reportMisses(b, misses.Load())
	})
}
