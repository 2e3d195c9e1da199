package bulkhead_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

func mustNew(b *testing.B, opts ...bulkhead.Option) *bulkhead.Bulkhead {
	b.Helper()
	bh, err := bulkhead.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return bh
}

func echo(_ context.Context, n int) (int, error) { return n, nil }

// An admitted call: a slot is free.
func BenchmarkSyncAdmitted(b *testing.B) {
	call := bulkhead.DecorateFunc(mustNew(b, bulkhead.MaxConcurrent(1)), echo)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// Admitted calls from every processor, with enough slots for all of them.
func BenchmarkSyncAdmittedParallel(b *testing.B) {
	call := bulkhead.DecorateFunc(mustNew(b, bulkhead.MaxConcurrent(1024)), echo)
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

// A call rejected at once: every slot is taken and MaxWait is 0.
func BenchmarkSyncRejected(b *testing.B) {
	bh := mustNew(b, bulkhead.MaxConcurrent(1))
	call := bulkhead.DecorateFunc(bh, echo)
	bh.TryAcquire()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err == nil {
			b.Fatal("admitted")
		}
	}
}

func BenchmarkSyncRejectedParallel(b *testing.B) {
	bh := mustNew(b, bulkhead.MaxConcurrent(1))
	call := bulkhead.DecorateFunc(bh, echo)
	bh.TryAcquire()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := call(ctx, 1); err == nil {
				b.Error("admitted")
				return
			}
		}
	})
}

// Calls contending for few slots, waiting for them in the queue (System clock).
func BenchmarkSyncContendedWaiting(b *testing.B) {
	call := bulkhead.DecorateFunc(mustNew(b, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Minute)), echo)
	b.ReportAllocs()
	b.SetParallelism(4)
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

// An admitted async call whose future is already complete.
func BenchmarkAsyncAdmitted(b *testing.B) {
	done := async.Completed(1)
	call := bulkhead.DecorateAsyncFunc(mustNew(b, bulkhead.MaxConcurrent(1)),
		func(context.Context, int) *async.Future[int] { return done })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		call(ctx, 1)
	}
}

// An async call rejected at once.
func BenchmarkAsyncRejected(b *testing.B) {
	bh := mustNew(b, bulkhead.MaxConcurrent(1))
	call := bulkhead.DecorateAsyncFunc(bh, func(context.Context, int) *async.Future[int] { return nil })
	bh.TryAcquire()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		call(ctx, 1)
	}
}
