package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

func mustNew(b *testing.B, d time.Duration, opts ...timeout.Option) *timeout.Timeout {
	b.Helper()
	to, err := timeout.New(d, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return to
}

// A call that returns in time, on the System clock (the runtime's timer context).
func BenchmarkSyncInTime(b *testing.B) {
	to := mustNew(b, time.Second)
	call := timeout.DecorateFunc(to, func(ctx context.Context, n int) (int, error) { return n, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSyncInTimeParallel(b *testing.B) {
	to := mustNew(b, time.Second)
	call := timeout.DecorateFunc(to, func(ctx context.Context, n int) (int, error) { return n, nil })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := call(ctx, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A call that returns in time, on a manual clock (the clock's timer).
func BenchmarkSyncInTimeManual(b *testing.B) {
	to := mustNew(b, time.Second, timeout.WithClock(clock.NewManual()))
	call := timeout.DecorateFunc(to, func(ctx context.Context, n int) (int, error) { return n, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// A call that runs past its deadline (the manual clock moves inside it).
func BenchmarkSyncTimedOut(b *testing.B) {
	clk := clock.NewManual()
	to := mustNew(b, time.Millisecond, timeout.WithClock(clk))
	call := timeout.DecorateFunc(to, func(ctx context.Context, n int) (int, error) {
		clk.Advance(2 * time.Millisecond)
		return n, nil
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err == nil {
			b.Fatal("no timeout")
		}
	}
}

// An async call whose future is already complete.
func BenchmarkAsyncInTime(b *testing.B) {
	to := mustNew(b, time.Second)
	done := async.Completed(1)
	call := timeout.DecorateAsyncFunc(to, func(ctx context.Context, n int) *async.Future[int] { return done })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1).Await(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
