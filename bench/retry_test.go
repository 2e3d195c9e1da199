package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	retrygo "github.com/avast/retry-go/v4"
	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	fsretry "github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
)

// The retry benchmarks: one call of a function through a retry of at most 3 attempts, in
// each library the way its documentation shows.
//
//   - "success": the function succeeds at once; the retry is configured with 500ms between
//     attempts, never used. This is the cost a retry adds to every healthy call.
//   - "retried": the function fails twice with a retryable error, then succeeds; the delay
//     between attempts is 0 in every library, so that what is measured is the retry's own
//     bookkeeping, not a timer.
//
// Ours is built once with resilience.Wrap1. failsafe-go's executor is built once with
// failsafe.With(retrypolicy) and called with Get. avast/retry-go's DoWithData and
// cenkalti/backoff's Retry take their options on every call: the option slice is built
// once, before the timer, as a caller would keep it.

var errTransient = errors.New("bench: transient")

// flaky returns a function that fails fails times in a row, then succeeds, and starts
// over: every call through a retry of at least fails+1 attempts sees the same case.
func flaky(fails int) func() (int, error) {
	n := 0
	return func() (int, error) {
		if n++; n <= fails {
			return 0, errTransient
		}
		n = 0
		return 1, nil
	}
}

func failsafeRetry(delay time.Duration) failsafe.Executor[int] {
	rb := fsretry.NewBuilder[int]().WithMaxAttempts(retryAttempts)
	if delay > 0 {
		rb = rb.WithDelay(delay)
	}
	return failsafe.With[int](rb.Build())
}

func retryGoOptions(ctx context.Context, delay time.Duration) []retrygo.Option {
	return []retrygo.Option{retrygo.Attempts(retryAttempts), retrygo.Delay(delay),
		retrygo.DelayType(retrygo.FixedDelay), retrygo.Context(ctx), retrygo.LastErrorOnly(true)}
}

func backoffOptions(delay time.Duration) []backoff.RetryOption {
	return []backoff.RetryOption{backoff.WithMaxTries(retryAttempts),
		backoff.WithBackOff(backoff.NewConstantBackOff(delay))}
}

// retryCase is one benchmarked case: how many attempts fail before the one that succeeds,
// and the delay between attempts.
type retryCase struct {
	name  string
	fails int
	delay time.Duration
}

var retryCases = []retryCase{{"success", 0, retryDelay}, {"retried", 2, 0}}

// BenchmarkRetry measures one call through a retry, by one goroutine.
func BenchmarkRetry(b *testing.B) { benchmarkRetry(b, false) }

// BenchmarkRetryParallel measures the same with GOMAXPROCS goroutines sharing the retry
// (each goroutine has its own flaky function).
func BenchmarkRetryParallel(b *testing.B) { benchmarkRetry(b, true) }

func benchmarkRetry(b *testing.B, parallel bool) {
	ctx := context.Background()
	for _, c := range retryCases {
		// Each library gets a function per goroutine, so that the failures are the case's.
		run := func(b *testing.B, call func(fn func() (int, error)) (int, error)) {
			b.ReportAllocs()
			if !parallel {
				fn := flaky(c.fails)
				for b.Loop() {
					if _, err := call(fn); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.RunParallel(func(pb *testing.PB) {
				fn := flaky(c.fails)
				for pb.Next() {
					if _, err := call(fn); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		b.Run("resilience4go/Wrap1/"+c.name, func(b *testing.B) {
			// One wrapped function per goroutine (each around its own flaky function), all
			// built from one spec in one registry, so that they share one retry.
			reg := newRegistry(b)
			spec := resilience.Retry(retry.MaxAttempts(retryAttempts), retry.Delay(c.delay))
			wrap := func(fn func() (int, error)) func(context.Context, int) (int, error) {
				call, err := resilience.Wrap1(reg, "Bench.Retry", func(context.Context, int) (int, error) { return fn() }, spec)
				if err != nil {
					b.Fatal(err)
				}
				return call
			}
			b.ReportAllocs()
			if !parallel {
				call := wrap(flaky(c.fails))
				for b.Loop() {
					if _, err := call(ctx, 1); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			calls := make(chan func(context.Context, int) (int, error), 64)
			for range cap(calls) {
				calls <- wrap(flaky(c.fails))
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				call := <-calls
				for pb.Next() {
					if _, err := call(ctx, 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("failsafe/Get/"+c.name, func(b *testing.B) {
			ex := failsafeRetry(c.delay)
			run(b, func(fn func() (int, error)) (int, error) { return ex.Get(fn) })
		})
		b.Run("retry-go/DoWithData/"+c.name, func(b *testing.B) {
			opts := retryGoOptions(ctx, c.delay)
			run(b, func(fn func() (int, error)) (int, error) { return retrygo.DoWithData(fn, opts...) })
		})
		b.Run("backoff/Retry/"+c.name, func(b *testing.B) {
			opts := backoffOptions(c.delay)
			run(b, func(fn func() (int, error)) (int, error) { return backoff.Retry(ctx, fn, opts...) })
		})
	}
}
