package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

func mustNew(b *testing.B, opts ...hedge.Option) *hedge.Hedge {
	b.Helper()
	h, err := hedge.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

var answered = async.Completed(42)

// answer is a dependency whose future is already complete with a success.
func answer(context.Context, int) *async.Future[int] { return answered }

// Attempt 1 succeeds at once: the call returns its future as it is.
func BenchmarkHedge_FirstAttemptWins(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []hedge.Option
	}{
		{"budget", nil},
		{"nobudget", []hedge.Option{hedge.Budget(false)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call := hedge.DecorateAsyncFunc(mustNew(b, bc.opts...), answer)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if v, _, err := call(ctx, 1).Result(); err != nil || v != 42 {
					b.Fatal(v, err)
				}
			}
		})
	}
}

// The same from every processor, sharing one hedge's budget.
func BenchmarkHedge_FirstAttemptWinsParallel(b *testing.B) {
	call := hedge.DecorateAsyncFunc(mustNew(b), answer)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, _, err := call(ctx, 1).Result(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A call that hedges: attempt 1 never answers, the hedge started after the delay (on a
// manual clock) wins at once.
func BenchmarkHedge_HedgeWins(b *testing.B) {
	clk := clock.NewManual()
	h := mustNew(b, hedge.WithClock(clk), hedge.Budget(false))
	n := 0
	call := hedge.DecorateAsyncFunc(h, func(context.Context, int) *async.Future[int] {
		if n++; n%2 == 1 {
			f, _ := async.NewPromise[int]()
			return f
		}
		return answered
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, 1)
		clk.Advance(time.Second)
		if _, _, err := f.Result(); err != nil {
			b.Fatal(err)
		}
	}
}
