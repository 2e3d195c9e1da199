package bench

import (
	"context"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	fsretry "github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
	"github.com/resilience4go/resilience4go/resilience"
)

// The retry budget's benchmarks: one call through a retry of at most 3 attempts, no delay,
// behind a retry budget, in each library the way its documentation shows.
//
//   - "admitted": the function succeeds at once. The budget counts the call and nothing
//     else: the path of every healthy call. Ours counts it in its window (a lock, a clock
//     read); failsafe-go's counts it as an execution in flight (two atomic adds).
//   - "retried": the function fails once, then succeeds; the budget allows the retry (ours
//     with a ratio of 1, so that each call's one retry is always allowed; failsafe-go's
//     with a max rate of 1, its one retry in flight never over it).
//
// Ours is resilience.Wrap1 with a retry and a budget; failsafe-go's is
// failsafe.With(retrypolicy built WithBudget(budget)), called with Get. Both are built once.

// BenchmarkRetryBudget measures one call through a retry behind a budget, by one goroutine.
func BenchmarkRetryBudget(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		fails int
	}{{"admitted", 0}, {"retried", 1}} {
		b.Run("resilience4go/Wrap1/"+c.name, func(b *testing.B) {
			fn := flaky(c.fails)
			call, err := resilience.Wrap1(newRegistry(b), "Bench.RetryBudget",
				func(context.Context, int) (int, error) { return fn() },
				resilience.Retry(retry.MaxAttempts(retryAttempts), retry.Delay(0)),
				resilience.RetryBudget(retrybudget.Ratio(1)))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(ctx, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("failsafe/Get/"+c.name, func(b *testing.B) {
			fn := flaky(c.fails)
			budget := fsbudget.NewBuilder().WithMaxRate(1).Build()
			exec := failsafe.With[int](fsretry.NewBuilder[int]().WithMaxAttempts(retryAttempts).WithBudget(budget).Build())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Get(fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRetryBudgetParallel is BenchmarkRetryBudget's admitted case with one goroutine
// per processor calling through the same retry and budget (-cpu sets how many).
func BenchmarkRetryBudgetParallel(b *testing.B) {
	ctx := context.Background()
	ok := func() (int, error) { return 1, nil }
	b.Run("resilience4go/Wrap1/admitted", func(b *testing.B) {
		call, err := resilience.Wrap1(newRegistry(b), "Bench.RetryBudget",
			func(context.Context, int) (int, error) { return ok() },
			resilience.Retry(retry.MaxAttempts(retryAttempts), retry.Delay(0)),
			resilience.RetryBudget(retrybudget.Ratio(1)))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := call(ctx, 1); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("failsafe/Get/admitted", func(b *testing.B) {
		budget := fsbudget.NewBuilder().WithMaxRate(1).Build()
		exec := failsafe.With[int](fsretry.NewBuilder[int]().WithMaxAttempts(retryAttempts).WithBudget(budget).Build())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := exec.Get(ok); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
