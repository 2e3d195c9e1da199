package fallback_test

import (
	"context"
	"testing"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

func benchFallback(b *testing.B, opts ...fallback.Option) *fallback.Fallback[int] {
	f, err := fallback.New(func(context.Context, error) (int, error) { return -1, nil }, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// The admitted path: the call succeeds.
func BenchmarkSuccess(b *testing.B) {
	call := fallback.DecorateFunc(benchFallback(b), func(context.Context, struct{}) (int, error) { return 1, nil })
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, struct{}{})
		}
	})
}

// The call fails and the fallback replaces its error.
func BenchmarkHandled(b *testing.B) {
	call := fallback.DecorateFunc(benchFallback(b), func(context.Context, struct{}) (int, error) { return 0, errBoom })
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, struct{}{})
		}
	})
}

// The call fails with an error that passes through.
func BenchmarkIgnored(b *testing.B) {
	call := fallback.DecorateFunc(benchFallback(b, fallback.IgnoreOn(errBoom)),
		func(context.Context, struct{}) (int, error) { return 0, errBoom })
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = call(ctx, struct{}{})
		}
	})
}

// An asynchronous call whose future fails later and is replaced.
func BenchmarkAsyncHandled(b *testing.B) {
	call := fallback.DecorateAsyncFunc(benchFallback(b), func(context.Context, struct{}) *async.Future[int] {
		f, complete := async.NewPromise[int]()
		complete(0, errBoom)
		return f
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = call(ctx, struct{}{})
	}
}
