package bench

import (
	"context"
	"flag"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fshedge "github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/resilience"
)

// hedgeDelay is long enough that no hedge starts: what is measured is an admitted call
// whose first attempt answers, the path every call of a healthy dependency takes.
const hedgeDelay = time.Second

// profileOnly, when set, names the one benchmark (as b.Name() gives it) that measureCalls
// runs; it skips the others. bench/profile sets it because go test's -bench pattern cannot
// leave out a benchmark whose name is a prefix of the one asked for: "goroutine/chan"
// matches the pattern of "goroutine/chan/ratelimiter" partly, and a benchmark that loops
// with b.Loop then runs in full, in the same profile.
var profileOnly = flag.String("profile.only", "", "run only the measureCalls benchmark of this full name")

// measureCalls runs call b.N times, by one goroutine or, when parallel, by one per processor,
// and reports the calls that failed as misses.
func measureCalls(b *testing.B, parallel bool, call func(context.Context) error) {
	b.Helper()
	if *profileOnly != "" && b.Name() != *profileOnly {
		b.Skip("not the benchmark -profile.only names")
	}
	b.ReportAllocs()
	if !parallel {
		ctx := context.Background()
		var misses int64
		for b.Loop() {
			if call(ctx) != nil {
				misses++
			}
		}
		reportMisses(b, misses)
		return
	}
	var misses atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var m int64
		for pb.Next() {
			if call(ctx) != nil {
				m++
			}
		}
		misses.Add(m)
	})
	reportMisses(b, misses.Load())
}

// BenchmarkHedge measures one admitted call through a hedge whose first attempt answers:
// ours (resilience.WrapAsync with a hedge) against failsafe-go's hedgepolicy through its
// executor, each with a delay of 1s and at most 2 attempts. failsafe-go runs each attempt
// on a goroutine of its own and returns when it answers; "ours/go" does the same, hedging
// a synchronous function through async.Go (the documented idiom) and awaiting its future;
// "ours/future" hedges a function that returns a future already complete.
func BenchmarkHedge(b *testing.B) { benchmarkHedge(b, false) }

// BenchmarkHedgeParallel is BenchmarkHedge with one goroutine per processor.
func BenchmarkHedgeParallel(b *testing.B) { benchmarkHedge(b, true) }

func benchmarkHedge(b *testing.B, parallel bool) {
	b.Run("resilience4go/WrapAsync/hedge/go", func(b *testing.B) {
		call := oursHedged(b, func(ctx context.Context) *async.Future[int] { return async.Go(ctx, echo1) })
		measureCalls(b, parallel, func(ctx context.Context) error { _, err := call(ctx).Await(ctx); return err })
	})
	b.Run("resilience4go/WrapAsync/hedge/future", func(b *testing.B) {
		call := oursHedged(b, func(context.Context) *async.Future[int] { return async.Completed(1) })
		measureCalls(b, parallel, func(ctx context.Context) error { _, err := call(ctx).Await(ctx); return err })
	})
	b.Run("failsafe/Get/hedge", func(b *testing.B) {
		exec := failsafe.With[int](fshedge.NewBuilderWithDelay[int](hedgeDelay).WithMaxHedges(1).Build())
		measureCalls(b, parallel, func(context.Context) error { _, err := exec.Get(one); return err })
	})
}

func echo1(context.Context) (int, error) { return 1, nil }

func oursHedged(b *testing.B, fn func(context.Context) *async.Future[int]) func(context.Context) *async.Future[int] {
	b.Helper()
	call, err := resilience.WrapAsync(newRegistry(b), "Bench.Call", fn,
		resilience.Hedge(hedge.Delay(hedgeDelay), hedge.MaxAttempts(2)))
	if err != nil {
		b.Fatal(err)
	}
	return call
}
