package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

func search(ctx context.Context, q string) (string, error) { return q, nil }

// wrapped returns search wrapped with a rate limiter that always admits (a billion
// permits per second) or always rejects, and the limiter itself.
func wrapped(b *testing.B, admit bool, specs ...resilience.Spec) (func(context.Context, string) (string, error), *ratelimit.Limiter) {
	reg, err := resilience.NewRegistry()
	if err != nil {
		b.Fatal(err)
	}
	rl := resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(1000*time.Hour))
	if admit {
		rl = resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	}
	call, err := resilience.Wrap1(reg, "SearchAPI.Search", search, append(specs, rl)...)
	if err != nil {
		b.Fatal(err)
	}
	h, err := reg.RateLimiter("SearchAPI.Search")
	if err != nil {
		b.Fatal(err)
	}
	l := h.(*ratelimit.Limiter)
	if !admit {
		l.TryAcquire()
	}
	return call, l
}

func benchCall(b *testing.B, call func(context.Context, string) (string, error), wantErr bool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, "q"); (err != nil) != wantErr {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrap1Admitted(b *testing.B) {
	call, _ := wrapped(b, true)
	benchCall(b, call, false)
}

func BenchmarkWrap1Rejected(b *testing.B) {
	call, _ := wrapped(b, false)
	benchCall(b, call, true)
}

// The direct TryAcquire on the same limiters, for the ratio of Wrap1's overhead.
func BenchmarkDirectTryAcquireAdmitted(b *testing.B) {
	_, l := wrapped(b, true)
	b.ReportAllocs()
	for b.Loop() {
		if !l.TryAcquire() {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkDirectTryAcquireRejected(b *testing.B) {
	_, l := wrapped(b, false)
	b.ReportAllocs()
	for b.Loop() {
		if l.TryAcquire() {
			b.Fatal("admitted")
		}
	}
}

func fullSpecs() []resilience.Spec {
	return []resilience.Spec{
		resilience.Retry(retry.MaxAttempts(3), retry.AbortOn(ratelimit.ErrExceeded)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(ratelimit.ErrExceeded)),
		resilience.Bulkhead(bulkhead.MaxConcurrent(100)),
	}
}

// Retry, circuit breaker, rate limiter and bulkhead around one call.
func BenchmarkFullPipelineAdmitted(b *testing.B) {
	call, _ := wrapped(b, true, fullSpecs()...)
	benchCall(b, call, false)
}

func BenchmarkFullPipelineRejected(b *testing.B) {
	call, _ := wrapped(b, false, fullSpecs()...)
	benchCall(b, call, true)
}

func BenchmarkFullPipelineAdmittedParallel(b *testing.B) {
	call, _ := wrapped(b, true, fullSpecs()...)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, "q")
		}
	})
}

// wrappedAsync returns a function returning a future already complete, wrapped by
// WrapAsync with a rate limiter that always admits, in a registry with the options given.
func wrappedAsync(b *testing.B, opts ...resilience.RegistryOption) func(context.Context) *async.Future[string] {
	reg, err := resilience.NewRegistry(opts...)
	if err != nil {
		b.Fatal(err)
	}
	done := async.Completed("q")
	call, err := resilience.WrapAsync(reg, "SearchAPI.SearchAsync",
		func(context.Context) *async.Future[string] { return done },
		resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)))
	if err != nil {
		b.Fatal(err)
	}
	return call
}

func benchAsyncCall(b *testing.B, call func(context.Context) *async.Future[string]) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx).Await(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// WrapAsync's own cost: a rate limiter that admits around a future already complete,
// awaited; to be read against BenchmarkWrap1Admitted.
func BenchmarkWrapAsyncCompleted(b *testing.B) { benchAsyncCall(b, wrappedAsync(b)) }

// BenchmarkWrapAsyncCompleted with an observer that records nothing.
func BenchmarkWrapAsyncCompletedObserved(b *testing.B) {
	benchAsyncCall(b, wrappedAsync(b, resilience.WithObserver(contracttest.NopObserver{})))
}
