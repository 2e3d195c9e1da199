package adaptivelimit_test

import (
	"context"
	"testing"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

func mustNew(b *testing.B, opts ...adaptivelimit.Option) *adaptivelimit.Limiter {
	b.Helper()
	l, err := adaptivelimit.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func echo(_ context.Context, n int) (int, error) { return n, nil }

// An admitted synchronous call, on the system clock: the compare-and-swap that lets it
// in, two clock reads, the one that counts it out and its sample for the algorithm. The
// limit is pinned high, so that no call is rejected whatever the algorithm makes of the
// samples, which it still receives.
func BenchmarkAdaptiveLimit_Admitted(b *testing.B) {
	for _, algo := range []string{adaptivelimit.Vegas, adaptivelimit.Gradient2, adaptivelimit.AIMD} {
		pinned := []adaptivelimit.Option{adaptivelimit.UseAlgorithm(algo), adaptivelimit.MinLimit(1024),
			adaptivelimit.MaxLimit(1024), adaptivelimit.InitialLimit(1024)}
		b.Run(string(algo)+"/serial", func(b *testing.B) {
			call := adaptivelimit.DecorateFunc(mustNew(b, pinned...), echo)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(ctx, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(algo)+"/parallel", func(b *testing.B) {
			call := adaptivelimit.DecorateFunc(mustNew(b, pinned...), echo)
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
		})
	}
}

// The direct API: TryAcquire and Record.
func BenchmarkAdaptiveLimit_Permit(b *testing.B) {
	l := mustNew(b, adaptivelimit.MinLimit(1024), adaptivelimit.MaxLimit(1024), adaptivelimit.InitialLimit(1024))
	b.ReportAllocs()
	for b.Loop() {
		p, ok := l.TryAcquire()
		if !ok {
			b.Fatal("rejected")
		}
		p.Record(nil)
	}
}

// A call rejected at once: the limit is taken and MaxWait is 0.
func BenchmarkAdaptiveLimit_Rejected(b *testing.B) {
	l := mustNew(b, adaptivelimit.MinLimit(1), adaptivelimit.MaxLimit(1), adaptivelimit.InitialLimit(1))
	call := adaptivelimit.DecorateFunc(l, echo)
	held, _ := l.TryAcquire()
	defer held.Release()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, 1); err == nil {
			b.Fatal("admitted")
		}
	}
}

// An admitted async call whose future is already complete.
func BenchmarkAdaptiveLimit_AsyncAdmitted(b *testing.B) {
	done := async.Completed(1)
	call := adaptivelimit.DecorateAsyncFunc(mustNew(b, adaptivelimit.MinLimit(1024), adaptivelimit.MaxLimit(1024),
		adaptivelimit.InitialLimit(1024)), func(context.Context, int) *async.Future[int] { return done })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		call(ctx, 1)
	}
}
