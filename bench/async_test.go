package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsrl "github.com/failsafe-go/failsafe-go/ratelimiter"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// result is what the goroutine of the plain Go peer sends back on its channel.
type result[T any] struct {
	v   T
	err error
}

// goChan is the plain Go way of running fn on a goroutine and waiting for its result: a
// goroutine and a buffered channel carrying (T, error), awaited with a select that also
// honours ctx, as a real caller must.
func goChan[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	ch := make(chan result[T], 1)
	go func() {
		v, err := fn(ctx)
		ch <- result[T]{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// BenchmarkAsync measures one call run on a goroutine of its own and awaited, with
// context.Background(); every side runs echo1 (returns 1, nil) on a new goroutine and
// waits for its result:
//   - resilience4go/Go+Await: async.Go(ctx, echo1), then Await(ctx) on its future;
//   - resilience4go/WrapAsync/ratelimiter/Go+Await: the same function (async.Go around
//     echo1) wrapped by resilience.WrapAsync with one layer, a rate limiter that admits
//     every call (1e9 permits a second), then Await(ctx);
//   - goroutine/chan: the plain Go peer, goChan: a goroutine, a buffered channel of
//     (int, error), and a select on the channel and ctx.Done();
//   - goroutine/chan/ratelimiter: the fair peer of the WrapAsync case, the same work by
//     hand: the Acquire(ctx) of a limiter configured alike (1e9 permits a second, made
//     once), then goChan;
//   - resilience4go/WrapAsync/ratelimiter/Completed+Await: the WrapAsync case around a
//     function that returns a future already complete (made once), so that what is
//     measured is the composition and the limiter, with no goroutine;
//   - failsafe/GetAsync: failsafe-go's executor with a smooth rate limiter of 1e9 permits
//     a second (made once), GetAsync(one) and Get on its result: failsafe-go runs the
//     execution on a goroutine of its own.
func BenchmarkAsync(b *testing.B) { benchmarkAsync(b, false) }

// BenchmarkAsyncParallel is BenchmarkAsync with one goroutine per processor.
func BenchmarkAsyncParallel(b *testing.B) { benchmarkAsync(b, true) }

func benchmarkAsync(b *testing.B, parallel bool) {
	b.Run("resilience4go/Go+Await", func(b *testing.B) {
		measureCalls(b, parallel, func(ctx context.Context) error {
			_, err := async.Go(ctx, echo1).Await(ctx)
			return err
		})
	})
	b.Run("resilience4go/WrapAsync/ratelimiter/Go+Await", func(b *testing.B) {
		call := oursAsync(b, resilience.RateLimiter(ratelimit.Permits(admitPermits), ratelimit.Period(admitPeriod)))
		measureCalls(b, parallel, func(ctx context.Context) error { _, err := call(ctx).Await(ctx); return err })
	})
	b.Run("resilience4go/WrapAsync/ratelimiter/Completed+Await", func(b *testing.B) {
		completed := async.Completed(1)
		call, err := resilience.WrapAsync(newRegistry(b), "Bench.Call",
			func(context.Context) *async.Future[int] { return completed },
			resilience.RateLimiter(ratelimit.Permits(admitPermits), ratelimit.Period(admitPeriod)))
		if err != nil {
			b.Fatal(err)
		}
		measureCalls(b, parallel, func(ctx context.Context) error { _, err := call(ctx).Await(ctx); return err })
	})
	b.Run("goroutine/chan", func(b *testing.B) {
		measureCalls(b, parallel, func(ctx context.Context) error { _, err := goChan(ctx, echo1); return err })
	})
	b.Run("goroutine/chan/ratelimiter", func(b *testing.B) {
		l := oursAdmitting(b)
		measureCalls(b, parallel, func(ctx context.Context) error {
			if err := l.Acquire(ctx); err != nil {
				return err
			}
			_, err := goChan(ctx, echo1)
			return err
		})
	})
	b.Run("failsafe/GetAsync", func(b *testing.B) {
		exec := failsafe.With[int](fsrl.NewSmooth[int](admitPermits, admitPeriod))
		measureCalls(b, parallel, func(context.Context) error { _, err := exec.GetAsync(one).Get(); return err })
	})
}

// BenchmarkAsyncLayers measures what BenchmarkAsync's WrapAsync case measures with other
// single layers that admit the call at once, for reference (no peer): a retry of 3
// attempts 500ms apart (the call succeeds at once), a count-based circuit breaker (closed),
// a bulkhead of 25 slots, a timeout of 1 minute, and the four policies of the wrapped
// benchmarks composed (retry, breaker, limiter, bulkhead). Each runs async.Go(ctx, echo1)
// and awaits the future.
func BenchmarkAsyncLayers(b *testing.B) {
	layers := []struct {
		name  string
		specs []resilience.Spec
	}{
		{"retry", []resilience.Spec{resilience.Retry(retry.MaxAttempts(retryAttempts), retry.Delay(retryDelay))}},
		{"circuitbreaker", []resilience.Spec{resilience.CircuitBreaker(
			circuitbreaker.FailureRateThreshold(breakerPercent),
			circuitbreaker.SlidingWindowSize(breakerWindow),
			circuitbreaker.MinimumCalls(breakerWindow),
			circuitbreaker.WaitInOpen(breakerWait))}},
		{"bulkhead", []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(bulkheadSlots))}},
		{"timeout", []resilience.Spec{resilience.Timeout(time.Minute)}},
		{"four", []resilience.Spec{
			resilience.Retry(retry.MaxAttempts(retryAttempts), retry.Delay(retryDelay)),
			resilience.CircuitBreaker(
				circuitbreaker.FailureRateThreshold(breakerPercent),
				circuitbreaker.SlidingWindowSize(breakerWindow),
				circuitbreaker.MinimumCalls(breakerWindow),
				circuitbreaker.WaitInOpen(breakerWait)),
			resilience.RateLimiter(ratelimit.Permits(admitPermits), ratelimit.Period(admitPeriod)),
			resilience.Bulkhead(bulkhead.MaxConcurrent(bulkheadSlots)),
		}},
	}
	for _, l := range layers {
		b.Run("resilience4go/WrapAsync/"+l.name+"/Go+Await", func(b *testing.B) {
			call := oursAsync(b, l.specs...)
			measureCalls(b, false, func(ctx context.Context) error { _, err := call(ctx).Await(ctx); return err })
		})
	}
}

// BenchmarkAsyncCancelable is BenchmarkAsync's first and third cases with a context that
// can end (context.WithCancel of context.Background(), made once), for reference: the
// derived context async.Go gives its function then has a parent to follow, and Await
// has a context to wait on besides the future.
func BenchmarkAsyncCancelable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("resilience4go/Go+Await", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := async.Go(ctx, echo1).Await(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goroutine/chan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := goChan(ctx, echo1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func oursAsync(b *testing.B, specs ...resilience.Spec) func(context.Context) *async.Future[int] {
	b.Helper()
	call, err := resilience.WrapAsync(newRegistry(b), "Bench.Call",
		func(ctx context.Context) *async.Future[int] { return async.Go(ctx, echo1) }, specs...)
	if err != nil {
		b.Fatal(err)
	}
	return call
}
