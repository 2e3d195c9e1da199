package retry_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/retry"
)

func benchRetry(b *testing.B, opts ...retry.Option) *retry.Retry {
	r, err := retry.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// The admitted path: the first attempt succeeds.
func BenchmarkSuccess(b *testing.B) {
	call := retry.DecorateFunc(benchRetry(b), func(context.Context, struct{}) (int, error) { return 1, nil })
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, struct{}{})
		}
	})
}

// The rejected path: an error that is never retried (an open breaker's, SPEC CO-4).
func BenchmarkNeverRetried(b *testing.B) {
	err := openError{never: true}
	call := retry.DecorateFunc(benchRetry(b), func(context.Context, struct{}) (int, error) { return 0, err })
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, struct{}{})
		}
	})
}

// Three attempts, all failing, with the waits passing on a manual clock.
func BenchmarkExhausted(b *testing.B) {
	r := benchRetry(b, retry.WithClock(clock.NewManual()))
	call := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) { return 0, errBoom })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, struct{}{})
	}
}

// An asynchronous call whose first attempt is already complete.
func BenchmarkAsyncSuccess(b *testing.B) {
	done := async.Completed(1)
	call := retry.DecorateAsyncFunc(benchRetry(b), func(context.Context, struct{}) *async.Future[int] { return done })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = call(ctx, struct{}{})
	}
}

// An asynchronous call retried on timers: each attempt fails at once until the third.
func BenchmarkAsyncRetried(b *testing.B) {
	clk := clock.NewManual()
	r := benchRetry(b, retry.WithClock(clk))
	failed, ok := async.Failed[int](errBoom), async.Completed(1)
	n := 0
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		n++
		if n%3 == 0 {
			return ok
		}
		return failed
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, struct{}{})
		clk.Advance(r.Config().Delay)
		clk.Advance(r.Config().Delay)
		if _, done, _ := f.Result(); !done {
			b.Fatal("not done")
		}
	}
}

// Three attempts, the first two refused by a rate limiter (nextpermit.Error) whose next
// permit sets the wait (WaitForPermit), on a manual clock.
func BenchmarkWaitForPermit(b *testing.B) {
	r := benchRetry(b, retry.WithClock(clock.NewManual()), retry.WaitForPermit(true))
	rej := &throttled{id: "api", next: time.Second, ok: true}
	n := 0
	call := retry.DecorateFunc(r.PermitsFrom(retry.PermitSource{Limiter: "api"}), func(context.Context, struct{}) (int, error) {
		n++
		if n%3 != 0 {
			return 0, rej
		}
		return 1, nil
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, struct{}{})
	}
}
